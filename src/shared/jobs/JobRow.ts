import { z } from "zod";
import { instanceIdFor } from "./instanceIds";

export const JobState = z.enum(["queued", "running", "parked", "done", "rejected"]);
export type JobState = z.infer<typeof JobState>;

/** Jobs someone is still working on: the reaper's and the reconciler's whole world. */
export const OPEN_STATES: readonly JobState[] = ["queued", "running"];
/** Jobs kept in the active index: open ones and those waiting for a person. */
export const ACTIVE_STATES: readonly JobState[] = ["queued", "running", "parked"];

/**
 * A job's stages, in order. `remap` was called `rename` before #20 (names are composed at copy; the
 * stage remaps references): job rows written then, and the activity inputs and answers of
 * orchestrations in flight across that deploy, say `rename`, and read as `remap`.
 */
export const STAGES = ["copy", "remap", "register"] as const;
export const Stage = z.union([z.enum(STAGES), z.literal("rename").transform((): "remap" => "remap")]);
export type Stage = z.infer<typeof Stage>;

/** Stored as a string in the Table (ids exceed Int32), a number everywhere else. */
const Id = z.coerce.number().int().positive().refine(Number.isSafeInteger, "id beyond 2^53");
const Timestamp = z.iso.datetime();
const DigitsKey = z.string().regex(/^\d+$/, "expected the decimal digits of a Smartsheet id");

/** Table columns hold objects as JSON text. */
/** Table columns hold objects as JSON text; text that is not JSON is an issue of that column, not a crash. */
function json<T extends z.ZodType>(schema: T) {
    return z.preprocess((value, context) => {
        if (typeof value !== "string") return value;
        try {
            return JSON.parse(value);
        } catch {
            context.addIssue({ code: "custom", message: "is not valid JSON text", input: value });
            return z.NEVER;
        }
    }, schema);
}

export const SheetCopy = z.object({
    templateSheetId: Id,
    sheetId: Id,
    name: z.string(),
    permalink: z.string().optional(),
});
export type SheetCopy = z.infer<typeof SheetCopy>;

/**
 * Written before a non-idempotent write (a copy, a new folder, a new filing-index row) is sent:
 * while a claim is fresh another run waits instead of writing too, and once a claim exists the
 * thing may exist even if its result was never recorded, so the next run looks before it writes.
 */
export const Claim = z.object({
    claimedAt: Timestamp,
    by: z.string(),
    /** The write is in flight. False once its run gave up without knowing whether it happened. */
    writing: z.boolean().default(true),
    /**
     * What the write leaves behind if it lands late, for the final audit to look through: `nothing`
     * for a write that only sets a value. Absent on claims made before it was recorded: all of them.
     */
    leaves: z.union([z.enum(["folder", "sheet", "filingRow"]), z.literal("nothing")]).optional(),
});
export type Claim = z.infer<typeof Claim>;

/** One summary request of the remap, as it will be sent: each formula to rewrite, and the product code with them. */
export const PlannedSummaryWrite = z.object({
    updates: z.array(z.union([z.object({ id: Id, formula: z.string() }), z.object({ id: Id, objectValue: z.union([z.string(), z.number(), z.null()]) })])),
    /** The copy's `Product Code` field has the code once this is done: it goes in the request, or was there already. */
    stampsCode: z.boolean(),
});
export type PlannedSummaryWrite = z.infer<typeof PlannedSummaryWrite>;

/**
 * What the remap decided before its first write, so that its re-run need not read it again. The
 * copies do not change once made, so neither does the decision.
 */
export const RemapPlan = z.object({
    /** The template was at the job's (settled) blueprint version when the remap listed it: the blueprint describes the copies. */
    blueprintVersion: z.string(),
    /**
     * Template sheet name → the summary request of its copy, worked out from the summary as read,
     * every formula read checked: a re-run sends it without reading the summary again (and reads
     * the summary only when a claim shows that the request may have been sent).
     */
    summaries: z.record(z.string(), PlannedSummaryWrite).default({}),
});
export type RemapPlan = z.infer<typeof RemapPlan>;

const RemovedDuplicate = z.object({ sheetId: Id, name: z.string(), removedAt: Timestamp });

/** Something the final audit removed: made by a write that landed late, and recorded nowhere on the row. */
export const LateWriteKind = z.enum(["folder", "sheet", "filingRow"]);
export type LateWriteKind = z.infer<typeof LateWriteKind>;

export const LateWriteRemoval = z.object({
    kind: LateWriteKind,
    id: Id,
    name: z.string(),
    removedAt: Timestamp,
});
export type LateWriteRemoval = z.infer<typeof LateWriteRemoval>;

/** A decision a person took on a convergence's conflicts, with the unpark that carried it. */
export const ConvergenceDecision = z.enum(["keep-product", "take-template"]);
export type ConvergenceDecision = z.infer<typeof ConvergenceDecision>;

