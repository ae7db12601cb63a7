import type { TableClient, TransactionAction } from "@azure/data-tables";
import type { JobRowInput } from "../../src/shared/jobs/JobRow";

let nextRow = 1000;

/** A valid queued job row; override what the test is about. */
export function makeJobRow(overrides: Partial<JobRowInput> = {}): JobRowInput {
    const now = new Date().toISOString();
    return {
        intakeSheetId: "4000000000000001",
        intakeRowId: String(nextRow++),
        productCode: "IND-1042",
        productName: "Hydraulic Pump Assembly",
        productLine: "Industrial",
        state: "queued",
        attempt: 1,
        recoveries: 0,
        createdAt: now,
        lastProgressAt: now,
        ...overrides,
    };
}

/**
 * Writes `count` done jobs into one intake sheet's partition, 100 to a transaction (the table's
 * entity-group limit), the way JobStore stores a job row: for listings over many finished jobs.
 * Row keys are `<firstRowId + i>`, zero-padded so that they sort as numbers.
 */
export async function writeDoneJobs(table: TableClient, pk: string, count: number, firstRowId = 1): Promise<string[]> {
    const now = new Date().toISOString();
    const rowKeys = Array.from({ length: count }, (_, index) => String(firstRowId + index).padStart(9, "0"));
    for (let start = 0; start < rowKeys.length; start += 100) {
        await table.submitTransaction(
            rowKeys.slice(start, start + 100).map((rowKey): TransactionAction => [
                "create",
                {
                    partitionKey: pk,
                    rowKey,
                    kind: "job",
                    productCode: `IND-${rowKey}`,
                    productName: "Hydraulic Pump Assembly",
                    productLine: "Industrial",
                    state: "done",
                    stage: "register",
                    attempt: 1,
                    recoveries: 0,
                    createdAt: now,
                    lastProgressAt: now,
                },
            ]),
        );
    }
    return rowKeys;
}
