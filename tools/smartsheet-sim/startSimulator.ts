import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { handleAdminRequest } from "./adminApi";
import { isLoopbackAddress } from "./isLoopbackAddress";
import { errorOutcome, SimulatorCore, type ApiOutcome } from "./SimulatorCore";
import { apiErrors } from "./ApiError";
import { DEFAULT_HOST, DEFAULT_PORT, type SimulatorOptions } from "./SimulatorOptions";

export interface RunningSimulator {
    /** What the SDK's `baseUrl` takes: "http://127.0.0.1:<port>/2.0/". */
    baseUrl: string;
    /** "http://127.0.0.1:<port>/__sim/" */
    adminUrl: string;
    port: number;
    /** In-process access to the same state and admin operations as the admin API. */
    core: SimulatorCore;
    /** Closes the server, dropping open sockets, hung requests included. */
    close(): Promise<void>;
}

/** Starts the Smartsheet simulator on a loopback HTTP port. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
    const host = options.host ?? DEFAULT_HOST;
    const core = new SimulatorCore(options);
    const server = createServer((request, response) => {
        serve(core, request, response).catch((error: unknown) => {
            console.error("smartsheet-sim: request failed", error);
            if (!response.headersSent) send(response, errorOutcome(apiErrors.unexpected()));
        });
    });
    await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(options.port ?? DEFAULT_PORT, host, () => {
            server.off("error", reject);
            resolve();
        });
    });
    const port = (server.address() as AddressInfo).port;
    const origin = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
    return {
        baseUrl: `${origin}/2.0/`,
        adminUrl: `${origin}/__sim/`,
        port,
        core,
        close: () =>
            new Promise<void>((resolve) => {
                core.stop();
                server.close(() => resolve());
                server.closeAllConnections();
            }),
    };
}

async function serve(core: SimulatorCore, request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? "/", "http://simulator");
    const method = request.method ?? "GET";
    const bodyText = await readBody(request);
    if (bodyText === undefined) {
        send(response, { kind: "json", status: 413, body: { message: `The request body is larger than ${MAX_BODY_BYTES} bytes.` } });
        return;
    }
    if (url.pathname === "/__sim" || url.pathname.startsWith("/__sim/")) {
        if (!fromProgramOnThisMachine(request)) {
            send(response, errorOutcome(apiErrors.notAuthorized()));
            return;
        }
        const admin = handleAdminRequest(core, method, url.pathname, bodyText);
        send(response, { kind: "json", status: admin.status, body: admin.body });
        return;
    }
    const outcome = await core.handleApi({
        method,
        path: url.pathname,
        query: url.search.replace(/^\?/, ""),
        authorization: request.headers.authorization,
        bodyText,
        ...(typeof request.headers["smartsheet-change-agent"] === "string" ? { changeAgent: request.headers["smartsheet-change-agent"] } : {}),
    });
    send(response, outcome, core.now());
}

/** `at`: Smartsheet's clock, for the `Date` header (else Node's own, the machine's clock). */
function send(response: ServerResponse, outcome: ApiOutcome, at?: number): void {
    if (outcome.kind === "hang" || response.destroyed) return;
    const html = outcome.kind === "html";
    const payload = html ? outcome.body : JSON.stringify(outcome.body);
    response.writeHead(outcome.status, {
        "Content-Type": html ? "text/html" : "application/json;charset=UTF-8",
        "Content-Length": Buffer.byteLength(payload),
        ...(at === undefined ? {} : { Date: new Date(at).toUTCString() }),
    });
    response.end(payload);
}

/** Far above any request the app sends (500 rows of an update); the rest of a larger body is drained, not kept. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** The body as text, or `undefined` when it is larger than MAX_BODY_BYTES. */
function readBody(request: IncomingMessage): Promise<string | undefined> {
    return new Promise((resolve, reject) => {
        const chunks: Buffer[] = [];
        let size = 0;
        request.on("data", (chunk: Buffer) => {
            size += chunk.length;
            if (size <= MAX_BODY_BYTES) chunks.push(chunk);
        });
        request.on("end", () => resolve(size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks).toString("utf8")));
        request.on("error", reject);
    });
}

/**
 * The admin API is for programs on this machine: a loopback peer, a loopback Host, and no
 * `Origin` — a web page in the developer's browser can reach 127.0.0.1 (or rebind a name to it),
 * but then the browser sends its Origin or the foreign Host.
 */
function fromProgramOnThisMachine(request: IncomingMessage): boolean {
    const host = (request.headers.host ?? "").replace(/:\d+$/, "").toLowerCase();
    const loopbackHost = host === "" || host === "localhost" || host === "[::1]" || isLoopbackAddress(host);
    return isLoopbackAddress(request.socket.remoteAddress) && loopbackHost && request.headers.origin === undefined;
}
