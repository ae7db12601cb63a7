import { AsyncLocalStorage } from "node:async_hooks";
import { SHEETWRIGHT_CHANGE_AGENT, type CallTally } from "./SmartsheetPort";
import { RateLimitWaitTooLongError, type RateLimiter } from "./RateLimiter";
import type { Telemetry } from "../telemetry/Telemetry";

/** What the adapter knows about the call in flight; the transport reads and fills it. */
export interface CallContext {
    operation: string;
    tallies: CallTally[];
    /** Clock time after which no (re-)send of this call may start: a write's lifetime is bounded. */
    sendBy?: number;
    /** Background work (a convergence): paced behind the foreground, within its share of the limit. */
    background?: boolean;
    /** Smartsheet's clock when it last answered this call with a 2xx: its `Date` header, as ISO. */
    answeredAt?: string;
    /** Set when a request got no HTTP answer at all (timeout, reset, refused…). */
    networkError?: { code: string; message: string };
}

export const callContext = new AsyncLocalStorage<CallContext>();

interface TransportResponse {
    status: number;
    headers: Record<string, string>;
    data: unknown;
}

interface RequestOptions {
    headers?: Record<string, string>;
    params?: Record<string, unknown>;
    data?: unknown;
}

/** The axios-shaped object the Smartsheet SDK's requestor sends every request through. */
interface SdkTransport {
    get(url: string, options: RequestOptions): Promise<TransportResponse>;
    delete(url: string, options: RequestOptions): Promise<TransportResponse>;
    post(url: string, body: unknown, options: RequestOptions): Promise<TransportResponse>;
    put(url: string, body: unknown, options: RequestOptions): Promise<TransportResponse>;
    patch(url: string, body: unknown, options: RequestOptions): Promise<TransportResponse>;
}

/**
 * A transport for the SDK that waits for the rate limiter before every request (retries
 * included) — but never past the call's `sendBy`, so that one write has a bounded lifetime — counts it, and gives up after `timeoutMs` — the SDK itself has no timeout.
 * Like axios, it resolves on 2xx and rejects with `{ response }` otherwise. A request that got
 * no answer rejects with a status-0 response and records why in the call context. Every request
 * sent is counted in `calls.telemetry` by operation and answer (`none`: no answer), under the name
 * of the app setting holding the token.
 */
export function createPacedTransport(limiter: RateLimiter, timeoutMs: number, calls?: { telemetry?: Telemetry; tokenSetting?: string }): SdkTransport {
    const send = async (method: string, url: string, body: unknown, options: RequestOptions) => {
        const context = callContext.getStore();
        try {
            await limiter.acquire(context?.sendBy, context?.background ? "background" : "foreground");
        } catch (error) {
            if (!(error instanceof RateLimitWaitTooLongError)) throw error;
            if (context) context.networkError = { code: "ENOTSENT", message: error.message };
            throw { response: { status: 0, headers: {}, data: error.message } };
        }
        for (const tally of context?.tallies ?? []) {
            tally.total += 1;
            const operation = context?.operation ?? "unknown";
            tally.byOperation[operation] = (tally.byOperation[operation] ?? 0) + 1;
        }
        let response: TransportResponse;
        try {
            const answer = await fetch(withParams(url, options.params), {
                method,
                // Every request says it is Sheetwright's: the webhook events of its own writes carry it back, and are ignored.
                headers: { ...options.headers, "Smartsheet-Change-Agent": SHEETWRIGHT_CHANGE_AGENT },
                body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
                signal: AbortSignal.timeout(timeoutMs),
            });
            response = await readResponse(answer);
        } catch (error) {
            const networkError = describeNetworkError(error, timeoutMs);
            calls?.telemetry?.count("sheetwright.smartsheet.calls", { operation: context?.operation ?? "unknown", status: "none", token: calls.tokenSetting });
            if (context) context.networkError = networkError;
            throw { response: { status: 0, headers: {}, data: networkError.message } };
        }
        if (response.status === 429) for (const tally of context?.tallies ?? []) tally.rateLimited += 1;
        calls?.telemetry?.count("sheetwright.smartsheet.calls", { operation: context?.operation ?? "unknown", status: String(response.status), token: calls.tokenSetting });
        if (response.status < 200 || response.status > 299) throw { response };
        const answeredAt = Date.parse(response.headers["date"] ?? "");
        if (context && Number.isFinite(answeredAt)) context.answeredAt = new Date(answeredAt).toISOString();
        return response;
    };
    return {
        get: (url, options) => send("GET", url, undefined, options),
        delete: (url, options) => send("DELETE", url, options.data, options),
        post: (url, body, options) => send("POST", url, body, options),
        put: (url, body, options) => send("PUT", url, body, options),
        patch: (url, body, options) => send("PATCH", url, body, options),
    };
}

function withParams(url: string, params: Record<string, unknown> | undefined): string {
    if (!params) return url;
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) {
        if (value === undefined || value === null) continue;
        search.append(key, Array.isArray(value) ? value.join(",") : String(value));
    }
    const query = search.toString();
    if (!query) return url;
    return url + (url.includes("?") ? "&" : "?") + query;
}

async function readResponse(answer: Response): Promise<TransportResponse> {
    const headers: Record<string, string> = {};
    answer.headers.forEach((value, key) => (headers[key] = value));
    const text = await answer.text();
    let data: unknown = text;
    if (/\bapplication\/json\b/.test(headers["content-type"] ?? "") && text.length > 0) {
        try {
            data = JSON.parse(text);
        } catch {
            data = text;
        }
    }
    return { status: answer.status, headers, data };
}

function describeNetworkError(error: unknown, timeoutMs: number): { code: string; message: string } {
    const err = error as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
    if (err?.name === "TimeoutError" || err?.name === "AbortError") {
        return { code: "ETIMEDOUT", message: `no answer within ${timeoutMs} ms` };
    }
    const code = err?.cause?.code ?? err?.code ?? "ENETWORK";
    return { code, message: err?.cause?.message ?? err?.message ?? "network error" };
}
