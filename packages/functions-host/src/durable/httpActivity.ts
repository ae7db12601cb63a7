import type { HistoryEvent } from "./historyEvent";
import type { SdkHttpRequest } from "./orchestratorActions";

/** What the orchestration trigger payload announces as defaultHttpAsyncRequestSleepTimeMillseconds. */
export const DEFAULT_HTTP_POLL_MS = 30_000;
const HTTP_TIMEOUT_MS = 100_000;

/** The DurableHttpResponse the built-in activity returns (what the SDK's callHttp yields). */
export interface HttpActivityResponse {
    statusCode: number;
    headers: Record<string, string>;
    content: string;
}

/** Why the host cannot run this callHttp request, or undefined. */
export function httpRequestProblem(request: SdkHttpRequest | undefined): string | undefined {
    if (!request || typeof request.uri !== "string") return "callHttp was given no request uri.";
    let url: URL;
    try {
        url = new URL(request.uri);
    } catch {
        return `callHttp: '${request.uri}' is not an absolute URL.`;
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") return `callHttp: only http and https URLs can be called, not '${url.protocol}'.`;
    if (request.tokenSource !== undefined && request.tokenSource !== null) {
        return "The local functions host does not emulate callHttp with a tokenSource (managed identity tokens); run this orchestration on the real Durable Functions host, or pass an Authorization header.";
    }
    return undefined;
}

function parse<T>(text: string | undefined): T | undefined {
    if (text === undefined || text === "") return undefined;
    try {
        return JSON.parse(text) as T;
    } catch {
        return undefined;
    }
}

function header(headers: Record<string, string> | undefined, name: string): string | undefined {
    if (!headers) return undefined;
    const key = Object.keys(headers).find((k) => k.toLowerCase() === name.toLowerCase());
    return key === undefined ? undefined : headers[key];
}

/**
 * The 202 polling pattern (DurableOrchestrationContext.CallHttpAsync): a 202 answer with a
 * Location header, to a request with asynchronousPatternEnabled, is polled again after Retry-After
 * seconds (or the default 30 s). Returns when and where to poll, or undefined when the call is done.
 */
export function httpPollAfter(op: HistoryEvent, completed: HistoryEvent): { delayMs: number; location: string } | undefined {
    const request = parse<SdkHttpRequest>(op.Input);
    const response = parse<HttpActivityResponse>(completed.Result);
    if (!request || request.asynchronousPatternEnabled === false || !response || response.statusCode !== 202) return undefined;
    const location = header(response.headers, "Location");
    if (!location) return undefined;
    const retryAfter = Number.parseInt(header(response.headers, "Retry-After") ?? "", 10);
    return { delayMs: Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter * 1000 : DEFAULT_HTTP_POLL_MS, location: new URL(location, request.uri).href };
}

/**
 * CreateLocationPollRequest: a GET of the Location, with the original headers except
 * x-functions-key, and without Authorization/Cookie when the Location is on another origin.
 */
export function locationPollRequest(op: HistoryEvent, location: string): SdkHttpRequest {
    const request = parse<SdkHttpRequest>(op.Input) ?? { method: "GET", uri: location };
    const sameOrigin = new URL(location).origin === new URL(request.uri).origin;
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(request.headers ?? {})) {
        const lower = name.toLowerCase();
        if (lower === "x-functions-key") continue;
        if (!sameOrigin && (lower === "authorization" || lower === "cookie")) continue;
        headers[name] = value;
    }
    return { method: "GET", uri: location, headers, asynchronousPatternEnabled: request.asynchronousPatternEnabled };
}

/** Runs the built-in HTTP activity: the request as given; any answer (4xx/5xx too) is a result, a network error a failure. */
export async function runHttpActivity(input: string | undefined): Promise<HttpActivityResponse> {
    const request = parse<SdkHttpRequest>(input);
    const problem = httpRequestProblem(request);
    if (problem || !request) throw new Error(problem ?? "callHttp: no request.");
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers ?? {})) {
        for (const one of Array.isArray(value) ? value : [value]) headers.append(name, String(one));
    }
    const method = (request.method || "GET").toUpperCase();
    const hasBody = request.content !== undefined && request.content !== null && method !== "GET" && method !== "HEAD";
    if (hasBody && !headers.has("content-type")) headers.set("content-type", "application/json");
    const response = await fetch(request.uri, { method, headers, body: hasBody ? request.content : undefined, redirect: "follow", signal: AbortSignal.timeout(HTTP_TIMEOUT_MS) });
    const responseHeaders: Record<string, string> = {};
    response.headers.forEach((value, name) => {
        responseHeaders[canonicalHeaderName(name)] = value;
    });
    return { statusCode: response.status, headers: responseHeaders, content: await response.text() };
}

/** "retry-after" → "Retry-After", as .NET reports response header names. */
function canonicalHeaderName(name: string): string {
    return name.replace(/(^|-)([a-z])/g, (_m, dash: string, letter: string) => dash + letter.toUpperCase());
}
