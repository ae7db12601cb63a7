/**
 * The fast path, below the host: the keeper keeps one enabled webhook per intake sheet, and the
 * receiver turns Smartsheet's signed callbacks into one coalesced, key-only sweep request — against
 * the simulator's webhooks (a real HTTP receiver in front of `receiveCallback`) and Azurite.
 */
import { createHmac } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it, type TestContext } from "vitest";
import type { Alert } from "../../src/shared/alerts/AlertChannel";
import type { Logger } from "../../src/shared/logger";
import { RefusalTally, receiveCallback, type ReceiverDeps } from "../../src/shared/webhooks/receiveCallback";
import { keepWebhooks, type KeeperDeps } from "../../src/shared/webhooks/keepWebhooks";
import { SweepRequests, type SweepRequestMessage } from "../../src/shared/webhooks/SweepRequests";
import { WebhookCreations } from "../../src/shared/webhooks/WebhookCreations";
import { WebhookDirectory } from "../../src/shared/webhooks/WebhookDirectory";
import { Sites } from "../../src/shared/sites/Sites";
import { sweepSite } from "../../src/shared/intake/intakeSweep";
import { isoWeek, WebhookHealth } from "../../src/shared/intake/WebhookHealth";
import { webhookHealthReport } from "../../src/shared/recovery/jobsApi";
import { sweepRequested, WebhookSweepToRetryError } from "../../src/shared/webhooks/sweepRequested";
import { approvedRequest } from "../helpers/intakeSheet";
import { startProvisioningHarness, type Harness } from "../helpers/provisioningHarness";
import { sdk } from "../sim/simTestKit";

const FUNCTION_KEY = "test-function-key-0123456789";
const DEBOUNCE_MS = 40;

interface Stack {
    h: Harness;
    keeper: KeeperDeps;
    receiver: ReceiverDeps;
    sent: Array<{ message: SweepRequestMessage; delaySeconds: number }>;
    alerts: Alert[];
    lines: string[];
    /** Every answer the receiver gave, by status. */
    answers: number[];
    receiverUrl: string;
    close(): Promise<void>;
}

/** A receiver on a port of its own, the app's modules behind it, and the harness pointed at it as WEBHOOK_BASE_URL. */
async function startStack(test: Pick<TestContext, "onTestFinished">, options: { slotMs?: number; refreshEveryMs?: number; slotClock?: () => number } = {}): Promise<Stack> {
    let handle: ReceiverDeps | undefined;
    const answers: number[] = [];
    const server: Server = createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on("data", (chunk: Buffer) => chunks.push(chunk));
        request.on("end", async () => {
            const answer = await receiveCallback(handle!, {
                header: (name) => {
                    const value = request.headers[name.toLowerCase()];
                    return typeof value === "string" ? value : null;
                },
                body: Buffer.concat(chunks).toString("utf8"),
            });
            answers.push(answer.status ?? 200);
            response.writeHead(answer.status ?? 200, { "content-type": "application/json", ...(answer.headers as Record<string, string>) });
            response.end(answer.jsonBody === undefined ? "" : JSON.stringify(answer.jsonBody));
        });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const h = await startProvisioningHarness({
        simulator: { webhooks: { debounceMs: DEBOUNCE_MS, retryBaseMs: 5, retryLongMs: 10, callbackTimeoutMs: 2_000 } },
        settings: { WEBHOOK_BASE_URL: receiverUrl, WEBHOOK_FUNCTION_KEY: FUNCTION_KEY },
    });
    const sent: Stack["sent"] = [];
    const lines: string[] = [];
    const log: Logger = { info: (line) => lines.push(`info ${line}`), warn: (line) => lines.push(`warn ${line}`), error: (line) => lines.push(`error ${line}`) };
    const directory = new WebhookDirectory(h.sites, () => Date.now(), options.refreshEveryMs ?? 0);
    const sweeps = new SweepRequests(h.table, { send: async (message, delaySeconds) => void sent.push({ message, delaySeconds }) }, options.slotMs ?? 60_000, options.slotClock ?? (() => Date.now()));
    const alerts: Alert[] = [];
    handle = { directory, sweeps, refusals: new RefusalTally(() => Date.now()), log };
    const keeper: KeeperDeps = {
        ...h.deps,
        log,
        alerts: { send: async (alert) => void alerts.push(alert) },
        directory,
        sweeps,
        creations: new WebhookCreations(h.table),
        functionKey: FUNCTION_KEY,
        health: new WebhookHealth(h.table),
    };
    const stack: Stack = {
        h,
        keeper,
        receiver: handle,
        sent,
        alerts,
        lines,
        answers,
        receiverUrl,
        close: async () => {
            await h.close();
            await new Promise((resolve) => server.close(resolve));
        },
    };
    test.onTestFinished(() => stack.close());
    return stack;
}

