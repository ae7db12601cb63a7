import { randomUUID } from "node:crypto";
import type { RpcTypedData } from "../worker/coreTypes";

/**
 * The trigger's binding data, keyed case-insensitively as the host's binding data dictionary
 * is: the first spelling of a name is kept, later values replace earlier ones.
 */
export class BindingData {
    readonly #entries = new Map<string, { name: string; value: unknown }>();

    static fromTriggerMetadata(metadata: Record<string, RpcTypedData> | null | undefined): BindingData {
        const data = new BindingData();
        for (const [name, typed] of Object.entries(metadata ?? {})) data.set(name, fromTypedData(typed));
        return data;
    }

    set(name: string, value: unknown): void {
        const key = name.toLowerCase();
        const existing = this.#entries.get(key);
        this.#entries.set(key, { name: existing?.name ?? name, value });
    }

    has(name: string): boolean {
        return this.#entries.has(name.toLowerCase());
    }

    get(name: string): unknown {
        return this.#entries.get(name.toLowerCase())?.value;
    }

    entries(): [string, unknown][] {
        return [...this.#entries.values()].map((e) => [e.name, e.value]);
    }
}

export class BindingExpressionError extends Error {}

/** True when `template` holds `{...}` expressions that need trigger data. */
export function hasBindingExpressions(template: string): boolean {
    return /\{[^{}]+\}/.test(template.replace(/\{\{|\}\}/g, ""));
}

/**
 * Resolves `{name}`, `{name.property}`, `{rand-guid}` and `{datetime}` in a binding property the
 * way the WebJobs binding templates do (`{{` and `}}` are literal braces). A name the trigger
 * data does not have fails with the host's message, "No value for named parameter 'x'."
 */
export function resolveBindingExpressions(template: string, data: BindingData): string {
    return template.replace(/\{\{|\}\}|\{([^{}]*)\}/g, (token, expression: string | undefined) => {
        if (token === "{{") return "{";
        if (token === "}}") return "}";
        return resolveExpression((expression ?? "").trim(), data);
    });
}

/** resolveBindingExpressions for one binding's property, failing with the host's "Exception binding parameter" wording. */
export function resolveBindingProperty(functionName: string, bindingName: string, template: string, data: BindingData): string {
    try {
        return resolveBindingExpressions(template, data);
    } catch (error) {
        if (error instanceof BindingExpressionError) throw new BindingExpressionError(`Exception binding parameter '${bindingName}' of function '${functionName}': ${error.message}`);
        throw error;
    }
}

function resolveExpression(expression: string, data: BindingData): string {
    const [head, format] = splitFormat(expression);
    const lower = head.toLowerCase();
    if (lower === "rand-guid") return format?.toUpperCase() === "N" ? randomUUID().replace(/-/g, "") : randomUUID();
    if (lower === "datetime") {
        if (format !== undefined) throw new BindingExpressionError(`The binding expression '{${expression}}' uses a date format; the local host only resolves '{datetime}' (yyyy-MM-ddTHH-mm-ssZ).`);
        return new Date().toISOString().replace(/\.\d{3}Z$/, "Z").replace(/:/g, "-");
    }
    const [name, ...path] = head.split(".");
    if (!name || !data.has(name)) throw new BindingExpressionError(`No value for named parameter '${head}'.`);
    let value = data.get(name);
    for (const property of path) {
        value = propertyOf(value, property);
        if (value === undefined) throw new BindingExpressionError(`No value for named parameter '${head}'.`);
    }
    if (value === null || value === undefined) throw new BindingExpressionError(`No value for named parameter '${head}'.`);
    if (typeof value === "string") return value;
    if (typeof value === "boolean") return value ? "True" : "False";
    if (typeof value === "number") return String(value);
    return JSON.stringify(value);
}

function splitFormat(expression: string): [string, string | undefined] {
    const colon = expression.indexOf(":");
    return colon < 0 ? [expression, undefined] : [expression.slice(0, colon), expression.slice(colon + 1)];
}

function propertyOf(value: unknown, property: string): unknown {
    if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
    const wanted = property.toLowerCase();
    for (const [key, inner] of Object.entries(value)) if (key.toLowerCase() === wanted) return inner;
    return undefined;
}

/** A trigger metadata value as the host holds it: strings stay strings, JSON is parsed. */
function fromTypedData(typed: RpcTypedData | null | undefined): unknown {
    if (!typed) return undefined;
    if (typeof typed.string === "string") return typed.string;
    if (typeof typed.json === "string") {
        try {
            return JSON.parse(typed.json) as unknown;
        } catch {
            return typed.json;
        }
    }
    if (typeof typed.int === "number") return typed.int;
    if (typeof typed.double === "number") return typed.double;
    if (typed.bytes) return Buffer.from(typed.bytes).toString("utf8");
    return undefined;
}
