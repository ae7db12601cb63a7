/**
 * The simulator's Smartsheet webhooks, against a real local HTTP receiver.
 *
 * Shapes pinned here follow Smartsheet's own documentation: the API guide pages "Launch a webhook",
 * "Webhook verification", "Webhook callbacks" and "Webhook status" (developers.smartsheet.com), and
 * the Webhook object of Smartsheet's OpenAPI description (../shared/reference/smartsheet-openapi,
 * operations createWebhook, list-webhooks, getWebhook, updateWebhook, deleteWebhook,
 * resetSharedSecret; error codes 1151–1154). No test reads that file: the schemas below restate it.
 */
import { createHmac } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { RunningSimulator } from "../../tools/smartsheet-sim";
import { admin, api, startTestSimulator, TOKEN, useSimulator } from "./simTestKit";

const TIMING = { debounceMs: 50, retryBaseMs: 5, retryLongMs: 10, callbackTimeoutMs: 150 };
const OTHER_TOKEN = "other-token";
const context = useSimulator({ tokens: [TOKEN, OTHER_TOKEN], webhooks: TIMING });

// ---- shapes (Webhook object; callbacks as "Webhook callbacks" describes them) ----

const Iso = z.string().regex(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
const WebhookShape = z.strictObject({
    id: z.number().int().positive(),
    name: z.string(),
    scope: z.literal("sheet"),
    scopeObjectId: z.number().int().positive(),
    events: z.tuple([z.literal("*.*")]),
    callbackUrl: z.string(),
    sharedSecret: z.string().min(20),
    enabled: z.boolean(),
    status: z.enum([
        "ENABLED",
        "NEW_NOT_VERIFIED",
        "DISABLED_ADMINISTRATIVE",
        "DISABLED_APP_REVOKED",
        "DISABLED_BY_OWNER",
        "DISABLED_CALLBACK_FAILED",
        "DISABLED_SCOPE_INACCESSIBLE",
        "DISABLED_VERIFICATION_FAILED",
    ]),
    disabledDetails: z.string().optional(),
    version: z.literal(1),
    stats: z.strictObject({
        lastCallbackAttempt: Iso.optional(),
        lastCallbackAttemptRetryCount: z.number().int().nonnegative(),
        lastSuccessfulCallback: Iso.optional(),
    }),
    createdAt: Iso,
    modifiedAt: Iso,
});
const Envelope = <T extends z.ZodType>(result: T) => z.strictObject({ message: z.literal("SUCCESS"), resultCode: z.literal(0), result });
const ErrorShape = z.strictObject({ errorCode: z.number(), message: z.string(), refId: z.string() });
const EventShape = z.strictObject({
    objectType: z.enum(["sheet", "row", "cell", "column"]),
    eventType: z.enum(["created", "updated", "deleted"]),
    id: z.number().int().positive().optional(),
    rowId: z.number().int().positive().optional(),
    columnId: z.number().int().positive().optional(),
    userId: z.number().int().positive(),
    timestamp: z.string(),
    changeAgent: z.string().optional(),
});
const EventCallback = z.strictObject({
    nonce: z.string().min(1),
    timestamp: z.string(),
    webhookId: z.number().int().positive(),
    scope: z.literal("sheet"),
    scopeObjectId: z.number().int().positive(),
    events: z.array(EventShape).min(1),
});
const StatusCallback = z.strictObject({
    nonce: z.string().min(1),
    timestamp: z.string(),
    webhookId: z.number().int().positive(),
    scope: z.literal("sheet"),
    scopeObjectId: z.number().int().positive(),
    newWebhookStatus: z.string(),
});

// ---- a real receiver ----

interface Received {
    headers: IncomingHttpHeaders;
    raw: string;
    body: any;
    at: number;
}
interface Answer {
    status?: number;
    headers?: Record<string, string>;
    body?: unknown;
    /** Hold the answer this long. */
    delayMs?: number;
    /** Hold the answer until this settles. */
    until?: Promise<void>;
}

class Receiver {
    readonly requests: Received[] = [];
    /** How event and status callbacks are answered; challenges are echoed unless `challenge` says otherwise. */
    answer: (request: Received, index: number) => Answer = () => ({});
    challenge: (request: Received) => Answer = (request) => ({ headers: { "Smartsheet-Hook-Response": request.body.challenge } });
    concurrent = 0;
    maxConcurrent = 0;
    private constructor(
        private readonly server: Server,
        readonly url: string,
    ) {}

    static async start(): Promise<Receiver> {
        let receiver!: Receiver;
        const server = createServer((request, response) => {
            const chunks: Buffer[] = [];
            request.on("data", (chunk: Buffer) => chunks.push(chunk));
            request.on("end", () => {
                const raw = Buffer.concat(chunks).toString("utf8");
                const received: Received = { headers: request.headers, raw, body: raw ? JSON.parse(raw) : undefined, at: Date.now() };
                receiver.requests.push(received);
                const isChallenge = request.headers["smartsheet-hook-challenge"] !== undefined;
                const answer = isChallenge ? receiver.challenge(received) : receiver.answer(received, receiver.callbacks().length - 1);
                receiver.concurrent += 1;
                receiver.maxConcurrent = Math.max(receiver.maxConcurrent, receiver.concurrent);
                const reply = () => {
                    receiver.concurrent -= 1;
                    if (response.destroyed) return;
                    const payload = answer.body === undefined ? "" : JSON.stringify(answer.body);
                    response.writeHead(answer.status ?? 200, { "Content-Type": "application/json", ...answer.headers });
                    response.end(payload);
                };
                void (answer.until ?? Promise.resolve()).then(() => setTimeout(reply, answer.delayMs ?? 0));
            });
        });
        await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
        receiver = new Receiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook?code=function-key`);
        receivers.push(receiver);
        return receiver;
    }

    /** Requests that were not verification challenges. */
    callbacks(): Received[] {
        return this.requests.filter((request) => request.headers["smartsheet-hook-challenge"] === undefined);
    }

    challenges(): Received[] {
        return this.requests.filter((request) => request.headers["smartsheet-hook-challenge"] !== undefined);
    }

    async waitForCallbacks(count: number, timeoutMs = 1_500): Promise<Received[]> {
        const deadline = Date.now() + timeoutMs;
        while (this.callbacks().length < count) {
            if (Date.now() > deadline) throw new Error(`expected ${count} callbacks, got ${this.callbacks().length}`);
            await sleep(5);
        }
        return this.callbacks();
    }

    close(): Promise<void> {
        return new Promise((resolve) => {
            this.server.close(() => resolve());
            this.server.closeAllConnections();
        });
    }
}

const receivers: Receiver[] = [];
afterEach(async () => {
    await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});

// ---- helpers ----

function intake(sim: RunningSimulator): { sheetId: number; columnId: number } {
    const sheetId = sim.core.anchors.intakeSheetId;
    const sheet = sim.core.state().sheets.find((candidate) => candidate.id === sheetId)!;
    return { sheetId, columnId: sheet.columns[0]!.id };
}

async function createHook(sim: RunningSimulator, receiver: Receiver, overrides: Record<string, unknown> = {}, token = TOKEN): Promise<any> {
    const response = await api(
        sim,
        "POST",
        "webhooks",
        { name: "Sheetwright intake", callbackUrl: receiver.url, scope: "sheet", scopeObjectId: intake(sim).sheetId, events: ["*.*"], version: 1, ...overrides },
        { token },
    );
    expect(response.status).toBe(200);
    return response.body.result;
}

async function enabledHook(sim: RunningSimulator, receiver: Receiver): Promise<any> {
    const hook = await createHook(sim, receiver);
    const enabled = await api(sim, "PUT", `webhooks/${hook.id}`, { enabled: true });
    expect(enabled.body.result).toMatchObject({ enabled: true, status: "ENABLED" });
    return enabled.body.result;
}

/** Adds a row to the intake sheet, with a change agent header when given. */
async function addRow(sim: RunningSimulator, value: string, changeAgent?: string): Promise<number> {
    const { sheetId, columnId } = intake(sim);
    const response = await fetch(new URL(`sheets/${sheetId}/rows`, sim.baseUrl), {
        method: "POST",
        headers: {
            "Content-Type": "application/json",
            Authorization: `Bearer ${TOKEN}`,
            ...(changeAgent ? { "Smartsheet-Change-Agent": changeAgent } : {}),
        },
        body: JSON.stringify([{ toBottom: true, cells: [{ columnId, value }] }]),
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as any).result[0].id;
}

async function hookNow(sim: RunningSimulator, id: number): Promise<any> {
    return (await api(sim, "GET", `webhooks/${id}`)).body;
}

function hmacOf(secret: string, raw: string): string {
    return createHmac("sha256", secret).update(raw).digest("hex");
}

/** The first event callback carrying a row created with this id. */
function rowsCreatedIn(callback: Received): number[] {
    return callback.body.events.filter((event: any) => event.objectType === "row" && event.eventType === "created").map((event: any) => event.id);
}

// ---- tests ----

describe("creating and managing webhooks", () => {
    it("creates a webhook disabled and NEW_NOT_VERIFIED, in the envelope, with its shared secret", async () => {
        const { sim } = context;
        const receiver = await Receiver.start();
        const response = await api(sim, "POST", "webhooks", {
            name: "Sheetwright intake",
            callbackUrl: receiver.url,
            scope: "sheet",
            scopeObjectId: intake(sim).sheetId,
            events: ["*.*"],
            version: 1,
        });
        expect(response.status).toBe(200);
        const body = Envelope(WebhookShape).parse(response.body);
        expect(body.result).toMatchObject({ enabled: false, status: "NEW_NOT_VERIFIED", scopeObjectId: intake(sim).sheetId, callbackUrl: receiver.url });
        expect(receiver.requests).toHaveLength(0);
    });

    it.each([
        ["no name", { name: undefined }, 400, 1012],
        ["scope other than sheet", { scope: "workspace" }, 400, 1018],
        ["events other than *.*", { events: ["row.created"] }, 400, 1018],
        ["version 2", { version: 2 }, 400, 1018],
        ["an http callback to another machine", { callbackUrl: "http://example.com/hook" }, 400, 1152],
        ["an https callback on port 9999", { callbackUrl: "https://example.com:9999/hook" }, 400, 1018],
        ["an unknown sheet", { scopeObjectId: 1234567890123456 }, 404, 1151],
        ["enabled (read-only on create)", { enabled: true }, 400, 1032],
    ])("refuses a webhook with %s (%i/%i)", async (_what, overrides, status, errorCode) => {
        const { sim } = context;
        const body = { name: "n", callbackUrl: "https://example.com/hook", scope: "sheet", scopeObjectId: intake(sim).sheetId, events: ["*.*"], version: 1, ...overrides };
        const response = await api(sim, "POST", "webhooks", body);
        expect(response.status).toBe(status);
        expect(ErrorShape.parse(response.body).errorCode).toBe(errorCode);
        expect(sim.core.webhookList()).toHaveLength(0);
    });

    it("refuses a create without a body (400/1024)", async () => {
        const response = await api(context.sim, "POST", "webhooks");
        expect(response).toMatchObject({ status: 400, body: { errorCode: 1024 } });
    });

    it("lists a token's own webhooks paged like the API; another token sees none of them and gets 404 by id", async () => {
        const { sim } = context;
        const receiver = await Receiver.start();
        for (const name of ["c", "a", "b"]) await createHook(sim, receiver, { name });
        const page1 = await api(sim, "GET", "webhooks?pageSize=2");
        expect(page1.body).toMatchObject({ pageNumber: 1, pageSize: 2, totalPages: 2, totalCount: 3 });
        expect(page1.body.data.map((hook: any) => hook.name)).toEqual(["a", "b"]);
        for (const hook of page1.body.data) WebhookShape.parse(hook);
        const page2 = await api(sim, "GET", "webhooks?page=2&pageSize=2");
        expect(page2.body.data.map((hook: any) => hook.name)).toEqual(["c"]);
        expect((await api(sim, "GET", "webhooks?includeAll=true")).body.data).toHaveLength(3);

        const other = await api(sim, "GET", "webhooks", undefined, { token: OTHER_TOKEN });
        expect(other.body).toMatchObject({ totalCount: 0, data: [] });
        const id = page1.body.data[0].id;
        expect((await api(sim, "GET", `webhooks/${id}`, undefined, { token: OTHER_TOKEN })).status).toBe(404);
        expect((await api(sim, "DELETE", `webhooks/${id}`, undefined, { token: OTHER_TOKEN })).status).toBe(404);
    });

    it("gets a webhook with its sharedSecret; resetting the secret answers a new one that GET then shows", async () => {
        const { sim } = context;
        const hook = await createHook(sim, await Receiver.start());
        const got = await api(sim, "GET", `webhooks/${hook.id}`);
        expect(WebhookShape.parse(got.body).sharedSecret).toBe(hook.sharedSecret);
        const reset = await api(sim, "POST", `webhooks/${hook.id}/resetsharedsecret`);
        const secret = Envelope(z.strictObject({ sharedSecret: z.string().min(20) })).parse(reset.body).result.sharedSecret;
        expect(secret).not.toBe(hook.sharedSecret);
        expect((await hookNow(sim, hook.id)).sharedSecret).toBe(secret);
    });

    it("deletes a webhook: 404 afterwards, and it calls back no more", async () => {
        const { sim } = context;
        const receiver = await Receiver.start();
        const hook = await enabledHook(sim, receiver);
        expect((await api(sim, "DELETE", `webhooks/${hook.id}`)).body).toEqual({ message: "SUCCESS", resultCode: 0 });
        expect((await api(sim, "GET", `webhooks/${hook.id}`)).status).toBe(404);
        await addRow(sim, "after delete");
        await sleep(TIMING.debounceMs * 3);
        expect(receiver.callbacks()).toHaveLength(0);
    });
});

describe("verification", () => {
    it("PUT enabled:true answers after the challenge: header Smartsheet-Hook-Challenge, body {challenge, webhookId}; an echo in Smartsheet-Hook-Response enables it", async () => {
        const { sim } = context;
        const receiver = await Receiver.start();
        const hook = await createHook(sim, receiver);
        const response = await api(sim, "PUT", `webhooks/${hook.id}`, { enabled: true });
        expect(Envelope(WebhookShape).parse(response.body).result).toMatchObject({ enabled: true, status: "ENABLED" });
        const [challenge] = receiver.challenges();
        expect(challenge!.body).toEqual({ challenge: challenge!.headers["smartsheet-hook-challenge"], webhookId: hook.id });
        expect(challenge!.body.challenge).toMatch(/\S{8,}/);
    });

    it("an echo in JSON smartsheetHookResponse enables it too", async () => {
        const { sim } = context;
        const receiver = await Receiver.start();
        receiver.challenge = (request) => ({ body: { smartsheetHookResponse: request.body.challenge } });
        const hook = await createHook(sim, receiver);
        expect((await api(sim, "PUT", `webhooks/${hook.id}`, { enabled: true })).body.result.status).toBe("ENABLED");
    });

    it.each([
        ["a wrong echo", () => ({ headers: { "Smartsheet-Hook-Response": "nope" } })],
        ["no echo", () => ({})],
        ["a 201 with the echo", (request: Received) => ({ status: 201, headers: { "Smartsheet-Hook-Response": request.body.challenge } })],
        ["a 500", () => ({ status: 500 })],
        ["no answer in time", (request: Received) => ({ delayMs: 400, headers: { "Smartsheet-Hook-Response": request.body.challenge } })],
    ])("%s leaves it disabled, DISABLED_VERIFICATION_FAILED", async (_what, challenge) => {
        const { sim } = context;
        const receiver = await Receiver.start();
        receiver.challenge = challenge;
        const hook = await createHook(sim, receiver);
        const result = (await api(sim, "PUT", `webhooks/${hook.id}`, { enabled: true })).body.result;
        expect(result).toMatchObject({ enabled: false, status: "DISABLED_VERIFICATION_FAILED", disabledDetails: expect.any(String) });
    });

    it("verifies again before every 100th callback (default), here compressed to every 3rd; a failed re-verification disables it", async () => {
        const { sim } = context;
        expect(sim.core.config().webhooks.verifyEvery).toBe(100);
        await admin(sim, "POST", "config", { webhooks: { verifyEvery: 3 } });
        const receiver = await Receiver.start();
        const hook = await enabledHook(sim, receiver);
        for (let i = 1; i <= 3; i++) {
            await addRow(sim, `r${i}`);
            await receiver.waitForCallbacks(i);
        }
        expect(receiver.challenges()).toHaveLength(1);
        await addRow(sim, "r4");
        await receiver.waitForCallbacks(4);
        expect(receiver.challenges()).toHaveLength(2);
        // The second challenge came before the fourth callback.
        expect(receiver.requests.indexOf(receiver.challenges()[1]!)).toBeLessThan(receiver.requests.indexOf(receiver.callbacks()[3]!));

        for (let i = 5; i <= 6; i++) {
            await addRow(sim, `r${i}`);
            await receiver.waitForCallbacks(i);
        }
        receiver.challenge = () => ({ status: 500 });
        await addRow(sim, "r7");
        await sleep(TIMING.debounceMs * 3);
        expect(receiver.callbacks()).toHaveLength(6);
        expect(await hookNow(sim, hook.id)).toMatchObject({ enabled: false, status: "DISABLED_VERIFICATION_FAILED" });
    });
});

describe("event callbacks", () => {
    it("sends a skinny payload signed with Smartsheet-Hmac-SHA256 (hex HMAC-SHA256 of the raw body with the shared secret)", async () => {
        const { sim } = context;
        const receiver = await Receiver.start();
        const hook = await enabledHook(sim, receiver);
        const rowId = await addRow(sim, "IND-2001");
        const [callback] = await receiver.waitForCallbacks(1);
        const payload = EventCallback.parse(callback!.body);
        expect(payload).toMatchObject({ webhookId: hook.id, scope: "sheet", scopeObjectId: intake(sim).sheetId });
        expect(callback!.headers["smartsheet-hmac-sha256"]).toBe(hmacOf(hook.sharedSecret, callback!.raw));
        expect(callback!.headers["smartsheet-hmac-sha256"]).not.toBe(hmacOf("wrong secret", callback!.raw));
        expect(payload.events.map(({ objectType, eventType }) => `${objectType}.${eventType}`)).toEqual(["sheet.updated", "row.created", "cell.created"]);
        expect(payload.events[0]).toMatchObject({ id: intake(sim).sheetId });
        expect(payload.events[1]).toMatchObject({ id: rowId });
        expect(payload.events[2]).toMatchObject({ rowId, columnId: intake(sim).columnId });
        expect(payload.events.every((event) => event.changeAgent === undefined)).toBe(true);
        expect(new Set(payload.events.map((event) => event.userId)).size).toBe(1);
    });

    it("echoes the write's Smartsheet-Change-Agent as changeAgent on its events", async () => {
        const { sim } = context;
        const receiver = await Receiver.start();
        await enabledHook(sim, receiver);
        await addRow(sim, "mine", "sheetwright");
        const [callback] = await receiver.waitForCallbacks(1);
        expect(callback!.body.events.every((event: any) => event.changeAgent === "sheetwright")).toBe(true);
    });

    it("reports updates, cleared cells and deleted rows, and column changes", async () => {
        const { sim } = context;
        const receiver = await Receiver.start();
        await enabledHook(sim, receiver);
        const rowId = await addRow(sim, "x");
        await receiver.waitForCallbacks(1);
        const { sheetId, columnId } = intake(sim);
        await api(sim, "PUT", `sheets/${sheetId}/rows`, [{ id: rowId, cells: [{ columnId, value: "y" }] }]);
        const [, updated] = await receiver.waitForCallbacks(2);
        expect(updated!.body.events.map((e: any) => `${e.objectType}.${e.eventType}`)).toEqual(["sheet.updated", "row.updated", "cell.updated"]);
        await api(sim, "DELETE", `sheets/${sheetId}/rows?ids=${rowId}`);
        const [, , deleted] = await receiver.waitForCallbacks(3);
        expect(deleted!.body.events).toContainEqual(expect.objectContaining({ objectType: "row", eventType: "deleted", id: rowId }));
        await api(sim, "PUT", `sheets/${sheetId}/columns/${columnId}`, { width: 200 });
        const [, , , column] = await receiver.waitForCallbacks(4);
        expect(column!.body.events).toContainEqual(expect.objectContaining({ objectType: "column", eventType: "updated", id: columnId }));
    });

    it("collects the writes of one debounce window into one callback", async () => {
        const { sim } = context;
        const debounceMs = 300; // wide enough for three writes on a busy machine
        await admin(sim, "POST", "config", { webhooks: { debounceMs } });
        const receiver = await Receiver.start();
        await enabledHook(sim, receiver);
        const start = Date.now();
        const rows = [await addRow(sim, "a"), await addRow(sim, "b"), await addRow(sim, "c")];
        const [callback] = await receiver.waitForCallbacks(1);
        expect(rowsCreatedIn(callback!)).toEqual(rows);
        expect(callback!.at - start).toBeGreaterThanOrEqual(debounceMs - 5);
        await sleep(100);
        expect(receiver.callbacks()).toHaveLength(1);
        const later = await addRow(sim, "d");
        const [, second] = await receiver.waitForCallbacks(2);
        expect(rowsCreatedIn(second!)).toEqual([later]);
    });

    it("sends one callback at a time: changes made while one runs wait for its answer and come in the next", async () => {
        const { sim } = context;
        await admin(sim, "POST", "config", { webhooks: { callbackTimeoutMs: 5_000 } }); // a slow answer, not a timeout
        const receiver = await Receiver.start();
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        receiver.answer = (_request, index) => (index === 0 ? { until: held } : {});
        await enabledHook(sim, receiver);
        const first = await addRow(sim, "first");
        await receiver.waitForCallbacks(1);
        const second = await addRow(sim, "second");
        const third = await addRow(sim, "third");
        await sleep(TIMING.debounceMs * 3);
        expect(receiver.callbacks()).toHaveLength(1); // the window has closed, but the first is still unanswered
        const releasedAt = Date.now();
        release();
        const [one, two] = await receiver.waitForCallbacks(2);
        expect(receiver.maxConcurrent).toBe(1);
        expect(rowsCreatedIn(one!)).toEqual([first]);
        expect(rowsCreatedIn(two!)).toEqual([second, third]);
        expect(two!.at).toBeGreaterThanOrEqual(releasedAt);
    });

    it("never delivers events made while the webhook was disabled", async () => {
        const { sim } = context;
        const receiver = await Receiver.start();
        const hook = await enabledHook(sim, receiver);
        expect((await api(sim, "PUT", `webhooks/${hook.id}`, { enabled: false })).body.result).toMatchObject({ enabled: false, status: "DISABLED_BY_OWNER" });
        await addRow(sim, "unseen");
        await sleep(TIMING.debounceMs * 2);
        await api(sim, "PUT", `webhooks/${hook.id}`, { enabled: true });
        const seen = await addRow(sim, "seen");
        const [callback] = await receiver.waitForCallbacks(1);
        expect(rowsCreatedIn(callback!)).toEqual([seen]);
    });

    it("fires once for identical webhooks (same sheet and callback URL): the oldest enabled one", async () => {
        const { sim } = context;
        const receiver = await Receiver.start();
        const older = await enabledHook(sim, receiver);
        await enabledHook(sim, receiver);
        await addRow(sim, "once");
        await receiver.waitForCallbacks(1);
        await sleep(TIMING.debounceMs * 2);
        expect(receiver.callbacks().map((callback) => callback.body.webhookId)).toEqual([older.id]);
    });

    it("signs with the new secret after a reset", async () => {
        const { sim } = context;
        const receiver = await Receiver.start();
        const hook = await enabledHook(sim, receiver);
        const secret = (await api(sim, "POST", `webhooks/${hook.id}/resetsharedsecret`)).body.result.sharedSecret;
        await addRow(sim, "signed");
        const [callback] = await receiver.waitForCallbacks(1);
        expect(callback!.headers["smartsheet-hmac-sha256"]).toBe(hmacOf(secret, callback!.raw));
    });
});

describe("retries and disabling", () => {
    it.each([
        ["500", { status: 500 }],
        ["404", { status: 404 }],
        ["429", { status: 429 }],
        ["a timeout", { delayMs: 300 }],
    ])("retries the same callback after %s with back-off, and a 200 ends it", async (_what, failure) => {
        const { sim } = context;
        const receiver = await Receiver.start();
        receiver.answer = (_request, index) => (index < 2 ? failure : {});
        const hook = await enabledHook(sim, receiver);
        await addRow(sim, "retried");
        const [a, b, c] = await receiver.waitForCallbacks(3);
        expect(new Set([a!.body.nonce, b!.body.nonce, c!.body.nonce]).size).toBe(1);
        expect(c!.raw).toBe(a!.raw);
        await sleep(TIMING.debounceMs);
        expect(receiver.callbacks()).toHaveLength(3);
        const now = await hookNow(sim, hook.id);
        expect(now).toMatchObject({ enabled: true, status: "ENABLED", stats: { lastCallbackAttemptRetryCount: 2, lastSuccessfulCallback: expect.any(String) } });
    });

    it("gives up after 14 retries: DISABLED_CALLBACK_FAILED, and later events are never sent", async () => {
        const { sim } = context;
        const receiver = await Receiver.start();
        receiver.answer = () => ({ status: 503 });
        const hook = await enabledHook(sim, receiver);
        await addRow(sim, "failing");
        await receiver.waitForCallbacks(15);
        await sleep(50);
        expect(receiver.callbacks()).toHaveLength(15);
        const gaps = receiver.callbacks().slice(1, 8).map((callback, i) => callback.at - receiver.callbacks()[i]!.at);
        expect(gaps[6]!).toBeGreaterThan(gaps[0]!); // exponential back-off
        expect(await hookNow(sim, hook.id)).toMatchObject({ enabled: false, status: "DISABLED_CALLBACK_FAILED", stats: { lastCallbackAttemptRetryCount: 14 } });
        receiver.answer = () => ({});
        await addRow(sim, "while disabled");
        await sleep(TIMING.debounceMs * 2);
        expect(receiver.callbacks()).toHaveLength(15);
    });

    it.each([201, 204, 302, 410])("disables at once, without retrying, on %i", async (status) => {
        const { sim } = context;
        const receiver = await Receiver.start();
        receiver.answer = () => ({ status, ...(status === 302 ? { headers: { Location: "https://example.com/" } } : {}) });
        const hook = await enabledHook(sim, receiver);
        await addRow(sim, "refused");
        await receiver.waitForCallbacks(1);
        await sleep(TIMING.debounceMs);
        expect(receiver.callbacks()).toHaveLength(1);
        expect(await hookNow(sim, hook.id)).toMatchObject({ enabled: false, status: "DISABLED_CALLBACK_FAILED" });
    });

    it("re-enables after DISABLED_CALLBACK_FAILED by passing verification again", async () => {
        const { sim } = context;
        const receiver = await Receiver.start();
        receiver.answer = (_request, index) => (index === 0 ? { status: 410 } : {});
        const hook = await enabledHook(sim, receiver);
        await addRow(sim, "gone");
        await receiver.waitForCallbacks(1);
        await sleep(20);
        expect((await api(sim, "PUT", `webhooks/${hook.id}`, { enabled: true })).body.result.status).toBe("ENABLED");
        const row = await addRow(sim, "back");
        const [, callback] = await receiver.waitForCallbacks(2);
        expect(rowsCreatedIn(callback!)).toEqual([row]);
    });
});

describe("status changes behind the owner's back", () => {
    it("a deleted sheet disables its webhook DISABLED_SCOPE_INACCESSIBLE with a signed status callback (newWebhookStatus)", async () => {
        const { sim } = context;
        const receiver = await Receiver.start();
        const hook = await enabledHook(sim, receiver);
        expect((await api(sim, "DELETE", `sheets/${intake(sim).sheetId}`)).status).toBe(200);
        const [callback] = await receiver.waitForCallbacks(1);
        expect(StatusCallback.parse(callback!.body)).toMatchObject({ webhookId: hook.id, newWebhookStatus: "DISABLED_SCOPE_INACCESSIBLE" });
        expect(callback!.headers["smartsheet-hmac-sha256"]).toBe(hmacOf(hook.sharedSecret, callback!.raw));
        expect(await hookNow(sim, hook.id)).toMatchObject({ enabled: false, status: "DISABLED_SCOPE_INACCESSIBLE" });
    });

    it("the admin API sets DISABLED_SCOPE_INACCESSIBLE and back to ENABLED, each with a status callback", async () => {
        const { sim } = context;
        const receiver = await Receiver.start();
        const hook = await enabledHook(sim, receiver);
        expect((await admin(sim, "POST", "webhookStatus", { webhookId: hook.id, status: "DISABLED_SCOPE_INACCESSIBLE" })).status).toBe(200);
        await receiver.waitForCallbacks(1);
        await addRow(sim, "unseen");
        await admin(sim, "POST", "webhookStatus", { webhookId: hook.id, status: "ENABLED" });
        const [, enabled] = await receiver.waitForCallbacks(2);
        expect(enabled!.body.newWebhookStatus).toBe("ENABLED");
        await sleep(TIMING.debounceMs * 2);
        expect(receiver.callbacks()).toHaveLength(2);
    });

    it.each([
        ["DISABLED_ADMINISTRATIVE", 403, 1154],
        ["DISABLED_APP_REVOKED", 403, 1153],
    ])("a webhook %s cannot be re-enabled by its owner (%i/%i)", async (status, httpStatus, errorCode) => {
        const { sim } = context;
        const receiver = await Receiver.start();
        const hook = await enabledHook(sim, receiver);
        await admin(sim, "POST", "webhookStatus", { webhookId: hook.id, status });
        expect(await hookNow(sim, hook.id)).toMatchObject({ enabled: false, status });
        await addRow(sim, "unseen");
        const response = await api(sim, "PUT", `webhooks/${hook.id}`, { enabled: true });
        expect(response.status).toBe(httpStatus);
        expect(ErrorShape.parse(response.body).errorCode).toBe(errorCode);
        await sleep(TIMING.debounceMs * 2);
        expect(receiver.callbacks()).toHaveLength(0);
    });

    it("DISABLED_CALLBACK_FAILED set behind the app's back is seen on GET and mended by re-enabling", async () => {
        const { sim } = context;
        const receiver = await Receiver.start();
        const hook = await enabledHook(sim, receiver);
        await admin(sim, "POST", "webhookStatus", { webhookId: hook.id, status: "DISABLED_CALLBACK_FAILED" });
        expect((await api(sim, "GET", "webhooks")).body.data[0]).toMatchObject({ enabled: false, status: "DISABLED_CALLBACK_FAILED" });
        expect((await api(sim, "PUT", `webhooks/${hook.id}`, { enabled: true })).body.result.status).toBe("ENABLED");
    });
});

describe("webhook faults", () => {
    async function faulted(rules: unknown[]): Promise<{ sim: RunningSimulator; receiver: Receiver; hook: any }> {
        const { sim } = context;
        const receiver = await Receiver.start();
        const hook = await enabledHook(sim, receiver);
        expect((await admin(sim, "POST", "webhookFaults", { rules: rules.map((rule) => ({ webhookId: hook.id, ...(rule as object) })) })).status).toBe(200);
        return { sim, receiver, hook };
    }

    it("drop: the callback is never sent, the webhook stays enabled and the next one arrives", async () => {
        const { sim, receiver, hook } = await faulted([{ kind: "drop" }]);
        await addRow(sim, "dropped");
        await sleep(TIMING.debounceMs * 2);
        expect(receiver.callbacks()).toHaveLength(0);
        const next = await addRow(sim, "next");
        const [callback] = await receiver.waitForCallbacks(1);
        expect(rowsCreatedIn(callback!)).toEqual([next]);
        expect((await hookNow(sim, hook.id)).status).toBe("ENABLED");
        expect(sim.core.webhookDeliveries()).toContainEqual(expect.objectContaining({ kind: "event", fault: "drop", status: null }));
    });

    it("duplicate: the same body (same nonce, same signature) arrives twice", async () => {
        const { sim, receiver } = await faulted([{ kind: "duplicate" }]);
        await addRow(sim, "twice");
        const [a, b] = await receiver.waitForCallbacks(2);
        expect(b!.raw).toBe(a!.raw);
        expect(b!.headers["smartsheet-hmac-sha256"]).toBe(a!.headers["smartsheet-hmac-sha256"]);
    });

    it("delay: the callback comes late, overtaken by the next one", async () => {
        const { sim, receiver } = await faulted([{ kind: "delay", delayMs: 300 }]);
        const late = await addRow(sim, "late");
        await sleep(TIMING.debounceMs * 2);
        const early = await addRow(sim, "early");
        const [first, second] = await receiver.waitForCallbacks(2);
        expect(rowsCreatedIn(first!)).toEqual([early]);
        expect(rowsCreatedIn(second!)).toEqual([late]);
    });

    it("reorder: the callback is held until the next one has been answered, then sent", async () => {
        const { sim, receiver } = await faulted([{ kind: "reorder" }]);
        const one = await addRow(sim, "one");
        await sleep(TIMING.debounceMs * 2);
        expect(receiver.callbacks()).toHaveLength(0);
        const two = await addRow(sim, "two");
        const [first, second] = await receiver.waitForCallbacks(2);
        expect(rowsCreatedIn(first!)).toEqual([two]);
        expect(rowsCreatedIn(second!)).toEqual([one]);
    });

    it("rules apply after `skip` callbacks, `times` times, and are listed and cleared through the admin API", async () => {
        const { sim, receiver } = await faulted([{ kind: "drop", skip: 1, times: 1 }]);
        expect((await admin(sim, "GET", "webhookFaults")).body.rules).toMatchObject([{ kind: "drop", skip: 1, times: 1, remaining: 1 }]);
        const a = await addRow(sim, "a");
        await receiver.waitForCallbacks(1);
        await addRow(sim, "b (dropped)");
        await sleep(TIMING.debounceMs * 2);
        const c = await addRow(sim, "c");
        const [first, second] = await receiver.waitForCallbacks(2);
        expect([rowsCreatedIn(first!), rowsCreatedIn(second!)]).toEqual([[a], [c]]);
        expect((await admin(sim, "GET", "webhookFaults")).body.rules).toEqual([]);
    });

    it("the admin API lists every token's webhooks with their deliveries", async () => {
        const { sim } = context;
        const receiver = await Receiver.start();
        await createHook(sim, receiver, { name: "theirs" }, OTHER_TOKEN);
        await enabledHook(sim, receiver);
        const listing = (await admin(sim, "GET", "webhooks")).body;
        expect(listing.webhooks.map((hook: any) => [hook.name, hook.owner])).toEqual([
            ["Sheetwright intake", TOKEN],
            ["theirs", OTHER_TOKEN],
        ]);
        expect(listing.deliveries).toEqual([expect.objectContaining({ kind: "verification", status: 200 })]);
    });
});

describe("the simulator's lifecycle", () => {
    it("a reset forgets every webhook and cancels pending callbacks", async () => {
        const { sim } = context;
        const receiver = await Receiver.start();
        await enabledHook(sim, receiver);
        await addRow(sim, "pending");
        sim.core.reset();
        await sleep(TIMING.debounceMs * 2);
        expect(receiver.callbacks()).toHaveLength(0);
        expect((await api(sim, "GET", "webhooks")).body.totalCount).toBe(0);
    });

    it("stopping the simulator clears its timers: a callback pending in the debounce window is never sent", async () => {
        const own = await startTestSimulator({ webhooks: TIMING });
        const receiver = await Receiver.start();
        await enabledHook(own, receiver);
        await addRow(own, "pending");
        await own.close();
        await sleep(TIMING.debounceMs * 2);
        expect(receiver.callbacks()).toHaveLength(0);
    });
});
