import { randomUUID } from "node:crypto";
import { BindingData } from "../bindings/bindingExpressions";
import type { RpcTypedData } from "../worker/coreTypes";

export interface HttpRequestFacts {
    functionName: string;
    url: URL;
    /** Lower-cased, repeated values joined (see flatHeaders). */
    headers: Record<string, string>;
    /** Route parameters that matched; optional ones that did not are absent. */
    params: Record<string, string>;
    /** The body when the host read it (a request with a Content-Length); undefined otherwise. */
    body?: Buffer;
}

/**
 * The trigger metadata the host sends with an HTTP invocation, built as the HTTP extension's
 * GetRequestBindingDataAsync builds the binding data: the top-level properties of a JSON
 * object body, then every query parameter but `code` (replacing body properties of the same
 * name, case-insensitively), then the route parameters, then `Query` and `Headers` (unless a
 * name above already took them), plus the WebJobs SDK's `sys`.
 *
 * Strings travel as rpc strings and objects/arrays as rpc JSON. In HTTP-streaming mode the
 * library builds `request.params` from every string entry except `Query` and `Headers`, so
 * query parameters and scalar body properties show up there too, as they do on Azure.
 */
export function httpTriggerMetadata(facts: HttpRequestFacts): Record<string, RpcTypedData> {
    const data = new BindingData();
    if (facts.body && facts.body.length > 0) {
        for (const [name, value] of jsonBodyProperties(facts.body.toString("utf8"))) data.set(name, value);
    }
    for (const name of new Set(facts.url.searchParams.keys())) {
        if (name.toLowerCase() === "code") continue;
        data.set(name, facts.url.searchParams.getAll(name).join(","));
    }
    for (const [name, value] of Object.entries(facts.params)) data.set(name, value);
    if (!data.has("Query")) data.set("Query", queryDictionary(facts.url));
    if (!data.has("Headers")) data.set("Headers", facts.headers);
    data.set("sys", { MethodName: facts.functionName, UtcNow: new Date().toISOString(), RandGuid: randomUUID() });

    const metadata: Record<string, RpcTypedData> = {};
    for (const [name, value] of data.entries()) metadata[name] = typeof value === "string" ? { string: value } : { json: JSON.stringify(value) };
    return metadata;
}

function queryDictionary(url: URL): Record<string, string> {
    const query: Record<string, string> = {};
    for (const name of new Set(url.searchParams.keys())) query[name] = url.searchParams.getAll(name).join(",");
    return query;
}

/**
 * The HTTP extension's Utility.ApplyBindingData: a body whose trimmed text is `{...}` is parsed
 * and each top-level property becomes binding data; objects and arrays stay structured,
 * scalars become strings as Json.NET casts them (`true` → "True"), nulls are skipped. Text that
 * is not a JSON object adds nothing.
 */
function jsonBodyProperties(text: string): [string, unknown][] {
    const trimmed = text.trim();
    if (!trimmed.startsWith("{") || !trimmed.endsWith("}")) return [];
    let parsed: unknown;
    try {
        parsed = JSON.parse(trimmed);
    } catch {
        return [];
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return [];
    const result: [string, unknown][] = [];
    for (const [name, value] of Object.entries(parsed as Record<string, unknown>)) {
        if (value === null || value === undefined) continue;
        if (typeof value === "object") result.push([name, value]);
        else if (typeof value === "boolean") result.push([name, value ? "True" : "False"]);
        else result.push([name, String(value)]);
    }
    return result;
}
