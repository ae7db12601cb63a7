import { describe, expect, it } from "vitest";
import type { Alert } from "../../src/shared/alerts/AlertChannel";
import type { JobKey } from "../../src/shared/jobs/JobRow";
import { sweepIntake } from "../../src/shared/intake/intakeSweep";
import { reap } from "../../src/shared/recovery/reaper";
import { reconcileJobs } from "../../src/shared/recovery/reconcile";
import { storageAccessOf, tableClientFor } from "../../src/shared/storage";
import { intakeRow } from "../helpers/inspectProduct";
import { makeJobRow } from "../helpers/jobs";
import { useProvisioningHarness, type Harness } from "../helpers/provisioningHarness";

const LONG_AGO = "2026-01-01T00:00:00.000Z";

/** Sweeps the seeded intake, then makes the n-th job look like a worker stopped on it. */
async function stalledJob(harness: Harness, n: number, runtimeStatus: "Running" | "Failed" | "Terminated" | undefined): Promise<JobKey> {
    const { deps } = harness;
    await sweepIntake(deps);
    const key = deps.enqueued[n]!;
    const stored = await deps.jobs.update(key, (row) => ({ ...row, state: "running", stage: "copy", lastProgressAt: LONG_AGO }), {
        from: ["queued"],
    });
    if (runtimeStatus) deps.instances.set(stored.row.instanceId!, { runtimeStatus });
    return key;
}

describe("the reaper and the reconciler, against Azurite and the simulator", () => {
    const harness = useProvisioningHarness();

    it("finds the open jobs among 10,000 finished ones by reading about 20 entities", { timeout: 120_000 }, async () => {
        const { deps, config } = harness.current;
        const pk = String(config.INTAKE_SHEET_ID);
        const table = tableClientFor(storageAccessOf(config), config.JOBS_TABLE);
        for (let batch = 0; batch < 100; batch++) {
            await table.submitTransaction(
                Array.from({ length: 100 }, (_, i) => [
                    "create",
                    { partitionKey: pk, rowKey: String(9_000_000 + batch * 100 + i), kind: "job", state: "done", productCode: `OLD-${batch}-${i}` },
                ] as const),
            );
        }
        for (let i = 0; i < 20; i++) await deps.jobs.create(makeJobRow({ intakeSheetId: pk, state: "running", stage: "copy" }));

        deps.jobs.entitiesRead = 0;
        const report = await reap(deps);
        expect(report).toMatchObject({ active: 20, stale: 0, transitions: [], invalid: [], entitiesRead: 20 });
        expect(deps.jobs.entitiesRead).toBe(20);
        expect(deps.logs).toContainEqual(expect.stringMatching(/reaper: 20 active jobs, .*, 20 Jobs-table entities read$/));
    });

    it("recovers a job whose orchestration failed: fences the old instance out and starts the next attempt", async () => {
        const { deps } = harness.current;
        const key = await stalledJob(harness.current, 0, "Failed");
        const before = (await deps.jobs.require(key)).row;
        const report = await reap(deps);
        const after = (await deps.jobs.require(key)).row;
        expect(after).toMatchObject({ state: "running", attempt: 2, recoveries: 1, instanceId: `provision-${key.pk}-${key.rk}-a2` });
        expect(deps.started).toEqual([after.instanceId]);
        expect(deps.terminated).toEqual([]);
        expect(report.transitions).toEqual([
            `job ${key.pk}-${key.rk} running → running (recovery 1/3: ${before.instanceId} ended Failed at stage copy; ${after.instanceId} continues from the row)`,
        ]);
        expect(deps.logs).toContainEqual(expect.stringMatching(/reaper: 3 active jobs, 1 without progress for 15 min, 0 waiting in a backlog, 1 transitions, 0 invalid skipped/));
    });

    it("terminates an instance that is running without progress before the next attempt starts", async () => {
        const { deps } = harness.current;
        const key = await stalledJob(harness.current, 1, "Running");
        const old = (await deps.jobs.require(key)).row.instanceId!;
        await reap(deps);
        expect(deps.terminated).toEqual([old]);
        expect(deps.started).toEqual([`provision-${key.pk}-${key.rk}-a2`]);
    });

    it("leaves alone a job that made progress inside the window, however long its step has taken", async () => {
        const { deps } = harness.current;
        await sweepIntake(deps);
        const key = deps.enqueued[0]!;
        const tenMinutesAgo = new Date(Date.now() - 10 * 60_000).toISOString();
        await deps.jobs.update(key, (row) => ({ ...row, state: "running", lastProgressAt: tenMinutesAgo }), { from: ["queued"] });
        const report = await reap(deps);
        expect(report.transitions).toEqual([]);
        expect((await deps.jobs.require(key)).row.attempt).toBe(1);
        expect(deps.started).toEqual([]);
    });

    it("backs off when the job moves while it looks: a live worker wins", async () => {
        const { deps } = harness.current;
        const key = await stalledJob(harness.current, 0, undefined);
        const status = deps.orchestrations.status;
        // The worker touches the row just as the reaper asks Durable Functions about it.
        deps.orchestrations.status = async (id) => {
            await deps.jobs.update(key, (row) => ({ ...row, lastProgressAt: new Date().toISOString() }), { from: ["running"] });
            return status(id);
        };
        const report = await reap(deps);
        expect(report.transitions).toEqual([]);
        expect((await deps.jobs.require(key)).row).toMatchObject({ attempt: 1, recoveries: 0 });
        expect(deps.started).toEqual([]);
    });

    it("parks a job at MAX_RECOVERIES, tells the customer on the intake row and ops in the log, and starts an instance to wait", async () => {
        const { deps, sim } = harness.current;
        const key = await stalledJob(harness.current, 1, "Failed");
        await deps.jobs.update(key, (row) => ({ ...row, recoveries: 3, lastError: "copySheet failed with 500/4002" }), { from: ["running"] });
        const report = await reap(deps);
        const row = (await deps.jobs.require(key)).row;
        expect(row).toMatchObject({ state: "parked", attempt: 2, recoveries: 3, parkAlerted: true });
        expect(row.parkReason).toMatch(/^No progress after 3 recoveries: .* ended Failed at stage copy; last error: copySheet failed with 500\/4002$/);
        expect(report.transitions).toEqual([`job ${key.pk}-${key.rk} running → parked (${row.parkReason})`]);
        expect(deps.logs).toContainEqual(`error ${report.transitions[0]}`);
        expect(intakeRow(sim.core.state(), row.productCode)?.Status).toBe(`Stalled — ${row.parkReason}`);
        expect(deps.started).toEqual([row.instanceId]);
        // Parked is not open: the next run leaves it alone.
        expect((await reap(deps)).transitions).toEqual([]);
    });

    it("writes done for an orchestration that completed while its row missed it, and logs the transition", async () => {
        const { deps } = harness.current;
        const key = await stalledJob(harness.current, 2, undefined);
        const row = (await deps.jobs.require(key)).row;
        deps.instances.set(row.instanceId!, { runtimeStatus: "Completed", output: { jobKey: `${key.pk}-${key.rk}`, result: "done" } });
        const report = await reconcileJobs(deps, "start-up");
        expect(report.transitions).toEqual([
            `job ${key.pk}-${key.rk} running → done (orchestration ${row.instanceId} completed; the row had missed it)`,
        ]);
        expect((await deps.jobs.require(key)).row.state).toBe("done");
        expect(deps.logs).toContainEqual("info reconcile (start-up): 3 active jobs checked, 1 transitions, 0 invalid skipped");
        // Done is final: a reaper run right after does not touch it.
        expect((await reap(deps)).transitions).toEqual([]);
        expect(deps.started).toEqual([]);
    });
});

