import { request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import type { HostFunction } from "../functionCatalog";
import type { FunctionRunner } from "../functionRunner";
import type { HostLogger } from "../logger";
import type { RpcHttpCookie, RpcHttpData, RpcTypedData } from "../worker/coreTypes";
import { httpTriggerMetadata } from "./httpBindingData";
import { HostKeys } from "./hostKeys";
import { flatHeaders, readBody, sendEmpty } from "./respond";
import { matchRoute } from "./routeTemplate";

/** In streaming mode, a request body up to this size with a Content-Length is read first, so its JSON properties become binding data; larger or chunked bodies stream on without them. */
const STREAMING_BINDING_BODY_LIMIT = 4 * 1024 * 1024;
const REASON = "This function was programmatically called via the host APIs.";

/**
 * HTTP triggers under the route prefix: finds the function whose route and methods match,
 * checks its authLevel, passes the request to the worker as rpc http data (or, when the app
 * enabled HTTP streaming, through the library's HTTP proxy) and writes the function's response.
 */
export class HttpTriggerDispatcher {
    readonly #functions: HostFunction[];

    constructor(
        functions: HostFunction[],
        private readonly runner: FunctionRunner,
        private readonly keys: HostKeys,
        private readonly logger: HostLogger,
        private readonly streamProxyUri: () => string | undefined,
    ) {
        // More specific routes first: more literal segments, then fewer segments overall.
        this.#functions = functions
            .filter((f) => f.http && !f.disabled)
            .sort((a, b) => (b.http?.template.literalCount ?? 0) - (a.http?.template.literalCount ?? 0) || (a.http?.template.segments.length ?? 0) - (b.http?.template.segments.length ?? 0));
    }

    /** Handles the request when a function's route matches `routePath`; returns false to let the caller answer 404. */
    async handle(req: IncomingMessage, res: ServerResponse, url: URL, routePath: string): Promise<boolean> {
        const method = (req.method ?? "GET").toUpperCase();
        let match: { fn: HostFunction; params: Record<string, string> } | undefined;
        for (const fn of this.#functions) {
            const http = fn.http;
            if (!http || !http.methods.includes(method)) continue;
            const params = matchRoute(http.template, routePath);
            if (params) {
                match = { fn, params };
                break;
            }
        }
        if (!match) return false;
        const { fn, params } = match;
        if (!this.keys.allows(fn.http?.authLevel ?? "anonymous", HostKeys.presented(req, url))) {
            sendEmpty(res, 401);
            return true;
        }
        if (this.streamProxyUri()) await this.#invokeStreaming(fn, req, res, url, params);
        else await this.#invoke(fn, req, res, url, params);
        return true;
    }

    async #invoke(fn: HostFunction, req: IncomingMessage, res: ServerResponse, url: URL, params: Record<string, string>): Promise<void> {
        const body = await readBody(req);
        const query: Record<string, string> = {};
        for (const key of new Set(url.searchParams.keys())) query[key] = url.searchParams.getAll(key).join(",");
        const headers = flatHeaders(req);
        const http: RpcHttpData = { method: (req.method ?? "GET").toUpperCase(), url: url.href, headers, query, params, body: { bytes: body } };
        const triggerMetadata = httpTriggerMetadata({ functionName: fn.name, url, headers, params, body: hasContentLength(req) ? body : undefined });
        let response;
        try {
            ({ response } = await this.runner.run(fn, { http }, { reason: REASON, triggerMetadata, incomingTrace: traceHeaders(headers) }));
        } catch {
            if (!res.headersSent) sendEmpty(res, 500);
            return;
        }
        const outputName = fn.http?.outputBindingName;
        const output = outputName === "$return" || outputName === undefined ? response.returnValue : response.outputData?.find((o) => o.name === outputName)?.data;
        writeRpcHttpResponse(res, output);
    }

    /**
     * HTTP streaming (app.setup({ enableHttpStream: true })): the request and response go through
     * the library's proxy; route parameters, query, headers and (for a body with a Content-Length
     * up to 4 MiB) the JSON body's properties travel as trigger metadata, where the library reads
     * `request.params` and the headers from.
     */
    async #invokeStreaming(fn: HostFunction, req: IncomingMessage, res: ServerResponse, url: URL, params: Record<string, string>): Promise<void> {
        const proxy = new URL(this.streamProxyUri() as string);
        const headers = flatHeaders(req);
        const length = Number(req.headers["content-length"] ?? "");
        const buffered = hasContentLength(req) && length <= STREAMING_BINDING_BODY_LIMIT ? await readBody(req) : undefined;
        const triggerMetadata = httpTriggerMetadata({ functionName: fn.name, url, headers, params, body: buffered });
        let forward: ReturnType<typeof httpRequest> | undefined;
        const run = this.runner.run(fn, { http: { method: req.method ?? "GET", url: url.href } }, {
            reason: REASON,
            triggerMetadata,
            incomingTrace: traceHeaders(headers),
            onInvocationId: (invocationId) => {
                forward = httpRequest(
                    { host: proxy.hostname === "localhost" ? "127.0.0.1" : proxy.hostname, port: proxy.port, method: req.method, path: `${url.pathname}${url.search}`, headers: { ...req.headers, "x-ms-invocation-id": invocationId, "x-forwarded-host": url.host, "x-forwarded-proto": "http" } },
                    (proxyRes) => {
                        const responseHeaders = { ...proxyRes.headers };
                        delete responseHeaders["x-ms-invocation-id"];
                        res.writeHead(proxyRes.statusCode ?? 200, responseHeaders);
                        proxyRes.pipe(res);
                    },
                );
                forward.on("error", (error) => this.logger.warn(`HTTP streaming proxy request for '${fn.name}' failed: ${error.message}`));
                if (buffered) forward.end(buffered);
                else req.pipe(forward);
            },
        });
        try {
            await run;
        } catch {
            forward?.destroy();
            if (!res.headersSent) sendEmpty(res, 500);
            else res.destroy();
        }
    }
}

