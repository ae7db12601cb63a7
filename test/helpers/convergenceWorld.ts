import { afterAll, beforeAll, expect } from "vitest";
import { planProducts, type ConvergePlans } from "../../src/shared/convergence/planProducts";
import { sweepSite } from "../../src/shared/intake/intakeSweep";
import type { SimSheetState, SimState } from "../../tools/smartsheet-sim";
import { intakeRow } from "./inspectProduct";
import { startProvisioningHarness, type Harness, type HarnessOptions } from "./provisioningHarness";
import { runSteps } from "./runSteps";
import { api } from "../sim/simTestKit";

/** The Change Log's Approval Status formula as the template's change fixes it. */
export const FIXED_STATUS = '=IF(COUNTIF({Approvals Decision}, "Pending") > 0, "Awaiting approval", "All approved")';

/**
 * A describe's one world: a harness of its own (simulator, jobs table) that `build` provisions
 * before the describe's first test, shared by its tests (not reset between them) and closed after
 * its last. A test that changes it runs after those that read what it changes, and says so.
 */
export function sharedWorld<W extends object>(options: HarnessOptions, build: (harness: Harness) => Promise<W>): { readonly current: Harness & W } {
    let harness: (Harness & { close(): Promise<void> }) | undefined;
    let world: (Harness & W) | undefined;
    beforeAll(async () => {
        harness = await startProvisioningHarness(options);
        world = { ...harness, ...(await build(harness)) };
    });
    afterAll(async () => {
        await harness?.close();
    });
    return {
        get current() {
            if (!world) throw new Error("world not built");
            return world;
        },
    };
}

/**
 * Seeded requests taken back before the sweep (Approved unticked), in every site (site n's codes
 * end `-Sn`): a world provisions only the products its claims need.
 */
export async function withdrawRequests({ sim, sites }: Harness, codes: readonly string[]): Promise<void> {
    const state = sim.core.state();
    for (const [index, site] of sites.entries()) {
        const intake = state.sheets.find((sheet) => sheet.id === site.intakeSheetId)!;
        const rows = codes.map((code) => intakeRow(state, index === 0 ? code : `${code}-S${index + 1}`, site.intakeSheetId)!);
        await site.smartsheet.updateRows(site.intakeSheetId, rows.map((row) => ({ id: row.rowId as number, cells: [{ columnId: column(intake, "Approved"), value: false }] })));
    }
}

/** The approved requests of the intake sheet (the seeded ones not taken back), provisioned to done: the version they are on. */
export async function provisionSeeded(current: Harness): Promise<{ codes: string[]; version: string }> {
    const { deps, site } = current;
    await sweepSite(deps, site);
    for (const key of deps.enqueued) await runSteps(deps, key);
    const rows = await Promise.all(deps.enqueued.map(async (key) => (await deps.jobs.require(key)).row));
    expect(rows.map((row) => row.state)).toEqual(rows.map(() => "done"));
    const versions = new Set(rows.map((row) => row.blueprintVersion));
    expect(versions.size).toBe(1);
    return { codes: rows.map((row) => row.productCode).sort(), version: [...versions][0]! };
}

/**
 * The customer's template edit, through the simulator's REST API, a second after the products'
 * analysis (Smartsheet's `modifiedAt` counts whole seconds): a column added to Risk Register, the
 * Change Log's Approval Status formula fixed, a summary field added to Specifications.
 */
export async function changeTemplate({ sim, deps }: Harness): Promise<void> {
    await nextSecond();
    const state = sim.core.state();
    const riskRegister = templateSheet(state, "Risk Register");
    const added = await api(sim, "POST", `sheets/${riskRegister.id}/columns`, { title: "Owner", type: "TEXT_NUMBER", index: riskRegister.columns.length });
    expect(added.status).toBe(200);
    const changeLog = templateSheet(state, "Change Log");
    const fixed = await api(sim, "PUT", `sheets/${changeLog.id}/columns/${column(changeLog, "Approval Status")}`, { formula: FIXED_STATUS });
    expect(fixed.status).toBe(200);
    await deps.smartsheet.addSummaryFields(templateSheet(state, "Specifications").id, [{ title: "Review Cycle", type: "TEXT_NUMBER", objectValue: "Quarterly" }]);
}

/** A customer rewrites the Approval Status formula of one product's Change Log. */
export async function customerEditsStatusFormula({ sim }: Harness, code: string): Promise<void> {
    const copy = sim.core.state().sheets.find((sheet) => sheet.name.startsWith(`${code} `) && sheet.name.endsWith(" - Change Log"))!;
    const edited = await api(sim, "PUT", `sheets/${copy.id}/columns/${column(copy, "Approval Status")}`, {
        formula: `=IF(COUNTIF({${code} Approvals Decision}, "Pending") > 0, "Waiting on approvals", "Clear")`,
    });
    expect(edited.status).toBe(200);
}

export function templateSheet(state: SimState, name: string): SimSheetState {
    const sheet = state.sheets.find((candidate) => candidate.folderId === state.templateFolderId && candidate.name === name);
    if (!sheet) throw new Error(`no template sheet ${name}`);
    return sheet;
}

export function column(sheet: SimSheetState, title: string): number {
    const found = sheet.columns.find((candidate) => candidate.title === title);
    if (!found) throw new Error(`${sheet.name} has no column ${title}`);
    return found.id;
}

export function nextSecond(): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, 1_050 - (Date.now() % 1_000)));
}

/**
 * The convergence tests' usual world: IND-1042 and IND-1043 provisioned (CON-2201's request taken
 * back: a product as the template has it and one its customer edited), then the template changed
 * once (`changeTemplate`), `edited`'s Change Log edited by its customer, and the change analysed by
 * a first dry run, which stored the target version.
 */
export async function editedAfterTemplateChange(current: Harness, edited: string): Promise<{ codes: string[]; version: string; analysed: ConvergePlans; target: string }> {
    await withdrawRequests(current, ["CON-2201"]);
    const provisioned = await provisionSeeded(current);
    await changeTemplate(current);
    await customerEditsStatusFormula(current, edited);
    const analysed = await planProducts(current.deps, {});
    return { ...provisioned, analysed, target: analysed.targets[0]!.version };
}
