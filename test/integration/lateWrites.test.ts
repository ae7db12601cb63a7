import { describe, it, type TestContext } from "vitest";
import { timingOf } from "../../src/shared/config";
import { sweepIntake } from "../../src/shared/intake/intakeSweep";
import { copyTemplateSheet, ensureProductFolder, namesOf } from "../../src/shared/provisioning/copyStage";
import { auditProduct } from "../../src/shared/provisioning/finalAudit";
import { beginAttempt } from "../../src/shared/provisioning/lifecycle";
import { SdkSmartsheet } from "../../src/shared/smartsheet/SdkSmartsheet";
import { sitesFrom } from "../../src/shared/sites/Sites";
import { inspectProduct } from "../helpers/inspectProduct";
import { startProvisioningHarness, type Harness, type HarnessOptions } from "../helpers/provisioningHarness";
import { runSteps } from "../helpers/runSteps";

/**
 * Runs a test on a harness of its own (simulator and jobs table), so that the tests run side by
 * side: most of their time is waiting for a call timeout, a late write's landing or the product's
 * late-write horizon, which each test's real-time settings leave as they were.
 */
function ownHarness(test: (h: Harness, context: TestContext) => Promise<void>, options: HarnessOptions = {}): (context: TestContext) => Promise<void> {
    return async (context) => {
        const h = await startProvisioningHarness(options);
        try {
            await test(h, context);
        } finally {
            await h.close();
        }
    };
}

/**
 * Writes whose client gave up (the harness's call timeout is 2 s) but which Smartsheet carries
 * out later, after the step looked, found nothing and wrote again.
 */