/**
 * A convergence of the (done) product to another template version, while it runs: what was
 * planned (frozen before the first write, so a re-run carries out the same changes), which of them
 * are carried out, and the conflicts a person must decide (`convergences` keeps the record of
 * each one finished). The plan is the convergence module's `ConvergencePlan`,
 * parsed there (this module stays below it). Stays, `done`, until the next convergence.
 */
export const ConvergenceRun = z.object({
    to: z.string(),
    /** The version planned from (the row's own, or the oldest stored with a shape). */
    from: z.string().optional(),
    /** 1 for the first; an unpark or a new apply after a run stalled takes the next (and a new instance id). */
    attempt: z.number().int().min(1),
    instanceId: z.string(),
    /**
     * `planned`: claimed by an apply, no plan yet; `applying`: plan frozen, changes being made;
     * `parked`: conflicts wait for a decision; `done`: the product is on `to` (kept until the next convergence).
     */
    state: z.enum(["planned", "applying", "parked", "done"]),
    requestedAt: Timestamp,
    requestedBy: z.string().optional(),
    /** The fleet instance that claimed it: that fleet's claim step, run again, answers the same claim. */
    fleet: z.string().optional(),
    lastProgressAt: Timestamp,
    plan: z.unknown().optional(),
    /** Indexes into the plan's changes (then `resolved`'s, after them) carried out. */
    applied: z.array(z.number().int().nonnegative()).default([]),
    /** Changes a `take-template` decision added for conflicts it resolved (indexes after the plan's). */
    resolved: z.array(z.unknown()).default([]),
    decision: ConvergenceDecision.optional(),
    decidedBy: z.string().optional(),
    decisionNote: z.string().optional(),
    parkReason: z.string().optional(),
    parkedAt: Timestamp.optional(),
});
export type ConvergenceRun = z.infer<typeof ConvergenceRun>;

/** A convergence that finished: the product went from one version to the other. */
export const ConvergenceRecord = z.object({
    from: z.string().optional(),
    to: z.string(),
    at: Timestamp,
    changes: z.number().int().nonnegative(),
    /** Conflicts left as the product had them (a `keep-product` decision). */
    kept: z.number().int().nonnegative(),
    decision: ConvergenceDecision.optional(),
    decidedBy: z.string().optional(),
});
export type ConvergenceRecord = z.infer<typeof ConvergenceRecord>;

