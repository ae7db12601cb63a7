import type { RpcTypedData } from "../worker/coreTypes";

/**
 * The script host's ApplyBindingData on a trigger input (WorkerFunctionInvoker.TransformInput):
 * when the input is a string holding a JSON object, each top-level property that is not an
 * array becomes binding data, replacing the value of a trigger metadata entry of the same name
 * (case-insensitively, the entry keeps its spelling): objects as JSON, scalars as strings (Json.NET's `True`/`False`), nulls
 * skipped. So `{orderId}` in an output path, and `context.triggerMetadata.orderId`, work for a
 * queue message `{"orderId": 7}` as on Azure.
 */
export function withJsonInputProperties(metadata: Record<string, RpcTypedData> | undefined, input: string): Record<string, RpcTypedData> | undefined {
    const trimmed = input.trim();
    if (!trimmed.startsWith("{") || !trimmed.endsWith("}")) return metadata;
    let parsed: unknown;
    try {
        parsed = JSON.parse(trimmed);
    } catch {
        return metadata;
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return metadata;
    const result: Record<string, RpcTypedData> = { ...metadata };
    for (const [name, value] of Object.entries(parsed as Record<string, unknown>)) {
        if (value === null || value === undefined || Array.isArray(value)) continue;
        // A case-insensitive dictionary keeps the first spelling of a name and replaces its value.
        const key = Object.keys(result).find((existing) => existing.toLowerCase() === name.toLowerCase()) ?? name;
        result[key] = typeof value === "object" ? { json: JSON.stringify(value) } : { string: typeof value === "boolean" ? (value ? "True" : "False") : String(value) };
    }
    return result;
}