/** Rows typed by a customer: the official SDK, without Sheetwright's change agent. */
function customerAdds(stack: Stack, rows: Array<Record<string, string | boolean>>): Promise<void> {
    return customerAddsTo(stack.h, rows);
}

/** Forgets the sweep the keeper asked for when it enabled the webhook (its slot would coalesce the test's callbacks). */
async function forgetSweepRequests(stack: Stack): Promise<void> {
    stack.sent.length = 0;
    await stack.h.table.deleteEntity("webhook-sweep", "default").catch(() => undefined);
}

const webhooksOf = (stack: Stack) => stack.h.sim.core.webhookList().filter((hook) => hook.scopeObjectId === stack.h.site.intakeSheetId);
const eventDeliveries = (stack: Stack) => stack.h.sim.core.webhookDeliveries().filter((delivery) => delivery.kind === "event");

async function until(condition: () => boolean, what: string): Promise<void> {
    for (let waited = 0; waited < 10_000; waited += 20) {
        if (condition()) return;
        await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`timed out waiting for ${what}`);
}

describe.concurrent("the webhook keeper", () => {
    it("creates one enabled webhook per intake sheet, verified through the receiver, and adopts it on every later run at one call", async (test) => {
        const stack = await startStack(test);
        expect(await keepWebhooks(stack.keeper, "start-up")).toEqual(new Map([["default", "created"]]));
        const [hook, ...others] = webhooksOf(stack);
        expect(others).toEqual([]);
        expect(hook).toMatchObject({ enabled: true, status: "ENABLED", name: `Sheetwright intake default @ ${new URL(stack.receiverUrl).host}` });
        expect(hook!.callbackUrl).toBe(`${stack.receiverUrl}api/intake/webhook?code=${FUNCTION_KEY}`);

        const before = stack.h.site.smartsheet.calls().total;
        expect(await keepWebhooks(stack.keeper, "reaper run")).toEqual(new Map([["default", "enabled"]]));
        expect(stack.h.site.smartsheet.calls().total - before).toBe(1);
        expect(webhooksOf(stack)).toHaveLength(1);
    });

    it("never makes a second webhook when two instances keep at once, nor on a restart with an empty memory", async (test) => {
        const stack = await startStack(test);
        const secondInstance: KeeperDeps = { ...stack.keeper, directory: new WebhookDirectory(stack.h.sites, () => Date.now(), 0) };
        const outcomes = await Promise.all([keepWebhooks(stack.keeper, "start-up"), keepWebhooks(secondInstance, "start-up")]);
        expect(outcomes.map((outcome) => outcome.get("default")).sort()).toEqual(["created", "creating elsewhere"]);
        const restarted: KeeperDeps = { ...stack.keeper, directory: new WebhookDirectory(stack.h.sites, () => Date.now(), 0) };
        expect((await keepWebhooks(restarted, "start-up")).get("default")).toBe("enabled");
        expect(webhooksOf(stack)).toHaveLength(1);
    });

    it("deletes a duplicate made by a create whose answer was lost, keeping the enabled one", async (test) => {
        const stack = await startStack(test);
        await keepWebhooks(stack.keeper, "start-up");
        const kept = webhooksOf(stack)[0]!;
        const duplicate = await stack.h.site.smartsheet.createWebhook({ name: kept.name, callbackUrl: kept.callbackUrl, scopeObjectId: kept.scopeObjectId });
        expect(webhooksOf(stack)).toHaveLength(2);
        await keepWebhooks(stack.keeper, "reaper run");
        expect(webhooksOf(stack).map((hook) => hook.id)).toEqual([kept.id]);
        expect(stack.lines.some((line) => line.includes(`second intake webhook (${duplicate.id}`))).toBe(true);
    });

    it("enables again a webhook Smartsheet disabled after failed callbacks, and asks for the sweep of what it missed", async (test) => {
        const stack = await startStack(test);
        await keepWebhooks(stack.keeper, "start-up");
        const hook = webhooksOf(stack)[0]!;
        await forgetSweepRequests(stack);
        stack.h.sim.core.setWebhookStatus(hook.id, "DISABLED_CALLBACK_FAILED");
        expect((await keepWebhooks(stack.keeper, "reaper run")).get("default")).toBe("re-enabled");
        expect(webhooksOf(stack)[0]).toMatchObject({ id: hook.id, enabled: true, status: "ENABLED" });
        expect(stack.sent.map((sent) => sent.message.site)).toEqual(["default"]);
        expect(stack.alerts).toEqual([]);
    });

    it("points the webhook at the new callback URL when the function key changed", async (test) => {
        const stack = await startStack(test);
        await keepWebhooks(stack.keeper, "start-up");
        const rotated: KeeperDeps = { ...stack.keeper, functionKey: "rotated-function-key-98765" };
        expect((await keepWebhooks(rotated, "reaper run")).get("default")).toBe("re-enabled");
        expect(webhooksOf(stack)).toEqual([expect.objectContaining({ enabled: true, callbackUrl: `${stack.receiverUrl}api/intake/webhook?code=rotated-function-key-98765` })]);
    });

    it("tells ops once, across runs, of a webhook Smartsheet disabled for good, and leaves it alone", async (test) => {
        const stack = await startStack(test);
        await keepWebhooks(stack.keeper, "start-up");
        const hook = webhooksOf(stack)[0]!;
        stack.h.sim.core.setWebhookStatus(hook.id, "DISABLED_ADMINISTRATIVE");
        for (let run = 0; run < 3; run++) expect((await keepWebhooks(stack.keeper, "reaper run")).get("default")).toBe("off");
        expect(stack.alerts).toEqual([expect.objectContaining({ event: "webhook.disabled", site: "default", webhookId: hook.id, status: "DISABLED_ADMINISTRATIVE" })]);
        expect(webhooksOf(stack)[0]).toMatchObject({ enabled: false, status: "DISABLED_ADMINISTRATIVE" });
        // The secret and the function key never reach a line.
        const secret = stack.h.sim.core.webhookList()[0]!.sharedSecret;
        expect(stack.lines.join("\n")).not.toContain(secret);
        expect(stack.lines.join("\n")).not.toContain(FUNCTION_KEY);
    });
});