function hasContentLength(req: IncomingMessage): boolean {
    const length = Number(req.headers["content-length"] ?? "");
    return Number.isFinite(length) && length > 0;
}

function traceHeaders(headers: Record<string, string>): { traceparent?: string; tracestate?: string } {
    return { traceparent: headers.traceparent, tracestate: headers.tracestate };
}

/** Writes the worker's rpc http response; no response at all is a 204, as the host answers. */
export function writeRpcHttpResponse(res: ServerResponse, data: RpcTypedData | null | undefined): void {
    const http = data?.http;
    if (!http) {
        sendEmpty(res, 204);
        return;
    }
    const status = Number(http.statusCode ?? 200) || 200;
    const headers: Record<string, string | string[]> = {};
    for (const [key, value] of Object.entries(http.headers ?? {})) headers[key] = value;
    const cookies = (http.cookies ?? []).map(formatCookie);
    if (cookies.length > 0) headers["set-cookie"] = cookies;
    const body = rpcBodyBytes(http.body);
    if (status !== 204 && status !== 304) headers["content-length"] = String(body.length);
    res.writeHead(status, headers);
    res.end(status === 204 || status === 304 ? undefined : body);
}

function rpcBodyBytes(body: RpcTypedData | null | undefined): Buffer {
    if (!body) return Buffer.alloc(0);
    if (body.bytes) return Buffer.from(body.bytes);
    if (typeof body.string === "string") return Buffer.from(body.string, "utf8");
    if (typeof body.json === "string") return Buffer.from(body.json, "utf8");
    if (typeof body.int === "number") return Buffer.from(String(body.int));
    if (typeof body.double === "number") return Buffer.from(String(body.double));
    return Buffer.alloc(0);
}

function formatCookie(cookie: RpcHttpCookie): string {
    const parts = [`${cookie.name ?? ""}=${cookie.value ?? ""}`];
    if (cookie.domain?.value) parts.push(`Domain=${cookie.domain.value}`);
    if (cookie.path?.value) parts.push(`Path=${cookie.path.value}`);
    const seconds = cookie.expires?.value?.seconds;
    if (typeof seconds === "number") parts.push(`Expires=${new Date(seconds * 1000).toUTCString()}`);
    if (typeof cookie.maxAge?.value === "number") parts.push(`Max-Age=${cookie.maxAge.value}`);
    if (cookie.secure?.value) parts.push("Secure");
    if (cookie.httpOnly?.value) parts.push("HttpOnly");
    const sameSite = { lax: "Lax", strict: "Strict", explicitNone: "None" }[cookie.sameSite ?? ""];
    if (sameSite) parts.push(`SameSite=${sameSite}`);
    return parts.join("; ");
}
