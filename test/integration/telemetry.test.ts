import { beforeEach, describe, expect, it } from "vitest";
import { sweepIntake, sweepSite, type SweepKind } from "../../src/shared/intake/intakeSweep";
import { formatJobKey, type JobKey } from "../../src/shared/jobs/JobRow";
import { beginAttempt, parkJob } from "../../src/shared/provisioning/lifecycle";
import { reap } from "../../src/shared/recovery/reaper";
import { reconcileJobs } from "../../src/shared/recovery/reconcile";
import { BudgetTable } from "../../src/shared/smartsheet/BudgetTable";
import { RateLimiter, systemClock } from "../../src/shared/smartsheet/RateLimiter";
import { SdkSmartsheet } from "../../src/shared/smartsheet/SdkSmartsheet";
import { SharedTokenBudget } from "../../src/shared/smartsheet/SharedTokenBudget";
import { intakeSheet } from "../helpers/intakeSheet";
import { useProvisioningHarness, type Harness } from "../helpers/provisioningHarness";
import { RecordingTelemetry } from "../helpers/recordingTelemetry";
import { runSteps } from "../helpers/runSteps";

const LONG_AGO = "2026-01-01T00:00:00.000Z";

/** The harness's deps, recording their telemetry. */
function withTelemetry(harness: Harness): { deps: Harness["deps"]; telemetry: RecordingTelemetry } {
    const telemetry = new RecordingTelemetry();
    return { deps: { ...harness.deps, telemetry }, telemetry };
}

/** Sweeps the seeded intake (without telemetry), then makes the n-th job look like a worker stopped on it. */
async function stalledJob(harness: Harness, n: number, runtimeStatus: "Failed" | undefined): Promise<JobKey> {
    const { deps } = harness;
    if (deps.enqueued.length === 0) await sweepIntake(deps);
    const key = deps.enqueued[n]!;
    const stored = await deps.jobs.update(key, (row) => ({ ...row, state: "running", stage: "copy", lastProgressAt: LONG_AGO }), { from: ["queued"] });
    if (runtimeStatus) deps.instances.set(stored.row.instanceId!, { runtimeStatus });
    return key;
}