describe.concurrent("late writes: an unanswered write that lands after the step wrote again", () => {
    // Lands 5 s after it was sent (2 s after the step's own look, which waits out its 3 s claim); the product stays open for
    // 6.5 s after the claim. (Wider than the 4 s and 5 s these were while the tests ran one at a time: side by side, a
    // loaded machine delayed a look past a landing 1 s after it.)
    const LANDS_AFTER_MS = 5_000;
    const lateWrites = (h: Harness) => ({ ...h.deps, timing: { ...h.deps.timing, lateWriteHorizonMs: 6_500 } });

    async function provisionFirstProduct(h: Harness, fault: { op: string; skip?: number }) {
        const { sim } = h;
        const deps = lateWrites(h);
        await sweepIntake(deps);
        const key = h.deps.enqueued[0]!;
        sim.core.setFaults([{ op: fault.op as "copySheet", kind: "delay", delayMs: LANDS_AFTER_MS, times: 1, skip: fault.skip ?? 0 }]);
        const started = Date.now();
        await runSteps(deps, key, { retries: 2 });
        // Look only once the late write has certainly landed.
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + LANDS_AFTER_MS + 300 - Date.now())));
        const row = (await deps.jobs.require(key)).row;
        return { row, product: inspectProduct(sim.core.state(), row.productCode), elapsed: Date.now() - started };
    }

    it("a sheet copy that lands after verifyCopies is removed by the final audit, keeping the recorded copy", { timeout: 30_000 }, ownHarness(async (h, { expect }) => {
        const { row, product, elapsed } = await provisionFirstProduct(h, { op: "copySheet", skip: 2 });
        expect(elapsed).toBeGreaterThanOrEqual(LANDS_AFTER_MS);
        expect(row.state).toBe("done");
        expect(product.sheets).toHaveLength(7);
        expect(product.sheets.map((sheet) => sheet.id).sort()).toEqual(Object.values(row.copies).map((copy) => copy.sheetId).sort());
        expect(row.lateWritesRemoved).toEqual([expect.objectContaining({ kind: "sheet" })]);
        expect(row.lateWritesUntil).toBeUndefined();
        expect(h.deps.logs.some((line) => /→ running \(final audit removed a late-landed sheet/.test(line))).toBe(true);
    }));

    it("a product folder that lands late is removed by the final audit, keeping the recorded folder and its sheets", { timeout: 30_000 }, ownHarness(async (h, { expect }) => {
        const { row, product } = await provisionFirstProduct(h, { op: "createFolder" });
        expect(row.state).toBe("done");
        expect(product.folders.map((folder) => folder.id)).toEqual([row.folderId]);
        expect(product.sheets).toHaveLength(7);
        expect(row.lateWritesRemoved).toEqual([expect.objectContaining({ kind: "folder" })]);
    }));

    it("a Filing Index row that lands late is removed by the final audit, keeping the recorded row", { timeout: 30_000 }, ownHarness(async (h, { expect }) => {
        const { row, product } = await provisionFirstProduct(h, { op: "addRows" });
        expect(row.state).toBe("done");
        expect(product.filingRows).toHaveLength(1);
        expect(row.lateWritesRemoved).toEqual([expect.objectContaining({ kind: "filingRow", id: expect.any(Number) })]);
        expect(row.lateWritesRemoved[0]!.id).not.toBe(row.registerRowId);
    }));

    // Smartsheet's clock and the steps' are one, which this test moves on instead of waiting.
    const clock = { skippedMs: 0, now: () => Date.now() + clock.skippedMs };
    it("the audit leaves a same-named folder and Filing Index row that were there before the job: only its own late writes go", { timeout: 30_000 }, ownHarness(async (h, { expect }) => {
        const { sim } = h;
        const deps = { ...lateWrites(h), now: () => new Date(clock.now()) };
        await sweepIntake(deps);
        const key = h.deps.enqueued[0]!;
        const row = (await deps.jobs.require(key)).row;
        const names = namesOf(row);
        const lineFolderId = sim.core.state().folders.find((folder) => folder.name === row.productLine)!.id;
        // Two of each made by hand before the job (Smartsheet's times are whole seconds): the job adopts one, the other is a person's business.
        const handMade = [await deps.smartsheet.createFolder(lineFolderId, names.folder), await deps.smartsheet.createFolder(lineFolderId, names.folder)];
        const index = await deps.smartsheet.getSheet(h.site.filingIndexSheetId);
        const codeColumn = index.columns.find((column) => column.title === "Product Code")!.id;
        const handRows = await deps.smartsheet.addRows(h.site.filingIndexSheetId, [
            { toBottom: true, cells: [{ columnId: codeColumn, value: row.productCode }] },
            { toBottom: true, cells: [{ columnId: codeColumn, value: row.productCode }] },
        ]);
        clock.skippedMs += 2_100;
        sim.core.setFaults([{ op: "copySheet", kind: "delay", delayMs: LANDS_AFTER_MS, times: 1, skip: 2 }]);
        await runSteps(deps, key, { retries: 2 });

        const after = (await deps.jobs.require(key)).row;
        expect(after.state).toBe("done");
        expect(after.lateWritesRemoved.map((removal) => removal.kind)).toEqual(["sheet"]);
        const state = sim.core.state();
        expect(handMade.map((folder) => state.folders.some((candidate) => candidate.id === folder.id))).toEqual([true, true]);
        const filing = state.sheets.find((sheet) => sheet.id === h.site.filingIndexSheetId)!;
        expect(handRows.map((handRow) => filing.rows.some((candidate) => candidate.id === handRow.id))).toEqual([true, true]);
    }, { simulator: { clock: () => clock.now() } }));

    it("a delete of a late write that Smartsheet carried out although it answered 4002 (the re-send gets 404) does not park the job", { timeout: 30_000 }, ownHarness(async (h, { expect }) => {
        const { sim } = h;
        const deps = lateWrites(h);
        await sweepIntake(deps);
        const key = h.deps.enqueued[0]!;
        sim.core.setFaults([
            { op: "copySheet", kind: "delay", delayMs: LANDS_AFTER_MS, times: 1, skip: 2 },
            { op: "deleteSheet", kind: "commitThenError4002", times: 1 },
        ]);
        await runSteps(deps, key, { retries: 2 });
        const row = (await deps.jobs.require(key)).row;
        expect(row.state).toBe("done");
        expect(row.lateWritesRemoved).toEqual([expect.objectContaining({ kind: "sheet" })]);
        expect(inspectProduct(sim.core.state(), row.productCode).sheets).toHaveLength(7);
    }));

    it("a job whose every write was answered is not audited and spends no call on it", ownHarness(async (h, { expect }) => {
        const { deps, sim } = h;
        await sweepIntake(deps);
        const key = deps.enqueued[0]!;
        await runSteps(deps, key);
        const row = (await deps.jobs.require(key)).row;
        expect(row.lateWritesUntil).toBeUndefined();
        expect(row.lateWritesRemoved).toEqual([]);
        expect(sim.core.calls().log.filter((entry) => /^delete/.test(entry.op))).toEqual([]);
    }));
});

