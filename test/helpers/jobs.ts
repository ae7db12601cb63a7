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
 * Writes `count` done jobs into one intake sheet's partition (see `writeDoneJobRows`): for
 * listings over many finished jobs. Row keys are `<firstRowId + i>`, zero-padded so that they
 * sort as numbers.
 */
export async function writeDoneJobs(table: TableClient, pk: string, count: number, firstRowId = 1): Promise<string[]> {
    const rowKeys = Array.from({ length: count }, (_, index) => String(firstRowId + index).padStart(9, "0"));
    await writeDoneJobRows(
        table,
        pk,
        rowKeys.map((rowKey) => ({ rowKey, productCode: `IND-${rowKey}`, productName: "Hydraulic Pump Assembly" })),
    );
    return rowKeys;
}

/**
 * Writes done jobs into one intake sheet's partition, 100 to a transaction (the table's
 * entity-group limit), the way JobStore stores a job row; `fields` are added to every row.
 */
export async function writeDoneJobRows(
    table: TableClient,
    pk: string,
    jobs: ReadonlyArray<{ rowKey: string; productCode: string; productName: string }>,
    fields: Record<string, unknown> = {},
    at = new Date(),
): Promise<void> {
    const now = at.toISOString();
    for (let start = 0; start < jobs.length; start += 100) {
        await table.submitTransaction(
            jobs.slice(start, start + 100).map(({ rowKey, productCode, productName }): TransactionAction => [
                "create",
                {
                    partitionKey: pk,
                    rowKey,
                    kind: "job",
                    productCode,
                    productName,
                    productLine: "Industrial",
                    state: "done",
                    stage: "register",
                    attempt: 1,
                    recoveries: 0,
                    createdAt: now,
                    lastProgressAt: now,
                    ...fields,
                },
            ]),
        );
    }
}
