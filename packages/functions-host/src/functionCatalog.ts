import { describeStorageBinding, type StorageBinding } from "./bindings/storageBindings";
import { unsupportedBindings, unsupportedBindingsError } from "./bindings/supportedBindings";
import type { AppSettings } from "./config/appSettings";
import { parseSchedule, type Schedule } from "./schedule/ncrontab";
import { parseRouteTemplate, type RouteTemplate } from "./http/routeTemplate";
import { retryPolicyOf, type RetryPolicy } from "./triggers/retryPolicy";
import type { CapturedFunction } from "./worker/coreApi";
import type { RpcBindingInfo } from "./worker/coreTypes";

export type AuthLevel = "anonymous" | "function" | "admin";

/** One function as `GET /admin/functions` lists it. */
export interface RegisteredFunctionInfo {
    name: string;
    trigger: string;
    route?: string;
    methods?: string[];
    authLevel?: AuthLevel;
    schedule?: string;
    queueName?: string;
    disabled?: boolean;
}

export interface QueueBindingTarget {
    bindingName: string;
    queueName: string;
    connection: string | undefined;
}

/** A registered function with its binding expressions resolved, ready for the triggers to use. */
export interface HostFunction {
    name: string;
    captured: CapturedFunction;
    triggerBindingName: string;
    triggerType: string;
    trigger: RpcBindingInfo;
    disabled: boolean;
    http?: { route: string; template: RouteTemplate; methods: string[]; authLevel: AuthLevel; outputBindingName?: string };
    timer?: { schedule: Schedule; runOnStartup: boolean };
    queueTrigger?: QueueBindingTarget & { dataType?: string };
    durableClientBindings: string[];
    queueOutputs: QueueBindingTarget[];
    /** Blob and table inputs and outputs. */
    storageBindings: StorageBinding[];
    /** The function-level retry policy (`retry`); the host applies it to timer triggers, as the runtime does. */
    retry?: RetryPolicy;
    info: RegisteredFunctionInfo;
}

const HTTP_METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE"]);

/**
 * Builds the host's view of every captured registration. A function whose bindings the host does
 * not implement, or cannot resolve (e.g. a missing %SETTING%), is reported through `onError`
 * naming it and each such binding, and left out: it never runs and never has a binding silently
 * dropped. The real host does the same with a binding type no installed extension registers
 * (the function is in error, "Error indexing method"), and runs the others.
 */
export function buildCatalog(
    captured: Iterable<CapturedFunction>,
    settings: AppSettings,
    options: { timeZone?: string; onError: (functionName: string, error: Error) => void },
): HostFunction[] {
    const result: HostFunction[] = [];
    for (const fn of captured) {
        const unsupported = unsupportedBindings(fn);
        if (unsupported.length > 0) {
            options.onError(fn.metadata.name, unsupportedBindingsError(unsupported));
            continue;
        }
        try {
            result.push(describe(fn, settings, options.timeZone));
        } catch (error) {
            options.onError(fn.metadata.name, error as Error);
        }
    }
    return result.sort((a, b) => a.name.localeCompare(b.name));
}

function describe(fn: CapturedFunction, settings: AppSettings, timeZone: string | undefined): HostFunction {
    const name = fn.metadata.name;
    const bindings = Object.entries(fn.metadata.bindings);
    const triggerEntry = bindings.find(([, b]) => typeof b.type === "string" && /trigger$/i.test(b.type));
    if (!triggerEntry) throw new Error(`Function '${name}' has no trigger binding.`);
    const [triggerBindingName, trigger] = triggerEntry;
    const triggerType = String(trigger.type);
    const what = (property: string) => `Function '${name}' binding property '${property}'`;
    const resolve = (value: unknown, property: string): string | undefined =>
        typeof value === "string" ? settings.resolve(value, what(property)) : undefined;

    const hostFn: HostFunction = {
        name,
        captured: fn,
        triggerBindingName,
        triggerType,
        trigger,
        disabled: settings.isFunctionDisabled(name),
        durableClientBindings: [],
        queueOutputs: [],
        storageBindings: [],
        info: { name, trigger: triggerType },
    };
    const retry = retryPolicyOf(name, fn.metadata.retryOptions);
    if (retry) hostFn.retry = retry;

    for (const [bindingName, binding] of bindings) {
        const type = String(binding.type ?? "").toLowerCase();
        if (binding.direction === "in" && (type === "durableclient" || type === "orchestrationclient")) hostFn.durableClientBindings.push(bindingName);
        if (binding.direction === "out" && type === "queue") {
            const queueName = resolve(binding.queueName, "queueName");
            if (!queueName) throw new Error(`${what("queueName")} is missing on the storageQueue output binding '${bindingName}'.`);
            hostFn.queueOutputs.push({ bindingName, queueName: queueName.toLowerCase(), connection: resolve(binding.connection, "connection") });
        }
        const storage = /trigger$/i.test(type) ? undefined : describeStorageBinding(name, bindingName, binding, resolve);
        if (storage) hostFn.storageBindings.push(storage);
    }

    switch (triggerType.toLowerCase()) {
        case "httptrigger": {
            const route = resolve(trigger.route, "route") ?? name;
            const methods = (Array.isArray(trigger.methods) ? (trigger.methods as unknown[]) : ["GET", "POST"]).map((m) => String(m).toUpperCase());
            for (const method of methods) if (!HTTP_METHODS.has(method)) throw new Error(`Function '${name}' lists an unknown HTTP method '${method}'.`);
            const authLevel = String(trigger.authLevel ?? "anonymous").toLowerCase();
            if (authLevel !== "anonymous" && authLevel !== "function" && authLevel !== "admin") {
                throw new Error(`Function '${name}' has authLevel '${authLevel}'; use anonymous, function or admin.`);
            }
            const output = bindings.find(([, b]) => b.direction === "out" && String(b.type).toLowerCase() === "http");
            hostFn.http = { route, template: parseRouteTemplate(route), methods, authLevel, outputBindingName: output?.[0] };
            Object.assign(hostFn.info, { route, methods, authLevel });
            break;
        }
        case "timertrigger": {
            const expression = resolve(trigger.schedule, "schedule");
            if (!expression) throw new Error(`${what("schedule")} is missing.`);
            hostFn.timer = { schedule: parseSchedule(expression, timeZone), runOnStartup: trigger.runOnStartup === true || trigger.runOnStartup === "true" };
            hostFn.info.schedule = expression;
            break;
        }
        case "queuetrigger": {
            const queueName = resolve(trigger.queueName, "queueName");
            if (!queueName) throw new Error(`${what("queueName")} is missing.`);
            hostFn.queueTrigger = {
                bindingName: triggerBindingName,
                queueName: queueName.toLowerCase(),
                connection: resolve(trigger.connection, "connection"),
                dataType: typeof trigger.dataType === "string" ? trigger.dataType : undefined,
            };
            hostFn.info.queueName = hostFn.queueTrigger.queueName;
            break;
        }
        default:
            break;
    }
    if (hostFn.disabled) hostFn.info.disabled = true;
    return hostFn;
}
