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
