import { describe, expect, it } from "vitest";
import { sweepSite } from "../../src/shared/intake/intakeSweep";
import { formatJobKey, type JobKey } from "../../src/shared/jobs/JobRow";
import { getJob, listJobs } from "../../src/shared/recovery/jobsApi";
import { reap } from "../../src/shared/recovery/reaper";
import { reconcileJobs } from "../../src/shared/recovery/reconcile";
import { storageAccessOf, tableClientFor } from "../../src/shared/storage";
import { makeJobRow } from "../helpers/jobs";
import { useProvisioningHarness, type Harness } from "../helpers/provisioningHarness";

const LONG_AGO = "2026-01-01T00:00:00.000Z";

/** What a hand edit in Storage Explorer does: merges properties into one entity, unchecked. */
async function handEdit(harness: Harness, rowKey: { pk: string; rk: string }, properties: Record<string, unknown>): Promise<void> {
    const table = tableClientFor(storageAccessOf(harness.config), harness.config.JOBS_TABLE);
    await table.updateEntity({ partitionKey: rowKey.pk, rowKey: rowKey.rk, ...properties }, "Merge");
}

/** Three queued jobs from the seeded intake, each made to look like a worker stopped on it. */
async function threeStalledJobs(harness: Harness): Promise<JobKey[]> {
    const { deps } = harness;
    await sweepSite(deps, harness.site);
    const keys = deps.enqueued.slice(0, 3);
    for (const key of keys) {
        await deps.jobs.update(key, (row) => ({ ...row, state: "running", stage: "copy", lastProgressAt: LONG_AGO }), { from: ["queued"] });
    }
    return keys;
}

function errorLinesAbout(harness: Harness, key: JobKey): string[] {
    return harness.deps.logs.filter((line) => line.startsWith("error ") && line.includes(formatJobKey(key)));
}

