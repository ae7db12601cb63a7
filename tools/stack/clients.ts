/**
 * How harnesses (bench, chaos, end-to-end tests, the local stack) talk to what they run: the app's
 * HTTP API with its function key, and Smartsheet as a person (or another integration) would.
 */

/** Calls the app's HTTP API (`/api/…`) at `hostUrl` with its function key (and `headers`, under the call's own). */
export function appApi(hostUrl: string, functionKey: string, headers: Record<string, string> = {}): (pathAndQuery: string, init?: RequestInit) => Promise<Response> {
    return (pathAndQuery, init = {}) =>
        fetch(`${hostUrl}/api/${pathAndQuery.replace(/^\//, "")}`, {
            ...init,
            headers: { "x-functions-key": functionKey, ...headers, ...(init.headers as Record<string, string> | undefined) },
        });
}

/** A Smartsheet REST call with `token`, answered JSON; any answer but 2xx is an error naming the call and the answer. */
export function smartsheetAs(baseUrl: string, token: string): <T = unknown>(method: string, pathAndQuery: string, body?: unknown) => Promise<T> {
    return async <T>(method: string, pathAndQuery: string, body?: unknown) => {
        const response = await fetch(new URL(pathAndQuery, baseUrl), {
            method,
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        const text = await response.text();
        if (!response.ok) throw new Error(`${method} ${pathAndQuery} answered ${response.status}: ${text}`);
        return JSON.parse(text) as T;
    };
}
