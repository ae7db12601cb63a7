import type { CapturedFunction } from "../worker/coreApi";

/**
 * Every binding type the local host implements, by direction (types compared
 * case-insensitively, as the host does). A function using anything else is refused when the app
 * loads: a binding the host cannot fire, feed or write must not be accepted and silently dropped.
 */
const SUPPORTED: Record<"trigger" | "in" | "out", ReadonlySet<string>> = {
    trigger: new Set(["httptrigger", "timertrigger", "queuetrigger", "orchestrationtrigger", "activitytrigger", "entitytrigger"]),
    in: new Set(["durableclient", "orchestrationclient", "blob", "table"]),
    out: new Set(["http", "queue", "blob", "table"]),
};

const WHAT_IS_SUPPORTED =
    "The local host supports HTTP, timer, storage-queue and durable triggers; durableClient, storage blob and table inputs; HTTP, storage-queue, blob and table outputs.";

/** One line per binding the host does not implement, naming the function, the binding and its type; empty when all are supported. */
export function unsupportedBindings(fn: CapturedFunction): string[] {
    const problems: string[] = [];
    for (const [bindingName, binding] of Object.entries(fn.metadata.bindings)) {
        const type = String(binding.type ?? "");
        const isTrigger = /trigger$/i.test(type);
        const direction = isTrigger ? "trigger" : binding.direction;
        const where = `Function '${fn.metadata.name}' binding '${bindingName}'`;
        if (direction !== "trigger" && direction !== "in" && direction !== "out") {
            problems.push(`${where} of type '${type}' has direction '${String(binding.direction)}'; the local host supports only "in" and "out".`);
        } else if (!SUPPORTED[direction].has(type.toLowerCase())) {
            const kind = direction === "trigger" ? "trigger" : direction === "in" ? "input" : "output";
            problems.push(`${where}: the ${kind} binding type '${type}' is not supported by the local host.`);
        } else if (hasSdkBinding(binding.properties)) {
            problems.push(`${where}: SDK-type bindings (sdkBinding / supportsDeferredBinding on '${type}') are not supported by the local host.`);
        }
    }
    return problems;
}

export function unsupportedBindingsError(problems: string[]): Error {
    return new Error(`It uses bindings the local Functions host does not implement:\n  ${problems.join("\n  ")}\n${WHAT_IS_SUPPORTED}`);
}

function hasSdkBinding(properties: unknown): boolean {
    if (!properties || typeof properties !== "object") return false;
    const value = (properties as Record<string, unknown>).supportsDeferredBinding;
    return value === true || value === "true";
}