describe("one bad row stops nothing", () => {
    const harness = useProvisioningHarness();

    it("the reaper skips a job row and an index entry that do not parse, names each once, and recovers the others", async () => {
        const { deps } = harness.current;
        const [numberAsText, brokenIndex, failed] = await threeStalledJobs(harness.current);
        await handEdit(harness.current, numberAsText!, { attempt: "two" });
        await handEdit(harness.current, { pk: brokenIndex!.pk, rk: `active-${brokenIndex!.rk}` }, { state: "exploded" });
        deps.instances.set((await deps.jobs.require(failed!)).row.instanceId!, { runtimeStatus: "Failed" });

        const report = await reap(deps);

        expect(report.transitions).toEqual([expect.stringMatching(new RegExp(`^job ${formatJobKey(failed!)} running → running \\(recovery 1/3`))]);
        expect((await deps.jobs.require(failed!)).row).toMatchObject({ attempt: 2, recoveries: 1 });
        expect(errorLinesAbout(harness.current, numberAsText!)).toEqual([expect.stringMatching(/skipped: .*attempt/)]);
        expect(errorLinesAbout(harness.current, brokenIndex!)).toEqual([expect.stringMatching(/skipped: .*state/)]);
        // The problem, not the row: no other column's value is in the line.
        expect(errorLinesAbout(harness.current, numberAsText!)[0]).not.toContain("Hydraulic");
        expect(deps.logs).toContainEqual(expect.stringMatching(/^info reaper: 3 active jobs, .*, 1 transitions, 2 invalid skipped, \d+ Jobs-table entities read$/));
    });

    it("the reconciler finishes a completed job although another row holds broken JSON", async () => {
        const { deps, config } = harness.current;
        const pk = String(config.INTAKE_SHEET_ID);
        const broken = await deps.jobs.create(makeJobRow({ intakeSheetId: pk, state: "running", stage: "copy", instanceId: "provision-broken-a1" }));
        const completed = await deps.jobs.create(makeJobRow({ intakeSheetId: pk, state: "running", stage: "register", instanceId: "provision-completed-a1" }));
        await handEdit(harness.current, { pk, rk: broken.row.intakeRowId }, { copies: "{not json" });
        for (const id of ["provision-broken-a1", "provision-completed-a1"]) deps.instances.set(id, { runtimeStatus: "Completed", output: { result: "done" } });

        const report = await reconcileJobs(deps, "start-up");

        expect(report.transitions).toEqual([expect.stringMatching(/running → done/)]);
        expect((await deps.jobs.require({ pk, rk: completed.row.intakeRowId })).row.state).toBe("done");
        expect(errorLinesAbout(harness.current, { pk, rk: broken.row.intakeRowId })).toEqual([expect.stringMatching(/skipped: .*copies: is not valid JSON text/)]);
        expect(deps.logs).toContainEqual("info reconcile (start-up): 2 active jobs checked, 1 transitions, 1 invalid skipped");
    });

    it("the sweep carries on past a queued job whose row or index entry does not parse", async () => {
        const { deps } = harness.current;
        await sweepSite(deps, harness.current.site);
        const [numberAsText, brokenIndex, fine] = deps.enqueued.slice(0, 3);
        await handEdit(harness.current, numberAsText!, { recoveries: "none" });
        await handEdit(harness.current, { pk: brokenIndex!.pk, rk: `active-${brokenIndex!.rk}` }, { lastProgressAt: 17 });
        deps.logs.length = 0;

        // No orchestration exists for any of them: the sweep sends the message again for those it can read.
        const report = await sweepSite(deps, harness.current.site);

        expect(report.requeued).toContain(formatJobKey(fine!));
        expect(report.requeued).not.toContain(formatJobKey(numberAsText!));
        expect(errorLinesAbout(harness.current, numberAsText!)).toEqual([expect.stringMatching(/skipped: .*recoveries/)]);
        expect(errorLinesAbout(harness.current, brokenIndex!)).toEqual([expect.stringMatching(/skipped: .*lastProgressAt/)]);
    });

    it("GET /api/jobs lists the readable jobs and names the invalid ones; GET /api/jobs/{key} of one answers 422 with the reason", async () => {
        const { deps } = harness.current;
        await sweepSite(deps, harness.current.site);
        const [numberAsText, brokenIndex, fine] = deps.enqueued.slice(0, 3);
        await handEdit(harness.current, numberAsText!, { attempt: "two" });
        await handEdit(harness.current, { pk: brokenIndex!.pk, rk: `active-${brokenIndex!.rk}` }, { state: "exploded" });
        const done = await deps.jobs.create(makeJobRow({ intakeSheetId: String(harness.current.site.intakeSheetId), state: "done" }));
        await handEdit(harness.current, { pk: done.row.intakeSheetId, rk: done.row.intakeRowId }, { callsByOperation: "[oops" });

        const active = await listJobs(deps, { state: null });
        expect(active.status).toBe(200);
        expect(active.jsonBody).toMatchObject({
            state: "active",
            jobs: [expect.objectContaining({ jobKey: formatJobKey(fine!), site: "default" })],
            invalid: expect.arrayContaining([
                { jobKey: formatJobKey(numberAsText!), reason: expect.stringMatching(/attempt/) },
                { jobKey: formatJobKey(brokenIndex!), reason: expect.stringMatching(/state/) },
            ]),
        });
        expect((active.jsonBody as { jobs: unknown[] }).jobs).toHaveLength(1);

        const finished = await listJobs(deps, { state: "done" });
        expect(finished.jsonBody).toMatchObject({ state: "done", jobs: [], invalid: [{ jobKey: formatJobKey({ pk: done.row.intakeSheetId, rk: done.row.intakeRowId }) }] });

        const one = await getJob(deps, deps.orchestrations, formatJobKey(numberAsText!));
        expect(one.status).toBe(422);
        expect(one.jsonBody).toMatchObject({ error: expect.stringMatching(/attempt/), jobKey: formatJobKey(numberAsText!) });
    });
});
