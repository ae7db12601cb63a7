import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import { managementPayload } from "../durable/durableClientBinding";
import { DurableApiError, type DurableTaskEmulator, type OperationResult } from "../durable/durableTaskEmulator";
import type { RuntimeStatus } from "../durable/historyEvent";
import { isEntityInstanceId } from "../durable/entityMessages";
import { instanceIdProblem } from "../durable/instanceId";
import { readBody, sendEmpty, sendJson, sendServerError } from "./respond";
import type { StatusReadFaults } from "./statusReadFaults";

export const DURABLE_PREFIX = "/runtime/webhooks/durabletask";

const RUNTIME_STATUSES = ["Running", "Completed", "ContinuedAsNew", "Failed", "Canceled", "Terminated", "Pending", "Suspended"] as const;

const boolParam = z
    .string()
    .transform((v) => v.toLowerCase() === "true")
    .optional();

const dateParam = z
    .string()
    .refine((v) => !Number.isNaN(Date.parse(v)), { message: "must be an ISO 8601 date" })
    .transform((v) => new Date(v))
    .optional();

const listQuery = z.object({
    createdTimeFrom: dateParam,
    createdTimeTo: dateParam,
    runtimeStatus: z
        .string()
        .transform((v) => v.split(",").map((s) => s.trim()).filter((s) => s !== ""))
        .pipe(z.array(z.enum(RUNTIME_STATUSES)))
        .optional(),
    instanceIdPrefix: z.string().optional(),
    top: z.coerce.number().int().positive().optional(),
    showInput: boolParam,
});

const statusQuery = z.object({ showHistory: boolParam, showHistoryOutput: boolParam, showInput: boolParam, returnInternalServerErrorOnFailure: boolParam });

/**
 * The Durable Functions HTTP API under /runtime/webhooks/durabletask/, with the routes and status
 * codes the durable-functions DurableClient expects (it calls them through `rpcBaseUrl`).
 */
export async function handleDurableApi(emulator: DurableTaskEmulator, req: IncomingMessage, res: ServerResponse, url: URL, statusReadFaults?: StatusReadFaults): Promise<void> {
    const method = (req.method ?? "GET").toUpperCase();
    const path = url.pathname.slice(DURABLE_PREFIX.length).replace(/^\/+|\/+$/g, "");
    const segments = path === "" ? [] : path.split("/").map(decodeSegment);
    const query = Object.fromEntries(url.searchParams.entries());
    const reason = url.searchParams.get("reason") ?? "";
    try {
        const [root, id, op, extra] = segments;
        if (root === "orchestrators" && method === "POST" && id !== undefined && segments.length <= 3) {
            return await startNew(emulator, req, res, id, op, url.searchParams.get("version") ?? undefined);
        }
        if (root === "instances" && id === undefined) {
            if (method === "GET") return await list(emulator, req, res, query);
            if (method === "DELETE") return await purgeBy(emulator, res, query);
        }
        if (root === "instances" && id !== undefined) {
            // An entity is an instance too (`@name@key`): its status can be read and, once deleted, its storage purged.
            const entityStatusOrPurge = isEntityInstanceId(id) && op === undefined && (method === "GET" || method === "DELETE");
            const problem = entityStatusOrPurge ? undefined : instanceIdProblem(id);
            if (problem) return sendJson(res, 400, { message: problem });
            if (op === undefined && method === "GET" && statusReadFaults?.fails(id)) {
                return sendServerError(res, `The status of instance '${id}' could not be read (test switch /admin/faults/statusReads).`);
            }
            if (op === undefined && method === "GET") return await getStatus(emulator, res, url, id, query);
            if (op === undefined && method === "DELETE") {
                const purged = await emulator.purge(id);
                return purged ? sendJson(res, 200, { instancesDeleted: 1 }) : sendEmpty(res, 404);
            }
            if (method === "POST" && op === "raiseEvent" && extra !== undefined) {
                const body = (await readBody(req)).toString("utf8");
                return operationResult(res, await emulator.raiseEvent(id, extra, body));
            }
            if (method === "POST" && op === "terminate") return operationResult(res, await emulator.terminate(id, reason));
            if (method === "POST" && op === "suspend") return operationResult(res, await emulator.suspend(id, reason));
            if (method === "POST" && op === "resume") return operationResult(res, await emulator.resume(id, reason));
            if (method === "POST" && op === "restart") {
                const newId = await emulator.restart(id, url.searchParams.get("restartWithNewInstanceId")?.toLowerCase() !== "false");
                return checkStatusResponse(emulator, res, newId);
            }
            if (method === "POST" && op === "rewind") return operationResult(res, await emulator.rewind(id, reason));
        }
        if (root === "entities") return await entityRoute(emulator, req, res, method, segments.slice(1), query);
        sendJson(res, 404, { message: `No Durable Functions API route matches ${method} ${url.pathname}.` });
    } catch (error) {
        if (error instanceof DurableApiError) {
            // The extension's HttpApiHandler answers an exception from a client operation with this body.
            if (error.statusCode === 500 && error.exceptionType) return sendJson(res, 500, { Message: "Something went wrong while processing your request", ExceptionMessage: error.message, ExceptionType: error.exceptionType, StackTrace: null });
            if (error.statusCode === 500) return sendServerError(res, error.message);
            return sendJson(res, error.statusCode, { message: error.message });
        }
        if (error instanceof z.ZodError) return sendJson(res, 400, { message: `Invalid query: ${error.issues.map((i) => `${i.path.join(".")} ${i.message}`).join("; ")}` });
        throw error;
    }
}