describe.concurrent("claims under a live write", () => {

    it("two runs of one copy step write once although the first is held back by 429s for longer than two call timeouts", { timeout: 30_000 }, ownHarness(async (h, { expect }) => {
        const { sim, config } = h;
        // A call times out after 1 s but may be re-sent after 429s for up to 4 s.
        const settings = { ...config, SMARTSHEET_CALL_TIMEOUT_SECONDS: 1, SMARTSHEET_RATE_LIMIT_RETRY_SECONDS: 4, COPY_SETTLE_SECONDS: 0, MAX_CLOCK_SKEW_SECONDS: 0 };
        const timing = timingOf(settings);
        // The whole write: 4 s of rate-limit waits and re-sends + the 1 s call timeout (it used to be two call timeouts, 2 s).
        expect(timing.claimTtlMs).toBe(5_000);
        const smartsheet = new SdkSmartsheet({
            accessToken: "sim-token",
            baseUrl: sim.baseUrl,
            callTimeoutMs: 1_000,
            rateLimitBackoff: { baseMs: 300, maxMs: 1_000, maxTotalMs: 4_000 },
        });
        const sites = sitesFrom(config.sites, () => smartsheet);
        const deps = { ...h.deps, sites, smartsheet, timing: { ...h.deps.timing, ...timing, claimPollMs: 50 } };
        await sweepIntake(deps);
        const key = h.deps.enqueued[0]!;
        const step = { jobKey: key, instanceId: (await deps.jobs.require(key)).row.instanceId! };
        await beginAttempt(deps, { ...step, attempt: 1 });
        await ensureProductFolder(deps, step);
        // 429 for about 2.9 s (300 + 600 + 1000 + 1000 ms of back-off), then the copy goes through.
        sim.core.setFaults([{ op: "copySheet", kind: "rate429", times: 4 }]);
        const first = copyTemplateSheet(deps, { ...step, template: "Approvals" });
        await new Promise((resolve) => setTimeout(resolve, 100));
        const second = copyTemplateSheet(deps, { ...step, template: "Approvals" });
        expect((await first).outcome).toBe("done");
        expect((await second).outcome).toBe("done");
        const made = sim.core.calls().log.filter((entry) => entry.op === "copySheet" && entry.status === 200);
        expect(made).toHaveLength(1);
        const row = (await deps.jobs.require(key)).row;
        expect(inspectProduct(sim.core.state(), row.productCode).sheets.map((sheet) => sheet.id)).toEqual([row.copies["Approvals"]!.sheetId]);
    }));

    it("recording never replaces another run's recorded copy: the late run's copy is left to the final audit", { timeout: 30_000 }, ownHarness(async (h, { expect }) => {
        const { sim } = h;
        // Claims look dead after 300 ms, so a second run takes over while the first one's copy is still on its way.
        const deps = { ...h.deps, timing: { ...h.deps.timing, claimTtlMs: 300, lateWriteHorizonMs: 2_500 } };
        await sweepIntake(deps);
        const key = h.deps.enqueued[0]!;
        const step = { jobKey: key, instanceId: (await deps.jobs.require(key)).row.instanceId! };
        await beginAttempt(deps, { ...step, attempt: 1 });
        await ensureProductFolder(deps, step);
        sim.core.setFaults([{ op: "copySheet", kind: "delay", delayMs: 1_200, times: 1 }]);
        const slow = copyTemplateSheet(deps, { ...step, template: "Approvals" });
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect((await copyTemplateSheet(deps, { ...step, template: "Approvals" })).outcome).toBe("done");
        const recordedFirst = (await deps.jobs.require(key)).row.copies["Approvals"]!.sheetId;
        expect((await slow).outcome).toBe("done");

        const row = (await deps.jobs.require(key)).row;
        expect(row.copies["Approvals"]!.sheetId).toBe(recordedFirst);
        expect(row.claims).toEqual({});
        expect(row.lateWritesUntil).toBeDefined();
        expect(inspectProduct(sim.core.state(), row.productCode).sheets).toHaveLength(2);

        await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(row.lateWritesUntil!) - Date.now() + 50)));
        expect(await auditProduct(deps, step)).toMatchObject({ outcome: "done" });
        const audited = (await deps.jobs.require(key)).row;
        expect(inspectProduct(sim.core.state(), row.productCode).sheets.map((sheet) => sheet.id)).toEqual([recordedFirst]);
        expect(audited.lateWritesRemoved).toEqual([expect.objectContaining({ kind: "sheet" })]);
    }));
});