describe("telemetry of the job's life, recorded beside its log lines", () => {
    const harness = useProvisioningHarness();

    it("a sweep records each new job's move to queued, what it found, and its summary, by job key and site", async () => {
        const { deps, telemetry } = withTelemetry(harness.current);
        const run = await sweepIntake(deps);
        const queued = run.sites[0]!.queued;
        expect(queued.length).toBeGreaterThan(0);

        expect(telemetry.events("job.transition")).toEqual(queued.map((jobKey) => ({ jobKey, site: "default", state: "queued", attempt: 1, from: "new", to: "queued" })));
        expect(telemetry.counts("sheetwright.sweep.found")).toEqual(queued.map(() => ({ site: "default", kind: "new" })));
        expect(telemetry.events("sweep.completed")).toEqual([
            expect.objectContaining({ site: "default", kind: "routine", queued: queued.length, rejected: run.sites[0]!.rejected.length, missedByCursor: 0, rowsRead: run.sites[0]!.rowsRead }),
        ]);
    });

    it("a product provisioned step by step records queued → running → done, job.done, a product done and its approval-to-done seconds", async () => {
        const h = harness.current;
        await sweepIntake(h.deps);
        const key = h.deps.enqueued[0]!;
        const { deps, telemetry } = withTelemetry(h);
        await runSteps(deps, key);

        const jobKey = formatJobKey(key);
        const job = { jobKey, site: "default", attempt: 1 };
        expect(telemetry.events("job.transition")).toEqual([
            { ...job, state: "running", stage: "copy", from: "queued", to: "running" },
            { ...job, state: "done", stage: "register", from: "running", to: "done" },
        ]);
        const done = telemetry.events("job.done");
        expect(done).toEqual([expect.objectContaining({ jobKey, site: "default", state: "done", stage: "register", attempt: 1 })]);
        expect(done[0]!.approvalToDoneSeconds).toBeGreaterThanOrEqual(0);
        expect(telemetry.counts("sheetwright.products.done")).toEqual([{ site: "default" }]);
        expect(telemetry.records("sheetwright.approval_to_done.seconds")).toEqual([{ value: done[0]!.approvalToDoneSeconds, dimensions: { site: "default" } }]);
    });

    it("a parked job records job.parked with its reason once, however often its park runs", async () => {
        const h = harness.current;
        await sweepIntake(h.deps);
        const key = h.deps.enqueued[0]!;
        const instanceId = (await h.jobs.require(key)).row.instanceId!;
        const { deps, telemetry } = withTelemetry(h);
        await beginAttempt(deps, { jobKey: key, instanceId, attempt: 1 });
        const reason = "Template sheet \u202eSuppliers is gone; restore it, then unpark the job";
        for (let i = 0; i < 3; i++) await parkJob(deps, { jobKey: key, instanceId, reason, stage: "copy" });

        const parked = { jobKey: formatJobKey(key), site: "default", state: "parked", stage: "copy", attempt: 1, reason };
        expect(telemetry.events("job.parked")).toEqual([parked]);
        expect(telemetry.events("job.transition")).toEqual([expect.objectContaining({ from: "queued", to: "running" }), { ...parked, from: "running", to: "parked" }]);
        expect(telemetry.counts("sheetwright.products.parked")).toEqual([{ site: "default" }]);
    });

    it("the reaper records a recovery, the site's backlog and its run; and a park after too many recoveries", async () => {
        const h = harness.current;
        const recovered = await stalledJob(h, 0, "Failed");
        const parkedKey = await stalledJob(h, 1, "Failed");
        await h.jobs.update(parkedKey, (row) => ({ ...row, recoveries: 3 }), { from: ["running"] });
        const { deps, telemetry } = withTelemetry(h);
        const report = await reap(deps);

        expect(telemetry.events("job.recovered")).toEqual([
            expect.objectContaining({ jobKey: formatJobKey(recovered), site: "default", state: "running", attempt: 2, reason: expect.stringMatching(/ended Failed at stage copy$/) }),
        ]);
        expect(telemetry.counts("sheetwright.jobs.recovered")).toEqual([{ site: "default" }]);
        const parkReason = (await h.jobs.require(parkedKey)).row.parkReason;
        expect(telemetry.events("job.parked")).toEqual([expect.objectContaining({ jobKey: formatJobKey(parkedKey), site: "default", state: "parked", attempt: 2, reason: parkReason })]);
        // In the order the reaper meets the jobs (its index's), which the test does not choose.
        const transitions = telemetry.events("job.transition").map(({ jobKey, from, to }) => ({ jobKey, from, to }));
        expect(transitions).toHaveLength(2);
        expect(transitions).toEqual(
            expect.arrayContaining([
                { jobKey: formatJobKey(recovered), from: "running", to: "running" },
                { jobKey: formatJobKey(parkedKey), from: "running", to: "parked" },
            ]),
        );
        expect(telemetry.records("sheetwright.reaper.backlog")).toEqual([{ value: 0, dimensions: { site: "default" } }]);
        expect(telemetry.events("reaper.completed")).toEqual([{ active: report.active, stale: 2, backlogged: 0, transitions: 2, failedSites: 0 }]);
    });

    it("reconciliation records a done the row had missed as a product done, from the state the row was in", async () => {
        const h = harness.current;
        const key = await stalledJob(h, 2, undefined);
        const row = (await h.jobs.require(key)).row;
        h.deps.instances.set(row.instanceId!, { runtimeStatus: "Completed", output: { jobKey: formatJobKey(key), result: "done" } });
        const { deps, telemetry } = withTelemetry(h);
        await reconcileJobs(deps, "start-up");

        expect(telemetry.events("job.transition")).toEqual([expect.objectContaining({ jobKey: formatJobKey(key), from: "running", to: "done", state: "done" })]);
        expect(telemetry.events("job.done")).toHaveLength(1);
        expect(telemetry.counts("sheetwright.products.done")).toEqual([{ site: "default" }]);
    });
});