/** An alert given up: the webhook's status (when it answered), why, after how many tries, when. */
const AlertGivenUp = z.object({ status: z.number().int().optional(), reason: z.string(), tries: z.number().int().min(1), at: Timestamp });

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
    /** The template analysis this job provisions from (see Blueprint). */
    blueprintVersion: z.string().optional(),
    /**
     * False when that analysis was made within a second (plus clock skew) of a template edit: an
     * edit in the same second leaves the version unchanged, so the copies, not the analysis, say
     * what to remap. Rows written before this was known count as settled.
     */
    blueprintSettled: z.boolean().default(true),
    /** The template's sheet names, in the template folder's order. */
    templates: json(z.array(z.string())).default([]),
    lineFolderId: Id.optional(),
    folderId: Id.optional(),
    folderLink: z.string().optional(),
    /** The product folder existed before this job created anything: look before copying. */
    folderAdopted: z.boolean().default(false),
    /** Template sheet name → the product's copy of it. */
    copies: json(z.record(z.string(), SheetCopy)).default({}),
    /** Claim key (`ClaimKey`, in provisioning/claimKeys.ts) → the run that is writing it. */
    claims: json(z.record(z.string(), Claim)).default({}),
    /** Template sheet names whose copies no longer reference template sheets. */
    remapped: json(z.array(z.string())).default([]),
    /** The remap's decision and plan, recorded before its first write (see RemapPlan); gone once the job parks, so a person's fix is read afresh. */
    remapPlan: json(RemapPlan).optional(),
    /**
     * The remap read every copy whole and checked each formula (the template changed mid-job, or
     * its analysis was unsettled): the job's blueprint describes the template, not the copies.
     */
    copiesAnalysed: z.boolean().default(false),
    /** Copies not read whole by the remap whose references to the product's sheets are all made. */
    referencesMadeIn: json(z.array(z.string())).default([]),
    /** Template sheet name → summary field title → the field's id in the product's copy. */
    summaryFieldIds: json(z.record(z.string(), z.record(z.string(), Id))).default({}),
    summaryStamped: z.boolean().default(false),
    /** Copies whose `Product Code` field is stamped: by the remap, in the same request as their summary formulas, or on its own. */
    codeStampedOn: json(z.array(z.string())).default([]),
    registered: z.boolean().default(false),
    registerRowId: Id.optional(),
    /** The last status written to the intake row, so the same status is never written twice. */
    intakeStatus: z.string().optional(),
    /** Why the last status could not be written onto the intake row (deleted, locked…); the job went on. */
    intakeStatusError: z.string().optional(),
    /**
     * The intake row refused the status the sweep wrote (locked, no permission to that row): what
     * Smartsheet said, how many sweeps it refused, whether ops was told (once per refusal spell).
     */
    intakeStatusRefusal: json(
        z.object({
            status: z.string(),
            errorCode: z.number().optional(),
            message: z.string(),
            refusals: z.number().int().min(1),
            firstRefusedAt: Timestamp,
            alerted: z.boolean(),
            /** A sweep telling ops now (an alert cannot be taken back: overlapping sweeps must not both send it). */
            alertClaimedAt: Timestamp.optional(),
            /** Failed tries of its alert; the next may not come before `alertRetryAt`. */
            alertTries: z.number().int().min(0).optional(),
            alertRetryAt: Timestamp.optional(),
            /** Its alert was given up: never sent again for this spell. */
            alertFailed: AlertGivenUp.optional(),
        }),
    ).optional(),
    /** The sweep writes the refused status again from then on (a back-off doubling per refusal); sweeps before it leave the row alone. */
    intakeStatusRetryAt: Timestamp.optional(),
    /** When the sweep, repairing a `Done` that never reached the intake row, found the row deleted: nothing is left to repair. */
    intakeRowGoneAt: Timestamp.optional(),
    /** Ids of the intake sheet's `Status` and `Folder` columns, as the sweep found them. */
    intakeStatusColumnId: Id.optional(),
    intakeFolderColumnId: Id.optional(),
    duplicatesRemoved: json(z.array(RemovedDuplicate)).default([]),
    /**
     * A write of this job went unanswered (or its run died holding a claim) and may still land
     * until this instant: the final audit waits for it before the job may be done.
     */
    lateWritesUntil: Timestamp.optional(),
    /**
     * What those late writes may have made, for the final audit to look through. Absent while
     * `lateWritesUntil` is set (a row from before it was recorded): everything.
     */
    lateWriteKinds: json(z.array(LateWriteKind)).optional(),
    /** When this job first claimed a write: nothing Smartsheet made before it can be this job's. */
    firstClaimAt: Timestamp.optional(),
    /** What the final audit removed because a late write made it (never anything recorded here). */
    lateWritesRemoved: json(z.array(LateWriteRemoval)).default([]),
    /** The orchestration waits on purpose (a durable timer) until then: not a lack of progress. */
    quietUntil: Timestamp.optional(),
    parkReason: z.string().optional(),
    parkedAt: Timestamp.optional(),
    /** Ops has been told about the current parking: the webhook answered 2xx (or none is configured). */
    parkAlerted: z.boolean().default(false),
    /** Tries to tell ops about the current parking, and the last failure. */
    parkAlertAttempts: z.number().int().min(0).default(0),
    parkAlertError: z.string().optional(),
    /**
     * The run telling ops about the current parking, claimed before it sends (an alert cannot be
     * taken back): another run leaves it alone. Gone once the answer is recorded; a claim older than
     * the reaper's window belongs to a run that died or could not record the answer, and the reaper
     * tells ops again (at least once wins over exactly once).
     */
    parkAlertClaim: json(z.object({ claimedAt: Timestamp, by: z.string() })).optional(),
    /** The webhook failed the last try in a way that may pass: the reaper tries again from then on (1 min doubling to 1 h). */
    parkAlertRetryAt: Timestamp.optional(),
    /** The park alert was given up (an answer that can never succeed, or too many tries): nobody sends it again; ops was told in the log. */
    parkAlertFailed: json(AlertGivenUp).optional(),
    rejectReason: z.string().optional(),
    /**
     * Who unparked the job, when, and why: the audit trail of `POST /api/jobs/{key}/unpark`. `by` is
     * the caller's platform identity when `identityProvider` is set (App Service authentication),
     * else what the caller claimed; `claimedBy` is always what the body said.
     */
    unparks: json(
        z.array(
            z.object({
                by: z.string(),
                claimedBy: z.string().optional(),
                identityProvider: z.string().optional(),
                note: z.string().optional(),
                at: Timestamp,
                parkReason: z.string().optional(),
            }),
        ),
    ).default([]),
    /** The latest convergence to another template version (see ConvergenceRun). */
    convergence: json(ConvergenceRun).optional(),
    /** Convergences finished, oldest first: the product's versions after the one it was provisioned from. */
    convergences: json(z.array(ConvergenceRecord)).default([]),
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

/** The instance that owns the job's current attempt. */
export function currentInstanceId(row: Pick<JobRow, "intakeSheetId" | "intakeRowId" | "instanceId" | "attempt">): string {
    return row.instanceId ?? instanceIdFor(keyOf(row), row.attempt);
}