describe("one job that cannot be read stops nothing", () => {
    const harness = useProvisioningHarness();

    it("regression #18.8 one unreadable orchestration status: reconciliation and the reaper log that job, handle every other job of its site, and try it again next run", async () => {
        const { deps } = harness.current;
        const failed = await stalledJob(harness.current, 0, "Failed");
        const unreadable = await stalledJob(harness.current, 1, "Failed");
        const completed = await stalledJob(harness.current, 2, undefined);
        const completedRow = (await deps.jobs.require(completed)).row;
        deps.instances.set(completedRow.instanceId!, { runtimeStatus: "Completed", output: { result: "done" } });
        const unreadableId = (await deps.jobs.require(unreadable)).row.instanceId!;
        const status = deps.orchestrations.status;
        let refusals = 0;
        deps.orchestrations.status = async (id) => {
            if (id !== unreadableId) return status(id);
            refusals += 1;
            throw new Error("the task hub answered 503 Server Busy");
        };

        const reconciled = await reconcileJobs(deps, "start-up");
        expect(reconciled.failed).toEqual([]);
        expect(reconciled.transitions).toEqual([expect.stringMatching(new RegExp(`^job ${completed.pk}-${completed.rk} running → done`))]);
        expect(deps.logs).toContainEqual(expect.stringMatching(new RegExp(`^error job ${unreadable.pk}-${unreadable.rk}: reconciliation \\(start-up\\) could not look after it: the task hub answered 503 Server Busy; tried again next run`)));

        const reaped = await reap(deps);
        expect(reaped.failed).toEqual([]);
        expect((await deps.jobs.require(failed)).row).toMatchObject({ state: "running", attempt: 2, recoveries: 1 });
        expect((await deps.jobs.require(unreadable)).row).toMatchObject({ state: "running", attempt: 1, recoveries: 0 });
        expect(deps.logs).toContainEqual(expect.stringMatching(/^info reaper: 2 active jobs, .*; 1 job failed, tried again next run$/));

        // Once its status can be read, the next run takes it over like any other.
        const refusedSoFar = refusals;
        deps.orchestrations.status = status;
        await reap(deps);
        expect(refusedSoFar).toBe(2);
        expect((await deps.jobs.require(unreadable)).row).toMatchObject({ state: "running", attempt: 2, recoveries: 1 });
    });

    it("regression chaos seed 26120302 schedule 123 parked job with an unreadable status never alerted: the reaper tells ops of a parking whose alert did not get through although its orchestration's status cannot be read", async () => {
        const { deps } = harness.current;
        const key = await stalledJob(harness.current, 0, "Running");
        const parked = await deps.jobs.update(key, (row) => ({ ...row, state: "parked", parkReason: "Smartsheet createCrossSheetReference failed with 403/1004", parkedAt: LONG_AGO, parkAlerted: false }), { from: ["running"] });
        const status = deps.orchestrations.status;
        deps.orchestrations.status = async (id) => {
            if (id === parked.row.instanceId) throw new Error("the task hub answered 503 Server Busy");
            return status(id);
        };
        const alerts: Alert[] = [];

        const reaped = await reap({ ...deps, alerts: { send: async (alert: Alert) => void alerts.push(alert) } });

        expect(reaped.failed).toEqual([]);
        expect(alerts.map((alert) => [alert.event, alert.event === "job.parked" ? alert.jobKey : undefined])).toEqual([["job.parked", `${key.pk}-${key.rk}`]]);
        expect((await deps.jobs.require(key)).row).toMatchObject({ state: "parked", parkAlerted: true });
        // Its status is still named as what this run could not look after.
        expect(deps.logs).toContainEqual(expect.stringMatching(new RegExp(`^error job ${key.pk}-${key.rk}: reconciliation \\(reaper\\) could not look after it`)));
    });
});