describe("telemetry of Smartsheet calls and the token's budget", () => {
    const harness = useProvisioningHarness();

    it("counts every request by operation and answer, a 429 included, and each request the budget granted, under the token setting's name only", async () => {
        const h = harness.current;
        const telemetry = new RecordingTelemetry();
        const budget = new SharedTokenBudget({
            accessToken: "sim-token",
            limit: 300,
            leaseSize: 5,
            fallbackInstances: 4,
            rows: new BudgetTable(h.table),
            clock: systemClock,
            telemetry,
            tokenSetting: "SMARTSHEET_ACCESS_TOKEN",
        });
        const smartsheet = new SdkSmartsheet({
            accessToken: "sim-token",
            baseUrl: h.sim.baseUrl,
            limiter: new RateLimiter(300, 60_000, systemClock, budget),
            callTimeoutMs: 2_000,
            rateLimitBackoff: { baseMs: 10, maxMs: 50, maxTotalMs: 2_000 },
            telemetry,
            tokenSetting: "SMARTSHEET_ACCESS_TOKEN",
        });
        h.sim.core.setFaults([{ op: "getSheet", kind: "rate429", times: 1 }]);
        await smartsheet.getSheet(h.site.intakeSheetId);
        await smartsheet.listFolderChildren(h.site.templateFolderId);

        expect(telemetry.counts("sheetwright.smartsheet.calls")).toEqual([
            { operation: "getSheet", status: "429", token: "SMARTSHEET_ACCESS_TOKEN" },
            { operation: "getSheet", status: "200", token: "SMARTSHEET_ACCESS_TOKEN" },
            { operation: "getFolderChildren", status: "200", token: "SMARTSHEET_ACCESS_TOKEN" },
        ]);
        expect(telemetry.counts("sheetwright.budget.use")).toEqual([1, 2, 3].map(() => ({ token: "SMARTSHEET_ACCESS_TOKEN" })));
        expect(JSON.stringify(telemetry.recorded)).not.toContain("sim-token");
    });
});

describe("telemetry of what the full sweep found that the cursor missed", () => {
    const T0 = Date.parse("2026-03-02T09:00:00.000Z");
    const at = (seconds: number) => T0 + seconds * 1000;
    let clock = T0;
    beforeEach(() => void (clock = T0));
    const harness = useProvisioningHarness({ simulator: { clock: () => clock } });
    const sweep = (h: Harness, telemetry: RecordingTelemetry | undefined, kind?: SweepKind) => sweepSite({ ...h.deps, telemetry, now: () => new Date(clock) }, h.site, kind);

    it("counts a row the cursor missed as sweep.found missedByCursor, and the row's new job as found new", async () => {
        const h = harness.current;
        const sheet = intakeSheet(h);
        clock = at(60);
        await sweep(h, undefined);
        for (const key of h.deps.enqueued) h.deps.instances.set((await h.jobs.require(key)).row.instanceId!, { runtimeStatus: "Running" });
        clock = at(120);
        await sheet.edit("CON-2202", { Approved: true });
        const cursor = (await h.deps.cursors.read(h.site.intakeSheetId)).cursor!;
        await h.deps.cursors.advance(h.site.intakeSheetId, { ...cursor, sweptAt: new Date(at(600)).toISOString() }, h.deps.timing.clockSkewMs);
        clock = at(700);
        const telemetry = new RecordingTelemetry();
        await sweep(h, telemetry, "full");

        expect(telemetry.counts("sheetwright.sweep.found")).toEqual([
            { site: "default", kind: "new" },
            { site: "default", kind: "missedByCursor" },
        ]);
        expect(telemetry.events("sweep.completed")).toEqual([expect.objectContaining({ site: "default", kind: "full", queued: 1, missedByCursor: 1 })]);
    });
});
