/**
 * The adapter's webhook calls, through the official SDK, against the simulator's webhooks (whose
 * own contract test/sim/webhooks.test.ts pins): what the keeper and the receiver rely on.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { PermanentSmartsheetError } from "../../src/shared/smartsheet/errors";
import { SdkSmartsheet } from "../../src/shared/smartsheet/SdkSmartsheet";
import { SHEETWRIGHT_CHANGE_AGENT } from "../../src/shared/smartsheet/SmartsheetPort";
import type { RunningSimulator } from "../../tools/smartsheet-sim";
import { TOKEN, useSimulator } from "../sim/simTestKit";

const context = useSimulator({ webhooks: { debounceMs: 30, retryBaseMs: 5, retryLongMs: 10, callbackTimeoutMs: 500 } });

function adapter(sim: RunningSimulator): SdkSmartsheet {
    return new SdkSmartsheet({ accessToken: TOKEN, baseUrl: sim.baseUrl, requestsPerMinute: 10_000, callTimeoutMs: 5_000 });
}

interface Received {
    headers: IncomingHttpHeaders;
    body: string;
}

const servers: Server[] = [];
afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A receiver that answers every challenge and records what it was sent. */
async function receiver(): Promise<{ url: string; received: Received[] }> {
    const received: Received[] = [];
    const server = createServer((request, response) => {
        let body = "";
        request.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
        request.on("end", () => {
            received.push({ headers: request.headers, body });
            const challenge = request.headers["smartsheet-hook-challenge"];
            response.writeHead(200, typeof challenge === "string" ? { "Smartsheet-Hook-Response": challenge } : {});
            response.end();
        });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/intake/webhook?code=k`, received };
}

async function until<T>(read: () => T | undefined, what: string): Promise<T> {
    for (let waited = 0; waited < 5_000; waited += 20) {
        const value = read();
        if (value !== undefined) return value;
        await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`timed out waiting for ${what}`);
}

describe("the adapter's webhook calls", () => {
    it("creates a webhook disabled, lists it and reads its secret, enables it through the receiver's challenge, deletes it", async () => {
        const smartsheet = adapter(context.sim);
        const intakeSheetId = context.sim.core.state().intakeSheetId!;
        const { url, received } = await receiver();

        const created = await smartsheet.createWebhook({ name: "Sheetwright intake acme", callbackUrl: url, scopeObjectId: intakeSheetId });
        expect(created).toMatchObject({ name: "Sheetwright intake acme", scope: "sheet", scopeObjectId: intakeSheetId, enabled: false, status: "NEW_NOT_VERIFIED" });
        expect(await smartsheet.listWebhooks()).toEqual([expect.objectContaining({ id: created.id, callbackUrl: url })]);
        const read = await smartsheet.getWebhook(created.id);
        expect(read.sharedSecret).toMatch(/.{20,}/);

        const enabled = await smartsheet.updateWebhook(created.id, { enabled: true });
        expect(enabled).toMatchObject({ enabled: true, status: "ENABLED" });
        expect(received).toHaveLength(1);
        expect(received[0]!.headers["smartsheet-hook-challenge"]).toBeTruthy();

        await smartsheet.deleteWebhook(created.id);
        await smartsheet.deleteWebhook(created.id);
        expect(await smartsheet.listWebhooks()).toEqual([]);
        await expect(smartsheet.getWebhook(created.id)).rejects.toBeInstanceOf(PermanentSmartsheetError);
    });

    it("lists every page of the token's webhooks", async () => {
        const smartsheet = adapter(context.sim);
        const intakeSheetId = context.sim.core.state().intakeSheetId!;
        const { url } = await receiver();
        for (let index = 0; index < 105; index++) await smartsheet.createWebhook({ name: `hook ${String(index).padStart(3, "0")}`, callbackUrl: url, scopeObjectId: intakeSheetId });
        const listed = await smartsheet.listWebhooks();
        expect(listed).toHaveLength(105);
        expect(new Set(listed.map((hook) => hook.id)).size).toBe(105);
    });

    it(`signs every request as ${SHEETWRIGHT_CHANGE_AGENT}: the events of the app's own writes come back with that change agent`, async () => {
        const smartsheet = adapter(context.sim);
        const intakeSheetId = context.sim.core.state().intakeSheetId!;
        const { url, received } = await receiver();
        const hook = await smartsheet.createWebhook({ name: "Sheetwright intake acme", callbackUrl: url, scopeObjectId: intakeSheetId });
        await smartsheet.updateWebhook(hook.id, { enabled: true });

        const sheet = await smartsheet.getSheet(intakeSheetId);
        const row = sheet.rows[0]!;
        const column = sheet.columns.find((candidate) => !candidate.primary)!;
        await smartsheet.updateRows(intakeSheetId, [{ id: row.id, cells: [{ columnId: column.id, value: "changed by the app" }] }]);

        const callback = await until(() => received.find((request) => request.headers["smartsheet-hmac-sha256"]), "the event callback");
        const events = (JSON.parse(callback.body) as { events: Array<{ changeAgent?: string }> }).events;
        expect(events.length).toBeGreaterThan(0);
        expect(events.every((event) => event.changeAgent === SHEETWRIGHT_CHANGE_AGENT)).toBe(true);
    });
});