async function startNew(emulator: DurableTaskEmulator, req: IncomingMessage, res: ServerResponse, name: string, instanceId: string | undefined, version: string | undefined): Promise<void> {
    const body = (await readBody(req)).toString("utf8").trim();
    const id = await emulator.startNew(name, { instanceId, input: body === "" ? undefined : body, version });
    checkStatusResponse(emulator, res, id);
}

function checkStatusResponse(emulator: DurableTaskEmulator, res: ServerResponse, instanceId: string): void {
    const payload = managementPayload(emulator.clientBindingData(), instanceId);
    sendJson(res, 202, payload, { Location: payload.statusQueryGetUri ?? "", "Retry-After": "10" });
}

async function getStatus(emulator: DurableTaskEmulator, res: ServerResponse, url: URL, id: string, query: Record<string, string>): Promise<void> {
    const options = statusQuery.parse(query);
    const status = await emulator.getStatus(id, { showHistory: options.showHistory ?? false, showHistoryOutput: options.showHistoryOutput ?? false, showInput: options.showInput ?? true });
    if (!status) return sendEmpty(res, 404);
    const runtimeStatus = status.runtimeStatus as RuntimeStatus;
    if (runtimeStatus === "Running" || runtimeStatus === "Pending" || runtimeStatus === "ContinuedAsNew" || runtimeStatus === "Suspended") {
        return sendJson(res, 202, status, { Location: url.href, "Retry-After": "5" });
    }
    if (runtimeStatus === "Failed" && options.returnInternalServerErrorOnFailure) return sendJson(res, 500, status);
    sendJson(res, 200, status);
}

async function list(emulator: DurableTaskEmulator, req: IncomingMessage, res: ServerResponse, query: Record<string, string>): Promise<void> {
    const parsed = listQuery.parse(query);
    const tokenHeader = req.headers["x-ms-continuation-token"];
    const continuationToken = typeof tokenHeader === "string" && tokenHeader !== "" && tokenHeader !== "null" ? tokenHeader : undefined;
    const page = await emulator.list({ ...parsed, continuationToken });
    sendJson(res, 200, page.statuses, page.continuationToken ? { "x-ms-continuation-token": page.continuationToken } : {});
}

async function purgeBy(emulator: DurableTaskEmulator, res: ServerResponse, query: Record<string, string>): Promise<void> {
    const parsed = listQuery.parse(query);
    if (!parsed.createdTimeFrom) return sendJson(res, 400, { message: "Purging instances by query requires createdTimeFrom." });
    const deleted = await emulator.purgeBy(parsed);
    if (deleted === 0) return sendEmpty(res, 404);
    sendJson(res, 200, { instancesDeleted: deleted });
}

const entityListQuery = z.object({ fetchState: boolParam, lastOperationTimeFrom: dateParam, lastOperationTimeTo: dateParam, top: z.coerce.number().int().positive().optional() });

/**
 * `entities/{name}/{key}`: GET reads the state (200 with the state as JSON, 404 when the entity
 * does not exist; key `$` is the empty key), POST signals `?op=` with the JSON body as input,
 * DELETE signals `delete`; `entities/` and `entities/{name}` (GET) list existing entities.
 */
async function entityRoute(emulator: DurableTaskEmulator, req: IncomingMessage, res: ServerResponse, method: string, segments: string[], query: Record<string, string>): Promise<void> {
    const [name, ...rest] = segments;
    const key = rest.length > 0 ? rest.join("/") : undefined;
    if (method === "GET" && (key === undefined || key === "")) {
        const parsed = entityListQuery.parse(query);
        const tokenHeader = req.headers["x-ms-continuation-token"];
        const continuationToken = typeof tokenHeader === "string" && tokenHeader !== "" && tokenHeader !== "null" ? tokenHeader : undefined;
        const page = await emulator.listEntities({ ...parsed, entityName: name, continuationToken });
        return sendJson(res, 200, page.entities, page.continuationToken ? { "x-ms-continuation-token": page.continuationToken } : {});
    }
    if (!name || key === undefined) return sendJson(res, 400, { message: "An entity route needs an entity name and key: entities/{entityName}/{entityKey}." });
    const entity = { name, key: key === "$" ? "" : key };
    if (method === "GET") {
        const found = await emulator.readEntityState(entity);
        if (!found) return sendEmpty(res, 404);
        return sendJson(res, 200, found.state === undefined ? null : (JSON.parse(found.state) as unknown));
    }
    if (method === "POST" || method === "DELETE") {
        const operation = method === "DELETE" ? "delete" : (query.op ?? "");
        const body = (await readBody(req)).toString("utf8");
        const contentType = String(req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
        const input = body === "" ? undefined : contentType === "application/json" ? body : JSON.stringify(body);
        await emulator.signalEntity(entity, operation, input);
        return sendEmpty(res, 202);
    }
    sendEmpty(res, 404);
}

function operationResult(res: ServerResponse, result: OperationResult): void {
    if (result === "accepted") return sendEmpty(res, 202);
    if (result === "gone") return sendEmpty(res, 410);
    sendEmpty(res, 404);
}

function decodeSegment(segment: string): string {
    try {
        return decodeURIComponent(segment);
    } catch {
        return segment;
    }
}