describe.concurrent("the webhook keeper and a callback URL Smartsheet refuses", () => {
    it("tells ops once that the webhook cannot be made, quoting Smartsheet's answer without the function key", async (test) => {
        const stack = await startStack(test);
        // A port Smartsheet never calls (configuration refuses it; here it reaches Smartsheet as if it had not).
        const site = { ...stack.h.site, webhookBaseUrl: "https://sheetwright.example.com:7071/" };
        const keeper: KeeperDeps = { ...stack.keeper, sites: new Sites([site]) };
        for (let run = 0; run < 2; run++) expect((await keepWebhooks(keeper, "reaper run")).get("default")).toBe("off");
        expect(stack.alerts).toEqual([expect.objectContaining({ event: "webhook.disabled", status: "REFUSED", reason: expect.stringMatching(/Smartsheet refused to create site default's intake webhook/) })]);
        expect(JSON.stringify(stack.alerts)).not.toContain(FUNCTION_KEY);
        expect(stack.lines.join("\n")).not.toContain(FUNCTION_KEY);
        expect(webhooksOf(stack)).toEqual([]);
    });
});

describe.concurrent("the webhook keeper watching the health figure", () => {
    it("tells ops once when a week's rows no webhook announced jump past three times the weeks before, and not below five", async (test) => {
        const stack = await startStack(test);
        await keepWebhooks(stack.keeper, "start-up");
        const health = stack.keeper.health!;
        const now = new Date();
        await health.add("default", new Date(now.getTime() - 7 * 86_400_000), 1);
        await health.add("default", now, 3);
        await keepWebhooks(stack.keeper, "reaper run");
        expect(stack.alerts).toEqual([]);
        await health.add("default", now, 2);
        await keepWebhooks(stack.keeper, "reaper run");
        await keepWebhooks(stack.keeper, "reaper run");
        expect(stack.alerts).toEqual([expect.objectContaining({ event: "webhook.disabled", site: "default", status: "UNANNOUNCED", reason: expect.stringMatching(/found 5 intake rows .* against at most 1 a week/) })]);
    });
});

describe.concurrent("the webhook receiver", () => {
    it("turns a customer's approval into one key-only sweep request for its site, visible at the end of the slot", async (test) => {
        const stack = await startStack(test);
        await keepWebhooks(stack.keeper, "start-up");
        await forgetSweepRequests(stack);
        await customerAdds(stack, [approvedRequest("IND-7001")]);
        await until(() => stack.sent.length > 0, "the sweep request");
        expect(stack.sent).toEqual([{ message: { v: 1, site: "default", slot: expect.any(Number) }, delaySeconds: expect.any(Number) }]);
        expect(stack.sent[0]!.delaySeconds).toBeGreaterThanOrEqual(1);
        expect(stack.sent[0]!.delaySeconds).toBeLessThanOrEqual(60);
    });

    it("coalesces many callbacks within one slot into one sweep request, and a duplicated callback too", async (test) => {
        // The slot's clock stands still: on a loaded machine the callbacks may otherwise straddle the turn of a slot (two requests, rightly).
        const slotTime = Date.now();
        const stack = await startStack(test, { slotClock: () => slotTime });
        await keepWebhooks(stack.keeper, "start-up");
        await forgetSweepRequests(stack);
        stack.h.sim.core.setWebhookFaults([{ kind: "duplicate", times: 3 }]);
        for (let change = 0; change < 4; change++) {
            await customerAdds(stack, [approvedRequest(`IND-71${change}0`)]);
            await new Promise((resolve) => setTimeout(resolve, DEBOUNCE_MS * 3));
        }
        await until(() => eventDeliveries(stack).length >= 4, "four callbacks");
        expect(stack.answers.filter((status) => status !== 200)).toEqual([]);
        expect(stack.sent).toHaveLength(1);
    });

    it("ignores the events of the app's own writes", async (test) => {
        const stack = await startStack(test);
        await keepWebhooks(stack.keeper, "start-up");
        await forgetSweepRequests(stack);
        const sheet = await stack.h.site.smartsheet.getSheet(stack.h.site.intakeSheetId);
        const column = sheet.columns.find((candidate) => candidate.title === "Product Name")!;
        await stack.h.site.smartsheet.updateRows(stack.h.site.intakeSheetId, [{ id: sheet.rows[0]!.id, cells: [{ columnId: column.id, value: "renamed by the app" }] }]);
        await until(() => eventDeliveries(stack).length > 0, "the callback of the app's own write");
        expect(stack.answers.at(-1)).toBe(200);
        expect(stack.sent).toEqual([]);
    });

    it("refuses a callback of a webhook that is not the app's (403) and a forged signature (401): neither asks for a sweep, and the log says so once with the count, never the body", async (test) => {
        const stack = await startStack(test, { refreshEveryMs: 60_000 });
        await keepWebhooks(stack.keeper, "start-up");
        await forgetSweepRequests(stack);
        const hook = webhooksOf(stack)[0]!;
        const post = async (webhookId: number, secret: string) => {
            const body = JSON.stringify({ nonce: "n", timestamp: new Date().toISOString(), webhookId, scope: "sheet", scopeObjectId: hook.scopeObjectId, events: [{ objectType: "row", eventType: "created", id: 1, userId: 1, timestamp: "t" }], marker: "BODY-MARKER" });
            const signature = createHmac("sha256", secret).update(body).digest("hex");
            const response = await fetch(`${stack.receiverUrl}api/intake/webhook`, { method: "POST", body, headers: { "Smartsheet-Hmac-SHA256": signature } });
            return response.status;
        };
        for (let attempt = 0; attempt < 3; attempt++) expect(await post(hook.id + 1000, hook.sharedSecret)).toBe(403);
        for (let attempt = 0; attempt < 3; attempt++) expect(await post(hook.id, "a secret that is not the webhook's")).toBe(401);
        expect(stack.sent).toEqual([]);
        const refusals = stack.lines.filter((line) => line.includes("webhook receiver refused"));
        expect(refusals).toHaveLength(2);
        expect(stack.lines.join("\n")).not.toContain("BODY-MARKER");
        // A forged id costs Smartsheet one directory read per refresh period, not one per callback.
        expect(stack.h.sim.core.calls().log.filter((entry) => entry.op === "listWebhooks").length).toBeLessThanOrEqual(2);
    });

    it("learns a webhook another instance made, and a secret reset behind its back, from Smartsheet", async (test) => {
        const stack = await startStack(test);
        const otherInstance: KeeperDeps = { ...stack.keeper, directory: new WebhookDirectory(stack.h.sites, () => Date.now(), 0) };
        await keepWebhooks(otherInstance, "start-up");
        await forgetSweepRequests(stack);
        await customerAdds(stack, [approvedRequest("IND-7301")]);
        await until(() => stack.sent.length === 1, "the sweep request through a webhook this instance did not make");

        const hook = webhooksOf(stack)[0]!;
        await sdk(stack.h.sim).webhooks.resetSharedSecret({ webhookId: hook.id });
        await forgetSweepRequests(stack);
        await customerAdds(stack, [approvedRequest("IND-7302")]);
        await until(() => stack.sent.length === 1, "the sweep request after the secret was reset");
        expect(stack.answers.filter((status) => status !== 200)).toEqual([]);
    });
});

describe.concurrent("the receiver's health figure", () => {
    async function harnessTenMinutesOn(test: Pick<TestContext, "onTestFinished">, settings: Record<string, string>) {
        const clock = { offsetMs: -10 * 60_000 };
        const h = await startProvisioningHarness({ simulator: { clock: () => Date.now() + clock.offsetMs }, settings });
        test.onTestFinished(() => h.close());
        h.sim.core.reset();
        clock.offsetMs = 0;
        return h;
    }

    it("a timer sweep of a webhook site counts the rows it acted on that changed longer ago than a webhook takes, per week; the webhook's own sweep and fresh rows count nothing", async (test) => {
        const h = await harnessTenMinutesOn(test, { WEBHOOK_BASE_URL: "https://sheetwright.example.com", WEBHOOK_FUNCTION_KEY: FUNCTION_KEY });
        const routine = await sweepSite(h.deps, h.site, "routine");
        expect(routine.queued).toHaveLength(3);
        expect(routine.unannounced).toEqual(routine.queued);
        expect(h.deps.logs.some((line) => /intake sweep of site default \(routine, .*3 found that no webhook announced/.test(line))).toBe(true);

        await customerAddsTo(h, [approvedRequest("IND-7401")]);
        const fresh = await sweepSite(h.deps, h.site, "routine");
        expect(fresh.queued).toHaveLength(1);
        expect(fresh.unannounced).toEqual([]);
        await customerAddsTo(h, [approvedRequest("IND-7402")]);
        expect((await sweepSite(h.deps, h.site, "webhook")).unannounced).toBeUndefined();

        const report = await webhookHealthReport(h.deps, new Date());
        const weeks = (report.jsonBody as { sites: Array<{ site: string; webhook: boolean; weeks: Array<{ week: string; unannounced: number }> }> }).sites[0]!;
        expect(weeks).toMatchObject({ site: "default", webhook: true });
        expect(weeks.weeks).toHaveLength(4);
        expect(weeks.weeks.at(-1)).toEqual({ week: isoWeek(new Date()), unannounced: 3 });
        expect(weeks.weeks.slice(0, 3).every((week) => week.unannounced === 0)).toBe(true);
    });

    it("a site on timer sweeps alone counts nothing and is listed without figures", async (test) => {
        const h = await harnessTenMinutesOn(test, {});
        const routine = await sweepSite(h.deps, h.site, "routine");
        expect(routine.queued).toHaveLength(3);
        expect(routine.unannounced).toBeUndefined();
        expect((await webhookHealthReport(h.deps, new Date())).jsonBody).toEqual({ sites: [{ site: "default", webhook: false }] });
    });

    it("names ISO weeks as ISO 8601 does at the turn of a year", () => {
        expect(isoWeek(new Date("2026-12-03T12:00:00Z"))).toBe("2026-W49");
        expect(isoWeek(new Date("2027-01-01T00:00:00Z"))).toBe("2026-W53");
        expect(isoWeek(new Date("2025-12-29T00:00:00Z"))).toBe("2026-W01");
    });
});

/** Rows typed by a customer on the harness's intake sheet. */
describe.concurrent("the sweep a webhook asked for", () => {
    const request = { v: 1, site: "default", slot: 1 };

    it("a webhook sweep that failed for a passing reason is asked for again through the queue, not left to the timer's half hour", async (test) => {
        const h = await startProvisioningHarness();
        test.onTestFinished(() => h.close());
        h.sim.core.setFaults([{ op: "getSheet", kind: "html502", times: 1_000 }]);
        const failed = sweepRequested(h.deps, request);
        await expect(failed).rejects.toThrow(WebhookSweepToRetryError);
        await expect(failed).rejects.toThrow(/the webhook sweep of site default failed \(.*\); the queue delivers its request again/);
        expect(h.deps.enqueued).toEqual([]);

        h.sim.core.setFaults([]);
        await sweepRequested(h.deps, request);
        expect(h.deps.enqueued).toHaveLength(3);
    });

    it("a webhook sweep that failed for a reason a person must fix is not asked for again: the error line and the timer's sweep carry it", async (test) => {
        const h = await startProvisioningHarness();
        test.onTestFinished(() => h.close());
        h.sim.core.setFaults([{ op: "getSheet", kind: "error1004", times: 1_000 }]);
        await sweepRequested(h.deps, request);
        expect(h.deps.enqueued).toEqual([]);
        expect(h.deps.logs.some((line) => /webhook sweep: site default failed: .*1004/.test(line))).toBe(true);
    });
});

async function customerAddsTo(h: Harness, rows: Array<Record<string, string | boolean>>): Promise<void> {
    const sheet = h.sim.core.state().sheets.find((candidate) => candidate.id === h.site.intakeSheetId)!;
    const columns = new Map(sheet.columns.map((column) => [column.title, column.id]));
    await sdk(h.sim).sheets.addRows({
        sheetId: h.site.intakeSheetId,
        body: rows.map((values) => ({ toBottom: true, cells: Object.entries(values).map(([title, value]) => ({ columnId: columns.get(title), value })) })),
    });
}
