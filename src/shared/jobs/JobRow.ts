import { z } from "zod";

export const JobState = z.enum(["queued", "running", "parked", "done", "rejected"]);
export type JobState = z.infer<typeof JobState>;

/** Jobs someone is still working on: the reaper's and the reconciler's whole world. */
export const OPEN_STATES: readonly JobState[] = ["queued", "running"];
/** Jobs kept in the active index: open ones and those waiting for a person. */
export const ACTIVE_STATES: readonly JobState[] = ["queued", "running", "parked"];
export const FINAL_STATES: readonly JobState[] = ["done", "rejected"];

export const Stage = z.enum(["copy", "rename", "register"]);
export type Stage = z.infer<typeof Stage>;

/** Stored as a string in the Table (ids exceed Int32), a number everywhere else. */
const Id = z.coerce.number().int().positive().refine(Number.isSafeInteger, "id beyond 2^53");
const Timestamp = z.iso.datetime();
const DigitsKey = z.string().regex(/^\d+$/, "expected the decimal digits of a Smartsheet id");

/** Table columns hold objects as JSON text. */
function json<T extends z.ZodType>(schema: T) {
    return z.preprocess((value) => (typeof value === "string" ? JSON.parse(value) : value), schema);
}

export const SheetCopy = z.object({
    templateSheetId: Id,
    sheetId: Id,
    name: z.string(),
    permalink: z.string().optional(),
});
export type SheetCopy = z.infer<typeof SheetCopy>;

/** Written before a copy is sent: the copy may exist even if its result was never recorded. */
export const CopyClaim = z.object({ claimedAt: Timestamp, by: z.string() });
export type CopyClaim = z.infer<typeof CopyClaim>;

export const RemovedDuplicate = z.object({ sheetId: Id, name: z.string(), removedAt: Timestamp });

export const JobRow = z.object({
    /** PartitionKey. */
    intakeSheetId: DigitsKey,
    /** RowKey. */
    intakeRowId: DigitsKey,
    productCode: z.string().min(1),
    productName: z.string(),
    productLine: z.string(),
    state: JobState,
    stage: Stage.optional(),
    /** 1 for the first run; every recovery or resubmission starts a new attempt (and instance id). */
    attempt: z.number().int().min(1),
    recoveries: z.number().int().min(0),
    instanceId: z.string().optional(),
    createdAt: Timestamp,
    copyStartedAt: Timestamp.optional(),
    lastProgressAt: Timestamp,
    lineFolderId: Id.optional(),
    folderId: Id.optional(),
    folderLink: z.string().optional(),
    /** Template sheet name → the product's copy of it. */
    copies: json(z.record(z.string(), SheetCopy)).default({}),
    copyClaims: json(z.record(z.string(), CopyClaim)).default({}),
    /** Template sheet names whose copies no longer reference template sheets. */
    remapped: json(z.array(z.string())).default([]),
    summaryStamped: z.boolean().default(false),
    registered: z.boolean().default(false),
    duplicatesRemoved: json(z.array(RemovedDuplicate)).default([]),
    parkReason: z.string().optional(),
    rejectReason: z.string().optional(),
    lastError: z.string().optional(),
    smartsheetCalls: z.number().int().min(0).default(0),
    callsByOperation: json(z.record(z.string(), z.number().int())).default({}),
});
export type JobRow = z.infer<typeof JobRow>;
export type JobRowInput = z.input<typeof JobRow>;

export interface JobKey {
    pk: string;
    rk: string;
}

export const JobKeyParts = z.object({ pk: DigitsKey, rk: DigitsKey });

/** `<intakeSheetId>-<intakeRowId>`: how people, URLs and logs name a job. */
export function formatJobKey(key: JobKey): string {
    return `${key.pk}-${key.rk}`;
}

export function parseJobKey(text: string): JobKey | undefined {
    const match = /^(\d{1,19})-(\d{1,19})$/.exec(text);
    return match ? { pk: match[1]!, rk: match[2]! } : undefined;
}

export function keyOf(row: Pick<JobRow, "intakeSheetId" | "intakeRowId">): JobKey {
    return { pk: row.intakeSheetId, rk: row.intakeRowId };
}
