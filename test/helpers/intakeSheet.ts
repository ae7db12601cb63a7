import type { TableClient } from "@azure/data-tables";
import { formatJobKey, type JobKey, type JobRowInput } from "../../src/shared/jobs/JobRow";
import { JobStore, type StoredJob } from "../../src/shared/jobs/JobStore";
import { intakeRow } from "./inspectProduct";
import type { Harness } from "./provisioningHarness";

type CellValues = Record<string, string | boolean>;

/** The intake sheet as customers edit it, by product code and column title, through the Smartsheet API. */
export function intakeSheet(harness: Harness) {
    const state = () => harness.sim.core.state();
    const sheetId = () => state().intakeSheetId!;
    const rowIdOf = (code: string) => intakeRow(state(), code)!.rowId as number;
    // One look at the state per call: the simulator renders every row of every sheet for it.
    const cellsOf = () => {
        const columns = new Map(state().sheets.find((sheet) => sheet.id === sheetId())!.columns.map((column) => [column.title, column.id]));
        return (values: CellValues) => Object.entries(values).map(([title, value]) => ({ columnId: columns.get(title)!, value }));
    };
    return {
        sheetId,
        rowIdOf,
        keyOf: (code: string): JobKey => ({ pk: String(sheetId()), rk: String(rowIdOf(code)) }),
        jobKeyOf: (code: string) => formatJobKey({ pk: String(sheetId()), rk: String(rowIdOf(code)) }),
        status: (code: string) => intakeRow(state(), code)?.Status,
        rowCount: () => state().sheets.find((sheet) => sheet.id === sheetId())!.rows.length,
        /** Adds rows at the bottom, 500 a call (Smartsheet's limit). */
        async add(rows: CellValues[]) {
            const cells = cellsOf();
            for (let start = 0; start < rows.length; start += 500) {
                await harness.deps.smartsheet.addRows(sheetId(), rows.slice(start, start + 500).map((values) => ({ toBottom: true as const, cells: cells(values) })));
            }
        },
        async edit(code: string, values: CellValues) {
            await harness.deps.smartsheet.updateRows(sheetId(), [{ id: rowIdOf(code), cells: cellsOf()(values) }]);
        },
        async remove(code: string) {
            await harness.deps.smartsheet.deleteRows(sheetId(), [rowIdOf(code)]);
        },
    };
}

/** An approved request for a product of the seeded `Industrial` line. */
export function approvedRequest(code: string, extra: CellValues = {}): CellValues {
    return { "Product Code": code, "Product Name": `Pump ${code}`, "Product Line": "Industrial", Approved: true, ...extra };
}

/** The Jobs table, counting the point reads (`get`) it is asked for: a read that finds nothing costs one too. */
export class CountingJobStore extends JobStore {
    pointReads = 0;

    override async get(key: JobKey) {
        this.pointReads += 1;
        return super.get(key);
    }
}

/**
 * A `CountingJobStore` that answers the point reads of done jobs from one listing of them taken
 * beforehand (`holdDoneJobs`), not a round trip each: thousands of old done jobs that no sweep
 * changes, read one by one by a sweep that reads every row, would cost far more time on Azurite
 * than everything else the test does. A read answered so counts as a point read and an entity read
 * all the same, and a job written through this store is read from the table again from then on.
 */
export class CountingJobStoreHoldingDone extends CountingJobStore {
    private readonly held = new Map<string, StoredJob>();

    /** Lists the done jobs of one intake sheet (counted as entities read) and holds them. */
    async holdDoneJobs(pk: string): Promise<number> {
        const listing = await this.listByState(pk, "done");
        if (listing.invalid.length > 0) throw new Error(`invalid done jobs: ${JSON.stringify(listing.invalid)}`);
        for (const job of listing.found) this.held.set(formatJobKey({ pk, rk: job.row.intakeRowId }), job);
        return listing.found.length;
    }

    override async get(key: JobKey) {
        const held = this.held.get(formatJobKey(key));
        if (!held) return super.get(key);
        this.pointReads += 1;
        this.entitiesRead += 1;
        return structuredClone(held);
    }

    override async replace(current: StoredJob, next: JobRowInput, options: Parameters<JobStore["replace"]>[2]) {
        this.held.delete(formatJobKey({ pk: current.row.intakeSheetId, rk: current.row.intakeRowId }));
        return super.replace(current, next, options);
    }
}

/** The Jobs table failing the n-th job row it is asked to create, as a storage outage in the middle of a sweep would. */
export class JobStoreFailingCreate extends JobStore {
    private creates = 0;

    constructor(
        table: TableClient,
        private readonly failing: number,
    ) {
        super(table);
    }

    override async create(input: JobRowInput) {
        this.creates += 1;
        if (this.creates === this.failing) throw new Error("The Table service is unavailable (simulated outage)");
        return super.create(input);
    }
}
