import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import type { RegisteredFunctionInfo } from "../functionCatalog";
import { isLoopback } from "./hostKeys";
import { readBody, sendEmpty, sendJson } from "./respond";
import { StatusReadFaults } from "./statusReadFaults";

/** An admin request carries at most `{"input": "..."}`. */
const MAX_ADMIN_BODY_BYTES = 64 * 1024;

export type HostState = "Starting" | "Running" | "Stopping" | "Stopped";

export interface AdminTarget {
    state(): HostState;
    functions(): RegisteredFunctionInfo[];
    /** Starts the function now; throws AdminError for unknown or unsupported functions. */
    fire(name: string, input: string | undefined): Promise<void>;
    version: string;
    /** The test switch that makes status reads of chosen instances fail. */
    statusReadFaults: StatusReadFaults;
}

export class AdminError extends Error {
    constructor(
        readonly statusCode: number,
        message: string,
    ) {
        super(message);
    }
}

const invokeBody = z.object({ input: z.union([z.string(), z.null()]).optional() }).loose();

/** The admin API subset the host serves: list and fire functions, host status, ping. */
export async function handleAdminApi(target: AdminTarget, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const method = (req.method ?? "GET").toUpperCase();
    const path = url.pathname.replace(/\/+$/, "");
    if (path === "/admin/host/status" && method === "GET") {
        return sendJson(res, 200, { state: target.state(), version: target.version, processUptime: Math.round(process.uptime() * 1000) });
    }
    if (path === "/admin/host/ping" && (method === "POST" || method === "GET")) return sendEmpty(res, 200);
    if (path === "/admin/faults/statusReads") return statusReadFaultsRoute(target.statusReadFaults, method, req, res);
    if (path === "/admin/functions" && method === "GET") return sendJson(res, 200, target.functions());
    const match = /^\/admin\/functions\/([^/]+)$/.exec(path);
    if (match) {
        const name = decodeURIComponent(match[1] as string);
        const info = target.functions().find((f) => f.name.toLowerCase() === name.toLowerCase());
        if (!info) return sendJson(res, 404, { message: `No function named '${name}' is registered.` });
        if (method === "GET") return sendJson(res, 200, info);
        if (method === "POST") {
            const text = (await readBody(req, MAX_ADMIN_BODY_BYTES)).toString("utf8").trim();
            let input: string | undefined;
            if (text !== "") {
                let parsed: unknown;
                try {
                    parsed = JSON.parse(text);
                } catch {
                    return sendJson(res, 400, { message: 'The body must be JSON like {"input": "..."}.' });
                }
                const body = invokeBody.safeParse(parsed);
                if (!body.success) return sendJson(res, 400, { message: 'The body must be JSON like {"input": "..."} with a string input.' });
                input = body.data.input ?? undefined;
            }
            try {
                await target.fire(info.name, input);
            } catch (error) {
                if (error instanceof AdminError) return sendJson(res, error.statusCode, { message: error.message });
                throw error;
            }
            return sendEmpty(res, 202);
        }
    }
    sendJson(res, 404, { message: `No admin API route matches ${method} ${url.pathname}.` });
}

/** `GET` lists, `PUT {"instanceIdPrefixes": [...]}` replaces (an empty list clears) the failing status reads; loopback only. */
async function statusReadFaultsRoute(faults: StatusReadFaults, method: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!isLoopback(req)) return sendJson(res, 403, { message: "Fault switches answer loopback callers only." });
    if (method === "GET") return sendJson(res, 200, { instanceIdPrefixes: faults.list() });
    if (method !== "PUT") return sendJson(res, 405, { message: "Use GET or PUT on /admin/faults/statusReads." });
    let parsed: unknown;
    try {
        parsed = JSON.parse((await readBody(req, MAX_ADMIN_BODY_BYTES)).toString("utf8"));
    } catch {
        return sendJson(res, 400, { message: 'The body must be JSON like {"instanceIdPrefixes": ["provision-1-2-"]}.' });
    }
    const body = StatusReadFaults.body.safeParse(parsed);
    if (!body.success) return sendJson(res, 400, { message: `The body must be {"instanceIdPrefixes": [<non-empty strings>]}: ${z.prettifyError(body.error).replace(/\n/g, " ")}` });
    return sendJson(res, 200, { instanceIdPrefixes: faults.set(body.data.instanceIdPrefixes) });
}
