import { beforeEach, describe, expect, it } from "vitest";
import { sweepSite } from "../../src/shared/intake/intakeSweep";
import { JobStore } from "../../src/shared/jobs/JobStore";
import { approvedRequest, CountingJobStoreHoldingDone, intakeSheet } from "../helpers/intakeSheet";
import { writeDoneJobRows } from "../helpers/jobs";
import { useProvisioningHarness, type Harness } from "../helpers/provisioningHarness";

const T0 = Date.parse("2026-03-02T09:00:00.000Z");
const NEW_APPROVALS = 20;

/**
 * An intake sheet of `size` rows: the seeded requests, old approved requests long done (each with
 * its done job in the Jobs table), and 20 new approvals since the last sweep. Returns what the
 * routine sweep after those approvals cost, and what a full sweep after it costs.
 */
async function sweepCosts(h: Harness, clock: { at: number }, size: number) {
    const sheet = intakeSheet(h);
    const old = Array.from({ length: size - sheet.rowCount() - NEW_APPROVALS }, (_, n) => approvedRequest(`OLD-${n}`, { Status: "Done" }));
    await sheet.add(old);
    await writeDoneJobs(h, old.map((request) => String(request["Product Code"])));
    // The old done jobs, from one listing: the sweeps that read every row point-read each of them (counted all the same).
    const jobs = new CountingJobStoreHoldingDone(h.table);
    expect(await jobs.holdDoneJobs(String(sheet.sheetId()))).toBe(old.length);
    const deps = { ...h.deps, jobs, now: () => new Date(clock.at) };

    clock.at = T0 + 60_000;
    await sweepSite(deps, h.site);
    for (const key of h.deps.enqueued) h.deps.instances.set((await jobs.require(key)).row.instanceId!, { runtimeStatus: "Running" });
    clock.at = T0 + 90_000;
    await sweepSite(deps, h.site);

    clock.at = T0 + 120_000;
    await sheet.add(Array.from({ length: NEW_APPROVALS }, (_, n) => approvedRequest(`NEW-${n}`)));
    expect(sheet.rowCount()).toBe(size);

    clock.at = T0 + 180_000;
    h.sim.core.resetCalls();
    jobs.pointReads = 0;
    jobs.entitiesRead = 0;
    const routine = await sweepSite(deps, h.site);
    const routineCost = {
        queued: routine.queued.length,
        rowsRead: routine.rowsRead,
        smartsheetCalls: h.sim.core.calls().total,
        byOperation: h.sim.core.calls().byOperation,
        jobPointReads: jobs.pointReads,
        jobEntitiesRead: jobs.entitiesRead,
    };

    clock.at = T0 + 240_000;
    h.sim.core.resetCalls();
    const full = await sweepSite(deps, h.site, "full");
    const fullCost = { rowsRead: full.rowsRead, queued: full.queued.length, missedByCursor: full.missedByCursor.length, byOperation: h.sim.core.calls().byOperation };
    return { routine: routineCost, full: fullCost };
}

/**
 * Done jobs for the old requests, whose Done reached their rows, each holding its code in the code
 * index as the sweep that queued it left it. The index was marked complete by the first look at
 * the partition, before any job (otherwise the first sweep would index every old job's code, one
 * write each, once).
 */
async function writeDoneJobs(h: Harness, codes: readonly string[]): Promise<void> {
    const pk = String(intakeSheet(h).sheetId());
    expect(await h.jobs.holderOfCode(pk, codes[0]!)).toBeUndefined();
    const rowIds = rowIdsByCode(h);
    const jobs = codes.map((code) => ({ rowKey: String(rowIds.get(code)), productCode: code, productName: `Pump ${code}` }));
    await writeDoneJobRows(h.table, pk, jobs, { intakeStatus: "Done" }, new Date(T0), { codeIndex: true });
    expect(await new JobStore(h.table).holderOfCode(pk, codes.at(-1)!)).toBe(jobs.at(-1)!.rowKey);
}

/** One look at the simulator's whole state (it renders every row), not one per code. */
function rowIdsByCode(h: Harness): Map<string, number> {
    const state = h.sim.core.state();
    const intake = state.sheets.find((sheet) => sheet.id === state.intakeSheetId)!;
    const code = intake.columns.find((column) => column.title === "Product Code")!.id;
    return new Map(intake.rows.map((row) => [String(row.cells.find((cell) => cell.columnId === code)?.value), row.id]));
}

describe("a routine intake sweep costs the same at any size", () => {
    const clock = { at: T0 };
    beforeEach(() => {
        clock.at = T0;
    });
    const harness = useProvisioningHarness({ simulator: { clock: () => clock.at } });

    // The product-line folders, the template listing, the changed rows, one batched status write.
    // The changed rows are the new approvals only: the cursor holds Smartsheet's time of the last
    // read (its answer's Date), so the rows whose Queued the first sweep wrote were read once, by
    // the second sweep, and not again. The Jobs table: point reads of each new approved row, of each
    // new code's index row (none found) and of each new job right before its Queued is written, and
    // the queued jobs' index entries and rows.
    const routineCost = {
        queued: NEW_APPROVALS,
        rowsRead: NEW_APPROVALS,
        smartsheetCalls: 4,
        byOperation: { getFolderChildren: 2, getSheet: 1, updateRows: 1 },
        jobPointReads: 63,
        jobEntitiesRead: 66,
    };

    it("at 50 rows", async () => {
        const { routine, full } = await sweepCosts(harness.current, clock, 50);
        expect(routine).toEqual(routineCost);
        expect(routine.smartsheetCalls).toBeLessThanOrEqual(6);
        expect(full).toEqual({ rowsRead: 50, queued: 0, missedByCursor: 0, byOperation: { getFolderChildren: 2, getSheet: 1 } });
    });

    it("at 5,000 rows", async () => {
        const { routine, full } = await sweepCosts(harness.current, clock, 5_000);
        expect(routine).toEqual(routineCost);
        expect(routine.smartsheetCalls).toBeLessThanOrEqual(6);
        // The full sweep's cost does grow: every row, 500 a page; the cursor had missed nothing.
        expect(full).toEqual({ rowsRead: 5_000, queued: 0, missedByCursor: 0, byOperation: { getFolderChildren: 2, getSheet: 10 } });
    }, 120_000);
});
