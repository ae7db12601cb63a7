import { createHmac } from "node:crypto";
import { createClient } from "smartsheet";
import { describe, expect, it } from "vitest";
import { FUNCTION_KEY, startE2E, useE2E, waitFor, type E2E } from "../helpers/e2e";
import { approvedRequest } from "../helpers/intakeSheet";
import { inspectProduct, intakeRow } from "../helpers/inspectProduct";
import { jobIn } from "../helpers/recoveryKit";

/** A customer approving a request on the intake sheet: the official SDK, no change agent. */
async function customerApproves(e2e: E2E, code: string): Promise<string> {
    const intakeSheetId = e2e.sim.core.state().intakeSheetId!;
    const sheet = e2e.sim.core.state().sheets.find((candidate) => candidate.id === intakeSheetId)!;
    const columns = new Map(sheet.columns.map((column) => [column.title, column.id]));
    const customer = createClient({ accessToken: "sim-token", baseUrl: e2e.sim.baseUrl });
    const added = (await customer.sheets.addRows({
        sheetId: intakeSheetId,
        body: [{ toBottom: true, cells: Object.entries(approvedRequest(code)).map(([title, value]) => ({ columnId: columns.get(title), value })) }],
    })) as { result: Array<{ id: number }> };
    return `${intakeSheetId}-${added.result[0]!.id}`;
}

describe("approvals reach the app through Smartsheet's webhooks, in the local host", { timeout: 180_000 }, () => {
    const stack = useE2E(startE2E);

    it("the app keeps its webhook from start-up and provisions an approval from its callback alone, no sweep fired by hand or by a timer", async () => {
        const e2e = await stack.start({ webhooks: true, simulator: { webhooks: { debounceMs: 300 } } });
        // Start-up: the keeper made the intake sheet's webhook and enabled it through the app's own receiver.
        const hook = await waitFor(async () => e2e.sim.core.webhookList().find((candidate) => candidate.enabled), "the intake webhook to be enabled", 60_000);
        expect(e2e.sim.core.webhookList()).toHaveLength(1);
        expect(hook.callbackUrl).toBe(`${e2e.settings.WEBHOOK_BASE_URL}api/intake/webhook?code=${FUNCTION_KEY}`);

        const key = await customerApproves(e2e, "IND-7701");
        const done = await jobIn(e2e, key, "done", 120_000);
        expect(done.state).toBe("done");
        const state = e2e.sim.core.state();
        expect(inspectProduct(state, "IND-7701").sheets).toHaveLength(7);
        await waitFor(async () => intakeRow(e2e.sim.core.state(), "IND-7701")?.Status === "Done" || undefined, "the intake row's Done");

        const lines = e2e.host.logs.join("\n");
        expect(lines).toMatch(/intake sweep of site default \(webhook/);
        // The timers never fired: only webhook sweeps ran.
        expect(lines).not.toMatch(/intake sweep of site default \(routine/);
        // Every callback was answered 200, the app's own Queued and Done among them (which woke nothing more).
        const events = e2e.sim.core.webhookDeliveries().filter((delivery) => delivery.kind === "event");
        expect(events.length).toBeGreaterThan(0);
        expect(events.filter((delivery) => delivery.status !== 200)).toEqual([]);
        expect(e2e.sim.core.webhookList()).toHaveLength(1);
    });

    it("refuses forged callbacks through the host: no key 401, an unknown webhook 403, a bad signature 401; none starts a sweep", async () => {
        const e2e = await stack.start({ webhooks: true, simulator: { webhooks: { debounceMs: 300 } } });
        const hook = await waitFor(async () => e2e.sim.core.webhookList().find((candidate) => candidate.enabled), "the intake webhook to be enabled", 60_000);
        const body = (webhookId: number) =>
            JSON.stringify({ nonce: "forged", timestamp: new Date().toISOString(), webhookId, scope: "sheet", scopeObjectId: hook.scopeObjectId, events: [{ objectType: "row", eventType: "created", id: 1, userId: 1, timestamp: "t" }] });
        const post = (path: string, text: string, secret: string) =>
            fetch(`${e2e.host.url}/api/${path}`, { method: "POST", body: text, headers: { "Smartsheet-Hmac-SHA256": createHmac("sha256", secret).update(text).digest("hex") } });
        const sweepsBefore = e2e.host.logs.filter((line) => line.includes("intake sweep of site default (webhook")).length;

        expect((await post("intake/webhook", body(hook.id), hook.sharedSecret)).status).toBe(401);
        expect((await post(`intake/webhook?code=${FUNCTION_KEY}`, body(hook.id + 99), hook.sharedSecret)).status).toBe(403);
        expect((await post(`intake/webhook?code=${FUNCTION_KEY}`, body(hook.id), "not the secret")).status).toBe(401);
        // A genuine one still passes.
        expect((await post(`intake/webhook?code=${FUNCTION_KEY}`, body(hook.id), hook.sharedSecret)).status).toBe(200);
        await new Promise((resolve) => setTimeout(resolve, 3_000));
        const sweepsAfter = e2e.host.logs.filter((line) => line.includes("intake sweep of site default (webhook")).length;
        expect(sweepsAfter - sweepsBefore).toBeLessThanOrEqual(1);
        expect(e2e.host.logs.join("\n")).toMatch(/webhook receiver refused 1 request \(403\)/);
    });
});
