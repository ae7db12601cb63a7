import { describe, expect, it } from "vitest";
import { sweepSite } from "../../src/shared/intake/intakeSweep";
import { beginAttempt, confirmStalled, enterStage, parkJob, resumeJob } from "../../src/shared/provisioning/lifecycle";
import { runSteps } from "../helpers/runSteps";
import { formatJobKey } from "../../src/shared/jobs/JobRow";
import { intakeRow } from "../helpers/inspectProduct";
import { useProvisioningHarness, type Harness } from "../helpers/provisioningHarness";

/** The intake sheet as a customer edits it: by product code and column title. */
function intake(harness: Harness) {
    const state = () => harness.sim.core.state();
    const sheetId = () => state().intakeSheetId!;
    const columnId = (title: string) => state().sheets.find((sheet) => sheet.id === sheetId())!.columns.find((column) => column.title === title)!.id;
    return {
        keyOf: (code: string) => formatJobKey({ pk: String(sheetId()), rk: String(intakeRow(state(), code)!.rowId) }),
        status: (code: string) => intakeRow(state(), code)?.Status,
        async type(code: string, title: string, value: string | boolean) {
            const rowId = intakeRow(state(), code)!.rowId as number;
            await harness.deps.smartsheet.updateRows(sheetId(), [{ id: rowId, cells: [{ columnId: columnId(title), value }] }]);
        },
        async add(cells: Record<string, string | boolean>) {
            await harness.deps.smartsheet.addRows(sheetId(), [
                { toBottom: true, cells: Object.entries(cells).map(([title, value]) => ({ columnId: columnId(title), value })) },
            ]);
        },
    };
}

