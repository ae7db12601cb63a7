import { describe, expect, it } from "vitest";
import { sweepSite, type SweepDeps } from "../../src/shared/intake/intakeSweep";
import type { JobKey } from "../../src/shared/jobs/JobRow";
import { copyTemplateSheet, ensureProductFolder, verifyCopies } from "../../src/shared/provisioning/copyStage";
import { failureKind } from "../../src/shared/failures";
import { failureOfStep, StepBugError } from "../../src/shared/provisioning/contracts";
import { beginAttempt } from "../../src/shared/provisioning/lifecycle";
import { stampSummary } from "../../src/shared/provisioning/remap/stampSummary";
import { useProvisioningHarness } from "../helpers/provisioningHarness";
import { inspectProduct, intakeRow } from "../helpers/inspectProduct";
import { runSteps } from "../helpers/runSteps";

const SEEDED = ["IND-1042", "CON-2201", "IND-1043"];

describe("intake sweep and provisioning steps, against the simulator and Azurite", () => {
    const harness = useProvisioningHarness();

    it("turns every approved intake row into one queued job and one key-only message", async () => {
        const { deps, sim } = harness.current;
        const report = await sweepSite(deps, harness.current.site);
        expect(report.queued).toHaveLength(3);
        expect(report.rejected).toEqual([]);
        expect(deps.enqueued).toHaveLength(3);
        for (const code of SEEDED) expect(intakeRow(sim.core.state(), code)?.Status).toBe("Queued");
        expect(intakeRow(sim.core.state(), "CON-2202")?.Status).toBeUndefined();
    });

    it("sweeping again creates nothing and sends nothing", async () => {
        const { deps, sim } = harness.current;
        await sweepSite(deps, harness.current.site);
        for (const key of deps.enqueued) deps.instances.set((await deps.jobs.require(key)).row.instanceId!, { runtimeStatus: "Running" });
        const copiesBefore = sim.core.calls().byOperation.copySheet ?? 0;
        const again = await sweepSite(deps, harness.current.site);
        expect(again.queued).toEqual([]);
        expect(again.requeued).toEqual([]);
        expect(deps.enqueued).toHaveLength(3);
        expect(sim.core.calls().byOperation.copySheet ?? 0).toBe(copiesBefore);
    });

    it("sends the message again for a job that was written but never enqueued (a crash in between)", async () => {
        const { deps } = harness.current;
        const crashing = { ...deps, enqueue: async () => Promise.reject(new Error("process died")) };
        await expect(sweepSite(crashing, harness.current.site)).rejects.toThrow("process died");
        const written = (await deps.jobs.listActive(String(harness.current.config.INTAKE_SHEET_ID))).found;
        // Every job row and its Queued status are written before the first message is sent.
        expect(written.map((job) => job.row.state)).toEqual(["queued", "queued", "queued"]);
        const healed = await sweepSite(deps, harness.current.site);
        expect(healed.requeued.sort()).toEqual(written.map((job) => `${job.row.intakeSheetId}-${job.row.intakeRowId}`).sort());
        expect(healed.queued).toHaveLength(0);
        expect(deps.enqueued).toHaveLength(3);
    });

    it("provisions a product completely within 23 Smartsheet calls", async () => {
        const { deps, sim } = harness.current;
        await sweepSite(deps, harness.current.site);
        const key = deps.enqueued[0]!;
        sim.core.resetCalls();
        await runSteps(deps, key);
        const row = (await deps.jobs.require(key)).row;
        const product = inspectProduct(sim.core.state(), row.productCode);
        expect(row.state).toBe("done");
        expect(product.folders).toHaveLength(1);
        expect(product.sheets.map((sheet) => sheet.name).sort()).toEqual(Object.values(row.copies).map((copy) => copy.name).sort());
        expect(product.sheets).toHaveLength(7);
        expect(product.formulaCount).toBeGreaterThan(0);
        expect(product.foreignFormulas).toEqual([]);
        expect(product.brokenFormulas).toEqual([]);
        expect(product.productCodeValues).toEqual([row.productCode]);
        expect(product.filingRows).toHaveLength(1);
        expect(intakeRow(sim.core.state(), row.productCode)).toMatchObject({ Status: "Done", Folder: row.folderLink });
        expect(row.smartsheetCalls).toBe(sim.core.calls().total);
        expect(row.smartsheetCalls).toBeLessThanOrEqual(23);
    });

    it("running every step twice writes nothing more to Smartsheet", async () => {
        const { deps, sim } = harness.current;
        await sweepSite(deps, harness.current.site);
        const [once, twice] = deps.enqueued;
        sim.core.resetCalls();
        await runSteps(deps, once!);
        const writesOnce = writes(sim.core.calls().byOperation);
        sim.core.resetCalls();
        await runSteps(deps, twice!, { times: 2 });
        expect(writes(sim.core.calls().byOperation)).toEqual(writesOnce);
        const product = inspectProduct(sim.core.state(), (await deps.jobs.require(twice!)).row.productCode);
        expect(product.sheets).toHaveLength(7);
        expect(product.filingRows).toHaveLength(1);
    });

    it("makes one copy when two runs of the same copy step race", async () => {
        const { deps, sim } = harness.current;
        const { step } = await jobWithFolder(deps, 1);
        sim.core.configure({ latencyMs: { copySheet: 150 } });
        const [first, second] = await Promise.all([
            copyTemplateSheet(deps, { ...step, template: "Approvals" }),
            copyTemplateSheet(deps, { ...step, template: "Approvals" }),
        ]);
        expect(first.outcome).toBe("done");
        expect(second.outcome).toBe("done");
        expect(sim.core.calls().byOperation.copySheet).toBe(1);
    });

    it("adopts a copy that was made although Smartsheet answered 4002, and keeps exactly seven sheets", async () => {
        const { deps, sim } = harness.current;
        await sweepSite(deps, harness.current.site);
        const key = deps.enqueued[0]!;
        sim.core.setFaults([{ op: "copySheet", kind: "commitThenError4002", times: 1, skip: 3 }]);
        await runSteps(deps, key);
        const row = (await deps.jobs.require(key)).row;
        expect(sim.core.calls().byOperation.copySheet).toBe(7);
        expect(inspectProduct(sim.core.state(), row.productCode).sheets).toHaveLength(7);
        expect(row.state).toBe("done");
    });

    it("regression verifyCopies duplicate deleted already: a delete Smartsheet carried out although it answered 4002 is re-sent, finds the sheet gone (404) and the step is done, as a twin run's delete would leave it", async () => {
        const { deps, sim } = harness.current;
        const { key, step } = await jobWithFolder(deps, 0);
        for (const template of (await deps.jobs.require(key)).row.templates) await copyTemplateSheet(deps, { ...step, template });
        const recorded = (await deps.jobs.require(key)).row.copies["Suppliers"]!;
        const extra = await deps.smartsheet.copySheet(recorded.templateSheetId, { destinationFolderId: (await deps.jobs.require(key)).row.folderId!, newName: recorded.name, include: [] });
        sim.core.setFaults([{ op: "deleteSheet", kind: "commitThenError4002", times: 1 }]);
        sim.core.resetCalls();

        const verified = await verifyCopies(deps, step);

        expect(verified).toMatchObject({ outcome: "done", missing: [] });
        expect(sim.core.calls().log.filter((call) => call.op === "deleteSheet").map((call) => call.status)).toEqual([500, 404]);
        const after = (await deps.jobs.require(key)).row;
        expect(after.state).toBe("running");
        expect(after.duplicatesRemoved.map((removed) => removed.sheetId)).toEqual([extra.id]);
        expect(sim.core.state().sheets.filter((sheet) => sheet.name === recorded.name).map((sheet) => sheet.id)).toEqual([recorded.sheetId]);
    });

    it("removes a duplicate that slipped through, keeping the copy recorded on the row", async () => {
        const { deps, sim } = harness.current;
        const { key, step } = await jobWithFolder(deps, 0);
        for (const template of (await deps.jobs.require(key)).row.templates) await copyTemplateSheet(deps, { ...step, template });
        const row = (await deps.jobs.require(key)).row;
        const recorded = row.copies["Suppliers"]!;
        const extra = await deps.smartsheet.copySheet(recorded.templateSheetId, {
            destinationFolderId: row.folderId!,
            newName: recorded.name,
            include: [],
        });
        const verified = await verifyCopies(deps, step);
        expect(verified).toMatchObject({ outcome: "done", missing: [] });
        const after = (await deps.jobs.require(key)).row;
        expect(after.copies["Suppliers"]?.sheetId).toBe(recorded.sheetId);
        expect(after.duplicatesRemoved.map((removed) => removed.sheetId)).toEqual([extra.id]);
        expect(sim.core.state().sheets.some((sheet) => sheet.id === extra.id)).toBe(false);
    });

    it("reports a refused name as a permanent outcome instead of retrying", async () => {
        const { deps, sim } = harness.current;
        const { key, step } = await jobWithFolder(deps, 0);
        sim.core.configure({ nameLimit: 30 });
        const outcome = await copyTemplateSheet(deps, { ...step, template: "Document Register" });
        expect(outcome).toMatchObject({ outcome: "permanent", reason: expect.stringContaining("1041") });
        expect((await deps.jobs.require(key)).row.claims).toEqual({});
    });

    it("a step that meets a broken assumption (a bug) records its message on the row and throws it marked as a bug, for its retries and then a park", async () => {
        const { deps } = harness.current;
        const { key, step } = await jobWithFolder(deps, 0);
        // The remap's stamp before any copy is recorded: an assumption of the step, broken.
        const thrown = await stampSummary(deps, step).then(
            () => undefined,
            (error: unknown) => error,
        );
        expect(thrown).toBeInstanceOf(StepBugError);
        expect(failureKind(thrown)).toBe("bug");
        expect(failureOfStep(thrown)).toEqual({ kind: "bug", step: "stampSummary", message: expect.stringMatching(/^The copy of ".+" is not recorded/) });
        const row = (await deps.jobs.require(key)).row;
        expect(row.state).toBe("running");
        expect(row.lastError).toMatch(/^The copy of ".+" is not recorded/);
        expect(deps.logs.some((line) => line.includes("stampSummary failed with an unexpected error"))).toBe(true);
    });

    it("rejects rows with bad data, says why on the intake row, and creates nothing in Smartsheet", async () => {
        const { deps, sim } = harness.current;
        const intake = sim.core.state().sheets.find((sheet) => sheet.id === sim.core.state().intakeSheetId)!;
        const column = (title: string) => intake.columns.find((candidate) => candidate.title === title)!.id;
        const add = (code: string | undefined, name: string, line: string) =>
            deps.smartsheet.addRows(intake.id, [
                {
                    toBottom: true,
                    cells: [
                        ...(code ? [{ columnId: column("Product Code"), value: code }] : []),
                        { columnId: column("Product Name"), value: name },
                        { columnId: column("Product Line"), value: line },
                        { columnId: column("Approved"), value: true },
                    ],
                },
            ]);
        await add(undefined, "Nameless Pump", "Industrial");
        await add("IND-1042", "Second Pump", "Industrial");
        await add("CON-9000", "Toaster", "Kitchen");
        await add("CON-9001", "???", "Consumer");
        const before = sim.core.state();
        const report = await sweepSite(deps, harness.current.site);
        expect(report.rejected).toHaveLength(4);
        expect(report.queued).toHaveLength(3);
        const statuses = sim.core
            .state()
            .sheets.find((sheet) => sheet.id === before.intakeSheetId)!
            .rows.map((row) => row.cells.find((cell) => cell.columnId === column("Status"))?.value)
            .filter((status) => typeof status === "string" && status.startsWith("Rejected"));
        expect(statuses).toEqual([
            "Rejected — Product Code is missing",
            "Rejected — Product Code IND-1042 is already provisioned by another intake row",
            expect.stringContaining('Rejected — Product Line "Kitchen" has no folder under Products'),
            "Rejected — Product Name has no letters or digits",
        ]);
        expect(sim.core.state().folders).toHaveLength(before.folders.length);
        expect(sim.core.state().sheets).toHaveLength(before.sheets.length);
        expect(sim.core.calls().byOperation.copySheet ?? 0).toBe(0);
    });
});

/** After a sweep: the n-th job begun and its product folder made, ready for the copy steps. */
async function jobWithFolder(deps: SweepDeps & { enqueued: JobKey[] }, n: number) {
    await sweepSite(deps, deps.sites.all()[0]!);
    const key = deps.enqueued[n]!;
    const step = { jobKey: key, instanceId: (await deps.jobs.require(key)).row.instanceId! };
    await beginAttempt(deps, { ...step, attempt: 1 });
    await ensureProductFolder(deps, step);
    return { key, step };
}

function writes(byOperation: Record<string, number>): Record<string, number> {
    return Object.fromEntries(Object.entries(byOperation).filter(([operation]) => !/^(get|list)/.test(operation)));
}
