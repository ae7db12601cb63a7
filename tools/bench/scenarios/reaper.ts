import type { TransactionAction } from "@azure/data-tables";
import type { JobRowInput } from "../../../src/shared/jobs/JobRow";
import { createTableClient } from "../../../src/shared/storage";
import { BenchStack } from "../benchStack";
import type { Measured } from "../figures";

const FINISHED_JOBS = 10_000;
const OPEN_JOBS = 20;
/** Row ids far above the simulator's, so seeded jobs never meet a real intake row. */
const FIRST_SEEDED_ROW = 9_000_000_000;
const BATCH = 100;

/**
 * The reaper's cost with 10,000 finished jobs and 20 open ones in the Jobs table, by its own
 * count line. The jobs are written with the app's JobStore: one finished job, cloned in
 * entity-group batches (10,000 single writes would take most of the bench's time), and 20
 * running jobs that made progress just now, so the reaper has nothing to take over.
 * Production's timings: a 15-minute window.
 */
export async function reaper(storage: string): Promise<Measured> {
    const stack = await BenchStack.start({ storage });
    try {
        const pk = String(stack.intakeSheetId);
        await seedFinishedJobs(stack, pk);
        for (let n = 0; n < OPEN_JOBS; n++) await stack.jobs.create(jobRow(pk, FIRST_SEEDED_ROW + FINISHED_JOBS + n, "running"));
        const counted = stack.host.nextLine(/reaper: .*, (\d+) Jobs-table entities read/, 120_000);
        await stack.host.fire("reaper");
        const line = await counted;
        const read = Number(/(\d+) Jobs-table entities read/.exec(line)![1]);
        return {
            figures: { reaperEntitiesRead: read },
            details: {},
            notes: [`reaper with ${FINISHED_JOBS.toLocaleString("en")} finished and ${OPEN_JOBS} open jobs: ${line.replace(/^.*reaper: /, "")}`],
        };
    } finally {
        await stack.stop();
    }
}

async function seedFinishedJobs(stack: BenchStack, pk: string): Promise<void> {
    const first = FIRST_SEEDED_ROW;
    await stack.jobs.create(jobRow(pk, first, "done"));
    const table = createTableClient(stack.settings.AzureWebJobsStorage!, stack.settings.JOBS_TABLE!);
    const { etag: _etag, timestamp: _timestamp, ...stored } = await table.getEntity<Record<string, unknown>>(pk, String(first));
    for (let start = 1; start < FINISHED_JOBS; start += BATCH) {
        const actions: TransactionAction[] = [];
        for (let n = start; n < Math.min(start + BATCH, FINISHED_JOBS); n++) {
            actions.push(["create", { ...stored, partitionKey: pk, rowKey: String(first + n), productCode: `OLD-${n}` }]);
        }
        await table.submitTransaction(actions);
    }
}

function jobRow(pk: string, rowId: number, state: "done" | "running"): JobRowInput {
    const now = new Date().toISOString();
    return {
        intakeSheetId: pk,
        intakeRowId: String(rowId),
        productCode: `SEED-${rowId}`,
        productName: "Seeded product",
        productLine: "Industrial",
        state,
        stage: state === "running" ? "copy" : "register",
        attempt: 1,
        recoveries: 0,
        createdAt: now,
        lastProgressAt: now,
    };
}