describe("the intake row tells the truth", () => {
    // Idempotent calls answered 4002 are re-sent as often as the app does, a few milliseconds apart rather than 1, 2 and 4 s.
    const harness = useProvisioningHarness({ smartsheet: { idempotentRetries: { attempts: 3, baseMs: 10 } } });

    it("a Status typed by hand into a new approved row does not stand for a job: the row is provisioned", async () => {
        const { deps } = harness.current;
        const sheet = intake(harness.current);
        await sheet.type("IND-1042", "Status", "Done");
        // Someone also typed a status into an unapproved row holding another row's code.
        await sheet.add({ "Product Code": "CON-2201", "Product Name": "Smart Kettle (draft)", "Product Line": "Consumer", Status: "Queued" });

        const report = await sweepSite(deps, harness.current.site);

        expect(report.queued).toContain(sheet.keyOf("IND-1042"));
        expect(report.queued).toContain(sheet.keyOf("CON-2201"));
        expect(report.rejected).toEqual([]);
        expect(sheet.status("IND-1042")).toBe("Queued");
        expect(deps.enqueued.map(formatJobKey)).toContain(sheet.keyOf("IND-1042"));
    });

    it("the sweep's Queued never lands on top of what a fast job wrote after its message was sent", async () => {
        const { deps } = harness.current;
        const sheet = intake(harness.current);
        // The job runs to the end the moment its message is sent.
        const fast = { ...deps, enqueue: async (key: Parameters<typeof deps.enqueue>[0]) => {
            await deps.enqueue(key);
            const code = (await deps.jobs.require(key)).row.productCode;
            await sheet.type(code, "Status", "Done");
        } };

        await sweepSite(fast, harness.current.site);

        expect(deps.enqueued).toHaveLength(3);
        for (const code of ["IND-1042", "CON-2201", "IND-1043"]) expect(sheet.status(code)).toBe("Done");
    });

    it("if the status write fails, no message is sent; the next sweep sends them", async () => {
        const { deps, sim } = harness.current;
        sim.core.setFaults([{ op: "updateRows", kind: "error1004", times: 1 }]);
        await expect(sweepSite(deps, harness.current.site)).rejects.toThrow();
        expect(deps.enqueued).toEqual([]);

        const healed = await sweepSite(deps, harness.current.site);
        expect(healed.requeued).toHaveLength(3);
        expect(deps.enqueued).toHaveLength(3);
    });

    it("repairs a final status typed over, and leaves the cell of a job still running to its steps", async () => {
        const { deps } = harness.current;
        const sheet = intake(harness.current);
        await sweepSite(deps, harness.current.site);
        const [done, running, rejected] = deps.enqueued;
        await deps.jobs.update(done!, (row) => ({ ...row, state: "done", stage: "register", intakeStatus: "Done" }), { from: ["queued"] });
        await deps.jobs.update(running!, (row) => ({ ...row, state: "running", stage: "copy", intakeStatus: "In progress — copy 3/7" }), { from: ["queued"] });
        const codeOf = async (key: typeof done) => (await deps.jobs.require(key!)).row.productCode;
        await sheet.type(await codeOf(done), "Status", "Queued");
        await sheet.type(await codeOf(running), "Status", "In progress — copy 2/7");
        // A rejected job's row is corrected by hand... in the Status column only.
        await sheet.type(await codeOf(rejected), "Product Line", "Nowhere");
        await deps.jobs.update(rejected!, (row) => ({ ...row, state: "rejected", rejectReason: "earlier reason" }), { from: ["queued"] });
        await sweepSite(deps, harness.current.site);
        await sheet.type(await codeOf(rejected), "Status", "Done");

        await sweepSite(deps, harness.current.site);

        expect(sheet.status(await codeOf(done))).toBe("Done");
        expect(sheet.status(await codeOf(running))).toBe("In progress — copy 2/7");
        expect(sheet.status(await codeOf(rejected))).toMatch(/^Rejected — Product Line "Nowhere"/);
        expect((await deps.jobs.require(rejected!)).row.state).toBe("rejected");
    });

    it("repairs a status typed over a finished job whose Approved was unticked (chaos seed 3141576687)", async () => {
        const { deps } = harness.current;
        const sheet = intake(harness.current);
        await sweepSite(deps, harness.current.site);
        const [done] = deps.enqueued;
        await deps.jobs.update(done!, (row) => ({ ...row, state: "done", stage: "register", intakeStatus: "Done" }), { from: ["queued"] });
        const code = (await deps.jobs.require(done!)).row.productCode;
        await sheet.type(code, "Approved", false);
        await sheet.type(code, "Status", "Stalled — waiting for legal");

        await sweepSite(deps, harness.current.site);

        expect(sheet.status(code)).toBe("Done");
    });

    it("a first run goes from Queued to Done with no status write on the way", async () => {
        const { deps, sim } = harness.current;
        const sheet = intake(harness.current);
        await sweepSite(deps, harness.current.site);
        const [key] = deps.enqueued;
        const intakeSheetId = String(sim.core.state().intakeSheetId);
        sim.core.resetCalls();

        await runSteps(deps, key!);

        const intakeWrites = sim.core.calls().log.filter((call) => call.method !== "GET" && call.path.includes(`/sheets/${intakeSheetId}/`));
        expect(intakeWrites).toHaveLength(1);
        expect(sheet.status((await deps.jobs.require(key!)).row.productCode)).toBe("Done");
    });

    it("an unparked job's intake row says In progress instead of Stalled, once", async () => {
        const { deps } = harness.current;
        const sheet = intake(harness.current);
        await sweepSite(deps, harness.current.site);
        const [key] = deps.enqueued;
        const instanceId = (await deps.jobs.require(key!)).row.instanceId!;
        const code = (await deps.jobs.require(key!)).row.productCode;
        await beginAttempt(deps, { jobKey: key!, instanceId, attempt: 1 });
        await parkJob(deps, { jobKey: key!, instanceId, reason: "sharing removed from the template", stage: "copy" });
        expect(sheet.status(code)).toBe("Stalled — sharing removed from the template");

        await resumeJob(deps, { jobKey: key!, instanceId });
        await sheet.type(code, "Status", "typed by a customer");
        await resumeJob(deps, { jobKey: key!, instanceId });

        expect((await deps.jobs.require(key!)).row).toMatchObject({ state: "running", intakeStatus: "In progress" });
        expect(sheet.status(code)).toBe("typed by a customer");
    });

    it("regression #18.11 late In progress over Stalled: a park while an unpark's status write may still land asks to confirm the Stall after the horizon, and the confirmation puts it back", async () => {
        const { deps } = harness.current;
        const sheet = intake(harness.current);
        await sweepSite(deps, harness.current.site);
        const [key] = deps.enqueued;
        const { instanceId, productCode: code } = (await deps.jobs.require(key!)).row;
        await beginAttempt(deps, { jobKey: key!, instanceId: instanceId!, attempt: 1 });
        const quiet = await parkJob(deps, { jobKey: key!, instanceId: instanceId!, reason: "sharing removed from the template", stage: "copy" });
        expect(quiet).toMatchObject({ outcome: "done" });
        expect(quiet.outcome === "done" && quiet.waitUntil).toBeFalsy();
        await resumeJob(deps, { jobKey: key!, instanceId: instanceId! });

        // The unpark's In progress went unanswered (the row's late-write horizon says so); the job parks again meanwhile.
        const lateUntil = new Date(deps.now().getTime() + 60_000).toISOString();
        await deps.jobs.update(key!, (row) => ({ ...row, lateWritesUntil: lateUntil }), { from: ["running"] });
        const parked = await parkJob(deps, { jobKey: key!, instanceId: instanceId!, reason: "the Filing Index is gone", stage: "register" });
        expect(parked).toMatchObject({ outcome: "done", waitUntil: lateUntil });
        expect(sheet.status(code)).toBe("Stalled — the Filing Index is gone");

        await sheet.type(code, "Status", "In progress"); // the unanswered write lands late
        await confirmStalled(deps, { jobKey: key!, instanceId: instanceId! });
        expect(sheet.status(code)).toBe("Stalled — the Filing Index is gone");
        const before = harness.current.sim.core.calls().byOperation.updateRows ?? 0;
        await confirmStalled(deps, { jobKey: key!, instanceId: instanceId! });
        expect(harness.current.sim.core.calls().byOperation.updateRows ?? 0).toBe(before);
        expect((await deps.jobs.require(key!)).row).toMatchObject({ state: "parked", intakeStatus: "Stalled — the Filing Index is gone" });
    });

    it("regression chaos seed 70073 parked job's Stalled never written: the park step does not fail over it, and the next sweep writes it at any age, once", async () => {
        const { deps, sim } = harness.current;
        const sheet = intake(harness.current);
        await sweepSite(deps, harness.current.site);
        const [key] = deps.enqueued;
        const { instanceId, productCode: code } = (await deps.jobs.require(key!)).row;
        await beginAttempt(deps, { jobKey: key!, instanceId: instanceId!, attempt: 1 });
        sim.core.setFaults([{ op: "updateRows", kind: "error4002", times: 50 }]);
        const parked = await parkJob(deps, { jobKey: key!, instanceId: instanceId!, reason: "the Filing Index is gone", stage: "register" });
        sim.core.setFaults([]);
        expect(parked).toMatchObject({ outcome: "done", job: { state: "parked" } });
        expect(sheet.status(code)).toBe("Queued");
        expect(deps.logs.filter((line) => line.includes(`could not write "Stalled — the Filing Index is gone"`))).toEqual([expect.stringMatching(/the intake sweep writes it$/)]);

        // The routine sweep's read does not bring the row (nothing changed it since): the parked job's owed Stall does.
        await sweepSite(deps, harness.current.site);
        expect(sheet.status(code)).toBe("Stalled — the Filing Index is gone");
        expect((await deps.jobs.require(key!)).row).toMatchObject({ state: "parked", intakeStatus: "Stalled — the Filing Index is gone" });
        sim.core.resetCalls();
        await sweepSite(deps, harness.current.site);
        expect(sim.core.calls().byOperation.updateRows ?? 0).toBe(0);
    });

    it("a late duplicate of an earlier stage's step moves the job back nowhere and writes no earlier status", async () => {
        const { deps } = harness.current;
        const sheet = intake(harness.current);
        await sweepSite(deps, harness.current.site);
        const [key] = deps.enqueued;
        const instanceId = (await deps.jobs.require(key!)).row.instanceId!;
        await beginAttempt(deps, { jobKey: key!, instanceId, attempt: 1 });
        await enterStage(deps, { jobKey: key!, instanceId, stage: "register" });
        const code = (await deps.jobs.require(key!)).row.productCode;
        const before = sheet.status(code);

        const late = await enterStage(deps, { jobKey: key!, instanceId, stage: "copy" });

        expect(late.outcome).toBe("done");
        expect((await deps.jobs.require(key!)).row.stage).toBe("register");
        expect(sheet.status(code)).toBe(before);
    });

    it("a product code stays taken by its job when the job's intake row is deleted (chaos seed 1307417682)", async () => {
        const { deps } = harness.current;
        const sheet = intake(harness.current);
        await sweepSite(deps, harness.current.site);
        const [first] = deps.enqueued;
        const job = (await deps.jobs.require(first!)).row;
        const deleted = await fetch(new URL(`sheets/${job.intakeSheetId}/rows?ids=${job.intakeRowId}`, harness.current.sim.baseUrl), {
            method: "DELETE",
            headers: { authorization: "Bearer sim-token" },
        });
        expect(deleted.status).toBe(200);
        await sheet.add({ "Product Code": job.productCode, "Product Name": "Second Pump", "Product Line": job.productLine, Approved: true });

        const report = await sweepSite(deps, harness.current.site);

        expect(report.queued).toEqual([]);
        expect(report.rejected).toHaveLength(1);
        expect(sheet.status(job.productCode)).toBe(`Rejected — Product Code ${job.productCode} is already provisioned by another intake row`);
    });
});
