import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";

/**
 * Smartsheet's OpenAPI description as the team's reference data keeps it (`subset.json`, with its
 * Error Code List; see its NOTICE.md). It lives beside the checkout, never in it: the first
 * `shared/reference/smartsheet-openapi/subset.json` up from the repository, or none (a fresh clone).
 */
export const REFERENCE_FILE = findReference();

interface Reference {
    operations: Record<string, { responses: Record<string, { schema?: unknown }> }>;
    objects: Record<string, unknown>;
    errorCodes: Array<{ status: number; errorCode: number | string; message: string; alternatives?: string[] }>;
    errorEnvelope: unknown;
}

let loaded: Reference | undefined;

function reference(): Reference {
    if (!REFERENCE_FILE) throw new Error("no Smartsheet OpenAPI reference beside the checkout");
    loaded ??= JSON.parse(readFileSync(REFERENCE_FILE, "utf8")) as Reference;
    return loaded;
}

function findReference(): string | undefined {
    for (let dir = path.resolve(__dirname, "..", ".."); ; dir = path.dirname(dir)) {
        const candidate = path.join(dir, "shared", "reference", "smartsheet-openapi", "subset.json");
        if (existsSync(candidate)) return candidate;
        if (path.dirname(dir) === dir) return undefined;
    }
}

/**
 * Where `body` breaks the 200 response schema of `operation` ("PUT /sheets/{sheetId}"), read as
 * OpenAPI 3.0 (the reference's specNotes: "nullable admits null"). No response field is required
 * there, so a missing field is never an issue: the behaviour tests pin presence.
 */
export function responseIssues(operation: string, body: unknown): string[] {
    const schema = reference().operations[operation]?.responses["200"]?.schema;
    if (schema === undefined) throw new Error(`the reference has no 200 response for ${operation}`);
    return issuesOf(schema, body);
}

/**
 * Where `value` breaks one of the reference's objects ("Column"). The operations' own response
 * schemas are trimmed (the columns' list only id, index, title, type, options, validation, width),
 * so the attributes past those are checked here.
 */
export function objectIssues(name: string, value: unknown): string[] {
    const schema = reference().objects[name];
    if (schema === undefined) throw new Error(`the reference has no object ${name}`);
    return issuesOf(schema, value);
}

/** Where an error body breaks the error envelope the reference's operations declare (BulkItemFailure.error). */
export function errorEnvelopeIssues(body: unknown): string[] {
    return issuesOf(reference().errorEnvelope, body);
}

/** Whether the Error Code List has this status, code and message; `{0}`-style placeholders match any text. */
export function isListedError(status: number, errorCode: number, message: string): boolean {
    return reference().errorCodes.some(
        (entry) =>
            entry.status === status &&
            entry.errorCode === errorCode &&
            [entry.message, ...(entry.alternatives ?? [])].some((template) => templatePattern(template).test(message)),
    );
}

function templatePattern(template: string): RegExp {
    const parts = template.split(/\{\d+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    return new RegExp(`^${parts.join(".*")}$`, "s");
}

function issuesOf(schema: unknown, body: unknown): string[] {
    const result = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0], { defaultTarget: "openapi-3.0" }).safeParse(body);
    return result.success ? [] : result.error.issues.map((issue) => `${issue.path.join(".") || "(body)"}: ${issue.message}`);
}
