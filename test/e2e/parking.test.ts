import { describe, it } from "vitest";
import { useE2E, waitFor } from "../helpers/e2e";
import { inspectProduct, intakeRow } from "../helpers/inspectProduct";
import { createTableClient } from "../../src/shared/storage";
import { alertInbox, copyCalls, intake, job, jobIn, startRecoveryE2E, transitions } from "../helpers/recoveryKit";

// One test after another: side by side, these tests' hosts loaded a 2-core CI machine enough that the app's own late
// bookkeeping writes raced a test's edits (a 412 on the runbook edit; the unpark reads the row again itself since).
describe("recovery end to end: parking, unparking, reconciliation", { timeout: 180_000 }, () => {
    const stack = useE2E(startRecoveryE2E);

    it("the long names afternoon: parked with the reason everywhere, then one unpark each finishes them", async ({ expect, onTestFinished }) => {
        const inbox = await alertInbox();
        stack.defer(inbox.close, { onTestFinished });
        const e2e = await stack.start({ only: [], settings: { ALERT_WEBHOOK_URL: inbox.url } }, { onTestFinished });
        const rows = intake(e2e);
        const first = await rows.add("IND-5001", "Coolant Pump", "Industrial");
        const second = await rows.add("CON-5002", "Milk Frother", "Consumer");
        // A rule change: sheet names over 40 characters are refused; "<code> <name> - Document Register" is 41.
        e2e.sim.core.configure({ nameLimit: 40 });
        await e2e.fire("intakeSweep");
        for (const [key, code] of [
            [first, "IND-5001"],
            [second, "CON-5002"],
        ] as const) {
            const parked = await jobIn(e2e, key, "parked");
            expect(parked.stage).toBe("copy");
            expect(parked.parkReason).toMatch(/1041.*must be 40 characters in length or less, but was 41/);
            // The job row parks first, then ops is told, then the customer's intake row.
            await waitFor(async () => intakeRow(e2e.sim.core.state(), code)?.Status === `Stalled — ${parked.parkReason}` || undefined, `${code}'s intake row to say Stalled`);
            expect(inspectProduct(e2e.sim.core.state(), code).sheets).toHaveLength(6);
        }
        await waitFor(async () => inbox.alerts.length >= 2 || undefined, "two alerts");
        expect(inbox.alerts).toEqual(
            expect.arrayContaining([
                expect.objectContaining({ event: "job.parked", jobKey: first, productCode: "IND-5001", recoveries: 0, reason: expect.stringMatching(/1041/) }),
                expect.objectContaining({ event: "job.parked", jobKey: second, productCode: "CON-5002", jobUrl: expect.stringContaining(`/api/jobs/${second}`) }),
            ]),
        );
        expect(e2e.host.logs.filter((line) => / Error /.test(line) && /running → parked/.test(line))).toHaveLength(2);

        // The fix.
        e2e.sim.core.configure({ nameLimit: 50 });
        const foldersBefore = e2e.sim.core.state().folders.length;
        const copiesBefore = copyCalls(e2e);
        for (const key of [first, second]) {
            const unparked = await e2e.api(`jobs/${key}/unpark`, { method: "POST", body: JSON.stringify({ by: "ops", note: "name rule relaxed" }) });
            expect(unparked.status, await unparked.clone().text()).toBe(202);
        }
        // Unparking twice is harmless.
        const again = await e2e.api(`jobs/${first}/unpark`, { method: "POST" });
        expect([202, 409]).toContain(again.status);
        for (const [key, code] of [
            [first, "IND-5001"],
            [second, "CON-5002"],
        ] as const) {
            await jobIn(e2e, key, "done");
            const product = inspectProduct(e2e.sim.core.state(), code);
            expect(product.sheets).toHaveLength(7);
            expect(product.folders).toHaveLength(1);
            expect(product.filingRows).toHaveLength(1);
        }
        expect(e2e.sim.core.state().folders.length).toBe(foldersBefore);
        expect(copyCalls(e2e) - copiesBefore).toBe(2);
        expect(e2e.sim.core.calls().byOperation.deleteSheet ?? 0).toBe(0);
    });

    it("the long names afternoon, fixed in the field: the documented row edit lets the next reaper run finish it", async ({ expect, onTestFinished }) => {
        const e2e = await stack.start({ only: [] }, { onTestFinished });
        const key = await intake(e2e).add("IND-5003", "Coolant Pump", "Industrial");
        e2e.sim.core.configure({ nameLimit: 40 });
        await e2e.fire("intakeSweep");
        const parked = await jobIn(e2e, key, "parked");
        e2e.sim.core.configure({ nameLimit: 50 });
        // The runbook's edit: state running, an old lastProgressAt, recoveries 0 — nothing else.
        const [pk, rk] = key.split("-");
        await createTableClient(e2e.settings.AzureWebJobsStorage!, e2e.settings.JOBS_TABLE!).updateEntity(
            { partitionKey: pk!, rowKey: rk!, state: "running", lastProgressAt: "2000-01-01T00:00:00.000Z", recoveries: 0 },
            "Merge",
        );
        const done = await jobIn(e2e, key, "done");
        expect(done.attempt).toBe(parked.attempt + 1);
        expect(transitions(e2e, new RegExp(`${parked.instanceId} is Running but the job made no progress`))).toHaveLength(1);
        const product = inspectProduct(e2e.sim.core.state(), "IND-5003");
        expect(product.sheets).toHaveLength(7);
        expect(product.folders).toHaveLength(1);
        expect(e2e.sim.core.calls().byOperation.createFolder).toBe(1);
    });

    it("an invariant error parks the job with its message after the step's own retries, not after the reaper's recoveries", async ({ expect, onTestFinished }) => {
        const e2e = await stack.start({ only: [] }, { onTestFinished });
        const key = await intake(e2e).add("IND-5004", "Coolant Pump", "Industrial");
        // Parked at the register stage first (the Filing Index refuses the row once), so that the row can be edited.
        e2e.sim.core.setFaults([{ op: "addRows", kind: "error1004", times: 1 }]);
        await e2e.fire("intakeSweep");
        const parked = await jobIn(e2e, key, "parked");
        expect(parked).toMatchObject({ stage: "register", parkReason: expect.stringMatching(/1004/) });
        // The park is over once the customer is told.
        await waitFor(async () => intakeRow(e2e.sim.core.state(), "IND-5004")?.Status === `Stalled — ${parked.parkReason}` || undefined, "the intake row to say Stalled");
        // A broken assumption: the register stage finds no product folder on the row.
        const [pk, rk] = key.split("-");
        const table = createTableClient(e2e.settings.AzureWebJobsStorage!, e2e.settings.JOBS_TABLE!);
        // Read, edit, write back conditionally, as a person would: again when the app wrote the row meanwhile (its
        // parking's last writes may still land after the intake row says Stalled; seen as a 412 in CI on a loaded machine).
        await waitFor(async () => {
            const { folderId: _gone, etag, timestamp: _timestamp, "odata.metadata": _metadata, ...entity } = await table.getEntity<Record<string, unknown>>(pk!, rk!);
            try {
                await table.updateEntity({ ...entity, partitionKey: pk!, rowKey: rk! }, "Replace", { etag });
                return true;
            } catch (error) {
                if ((error as { statusCode?: number }).statusCode === 412) return undefined;
                throw error;
            }
        }, "the row edited without the folder", 10_000);
        // The parking's last writes may land after the edit, as above: the unpark reads the row again itself.
        const unparked = await e2e.api(`jobs/${key}/unpark`, { method: "POST", body: JSON.stringify({ by: "ops" }) });
        expect(unparked.status, await unparked.clone().text()).toBe(202);

        const again = await waitFor(async () => {
            const now = await job(e2e, key);
            return now?.state === "parked" && now.parkedAt !== parked.parkedAt ? now : undefined;
        }, "the job parked again", 90_000);
        expect(again.parkReason).toBe(
            "Unexpected error in registerDocumentRegister (a bug; its retries are spent): The product folder is not recorded yet; the copy stage has to finish first.",
        );
        expect(again).toMatchObject({ stage: "register", recoveries: 0, attempt: parked.attempt });
        expect(transitions(e2e, /recovery \d\/2/)).toEqual([]);
        // Twice, as STEP_RETRY_ATTEMPTS says, then parked.
        expect(e2e.host.logs.filter((line) => line.includes("registerDocumentRegister failed with an unexpected error"))).toHaveLength(2);
    });

    it("after an outage: start-up reconciliation writes the done the rows missed, and done is never moved back", async ({ expect, onTestFinished }) => {
        const e2e = await stack.start({ only: ["IND-1042", "CON-2201"] }, { onTestFinished });
        await e2e.fire("intakeSweep");
        const keys = [intake(e2e).keyOf("IND-1042"), intake(e2e).keyOf("CON-2201")];
        for (const key of keys) await jobIn(e2e, key, "done");
        await e2e.host.stop();
        // The outage: the orchestrations completed, but the rows never heard.
        for (const key of keys) {
            const [pk, rk] = key.split("-");
            await e2e.jobs.update({ pk: pk!, rk: rk! }, (row) => ({ ...row, state: "running" }), { from: ["done"] });
        }
        const logsBefore = e2e.host.logs.length;
        await e2e.host.start({ "AzureWebJobs.reaper.Disabled": "true" });
        for (const key of keys) await jobIn(e2e, key, "done", 30_000);
        const startupLines = e2e.host.logs.slice(logsBefore);
        expect(startupLines.filter((line) => /running → done \(orchestration provision-.* completed; the row had missed it\)/.test(line))).toHaveLength(2);
        expect(startupLines.some((line) => /reconcile \(start-up\): 2 active jobs checked, 2 transitions/.test(line))).toBe(true);

        // A late writer (a duplicate message) cannot move done back to running.
        const [pk, rk] = keys[0]!.split("-");
        await e2e.sendRaw(JSON.stringify({ v: 1, jobKey: { pk, rk } }));
        await waitFor(async () => e2e.host.logs.some((line) => line.includes(`job ${keys[0]} is done; nothing to start`)) || undefined, "the starter to ignore it");
        expect((await job(e2e, keys[0]!))?.state).toBe("done");
    });

    it("unpark answers 401 without a key, 400, 404 and 409, and restarts a parked job whose orchestration vanished", async ({ expect, onTestFinished }) => {
        const e2e = await stack.start({ only: [] }, { onTestFinished });
        const key = await intake(e2e).add("IND-5004", "Coolant Pump", "Industrial");
        expect((await fetch(`${e2e.host.url}/api/jobs/${key}/unpark`, { method: "POST" })).status).toBe(401);
        expect((await e2e.api("jobs/not-a-key/unpark", { method: "POST" })).status).toBe(400);
        expect((await e2e.api("jobs/123-456/unpark", { method: "POST" })).status).toBe(404);
        e2e.sim.core.configure({ nameLimit: 40 });
        await e2e.fire("intakeSweep");
        const parked = await jobIn(e2e, key, "parked");
        expect((await e2e.api(`jobs/${key}/unpark`, { method: "POST", body: "{not json" })).status).toBe(400);
        expect((await e2e.api(`jobs/${key}/unpark`, { method: "POST", body: JSON.stringify({ force: true }) })).status).toBe(400);

        // Someone terminated the waiting orchestration by hand; unpark still works.
        await e2e.durable(`instances/${parked.instanceId}/terminate?reason=cleanup`, { method: "POST" });
        await waitFor(async () => (await job(e2e, key))?.orchestration?.runtimeStatus === "Terminated" || undefined, "the termination");
        e2e.sim.core.configure({ nameLimit: 50 });
        const unparked = await e2e.api(`jobs/${key}/unpark`, { method: "POST", body: JSON.stringify({ by: "ops" }) });
        expect(unparked.status).toBe(202);
        expect(await unparked.json()).toMatchObject({ action: "new attempt started" });
        const done = await jobIn(e2e, key, "done");
        expect(done.attempt).toBe(parked.attempt + 1);
        expect(inspectProduct(e2e.sim.core.state(), "IND-5004").sheets).toHaveLength(7);

        const conflict = await e2e.api(`jobs/${key}/unpark`, { method: "POST" });
        expect(conflict.status).toBe(409);
        expect(await conflict.json()).toMatchObject({ state: "done", error: expect.stringContaining("is done, not parked") });
    });
});
