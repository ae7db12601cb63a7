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
 * Writes done jobs into one intake sheet's partition, 100 entities to a transaction (the table's
 * entity-group limit), the way JobStore stores a job row; `fields` are added to every row. With
 * `codeIndex`, each job's code row goes in beside it, as the sweep's write reserves it (the
 * partition's code index must already be marked complete, e.g. by a `holderOfCode` before any job
 * was written); without it the jobs are as written before the code index existed.
 */
export async function writeDoneJobRows(
    table: TableClient,
    pk: string,
    jobs: ReadonlyArray<{ rowKey: string; productCode: string; productName: string }>,
    fields: Record<string, unknown> = {},
    at = new Date(),
    options: { codeIndex?: boolean } = {},
): Promise<void> {
    const now = at.toISOString();
    const perTransaction = options.codeIndex ? 50 : 100;
    for (let start = 0; start < jobs.length; start += perTransaction) {
        await table.submitTransaction(
            jobs.slice(start, start + perTransaction).flatMap(({ rowKey, productCode, productName }): TransactionAction[] => [
                [
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
                ],
                ...(options.codeIndex ? [["create", { partitionKey: pk, rowKey: `code-${productCode}`, kind: "code", jobRowKey: rowKey }] satisfies TransactionAction] : []),
            ]),
        );
    }
}
