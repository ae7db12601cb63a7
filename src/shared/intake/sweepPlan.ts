import { z } from "zod";
import { formatJobKey, type JobKey, type JobRow, type JobRowInput } from "../jobs/JobRow";
import type { InvalidJob, StoredJob } from "../jobs/JobStore";
import { JobLife, lineOf } from "../jobs/jobLife";
import { instanceIdFor } from "../jobs/instanceIds";
import { cleanText, composeProductNames, NameDoesNotFitError } from "../naming/productNames";
import { IntakeColumns, IntakeStatus } from "../intakeRow/intakeStatus";
import type { CursorRead, IntakeCursor } from "./IntakeCursorStore";

/** A routine sweep reads the rows changed since its cursor (a `webhook` sweep too, asked for by a callback); a full sweep reads every row. */
export type SweepKind = "routine" | "full" | "webhook";

/** One intake row's request, as the customer typed it; parsing it is the validation. */
const IntakeRequest = z.object({
    productCode: z
        .string()
        .trim()
        .min(1, "Product Code is missing")
        .pipe(
            z
                .string()
                .max(20, "Product Code is longer than 20 characters")
                .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "Product Code may hold only letters, digits, '.', '_' and '-'"),
        ),
    productName: z
        .string()
        .transform(cleanText)
        .pipe(
            z
                .string()
                .min(1, "Product Name is missing")
                .max(200, "Product Name is longer than 200 characters")
                .regex(/[\p{L}\p{N}]/u, "Product Name has no letters or digits"),
        ),
    productLine: z.string().trim().min(1, "Product Line is missing"),
});
type IntakeRequest = z.infer<typeof IntakeRequest>;

/** An intake row's cells, trimmed. */
export interface IntakeRow {
    rowId: number;
    rowNumber: number;
    modifiedAt?: string;
    code: string;
    name: string;
    line: string;
    approved: boolean;
    status: string;
}

export type IntakeColumnIds = Record<keyof typeof IntakeColumns, number>;

/** Everything one site's sweep read from Smartsheet and the Jobs table before deciding anything. */
export interface SweepRead {
    site: string;
    kind: SweepKind;
    intakeSheetId: number;
    /** The cursor as stored: none yet, one that does not parse, or one. */
    cursor: CursorRead;
    /** Product-line folders by name. */
    lines: ReadonlyMap<string, number>;
    /** The template's sheet names and the blueprint's version, as a job row records them. */
    templates: string[];
    blueprintVersion: string;
    blueprintSettled: boolean;
    /** What verdicts depend on besides the rows (a hash of the lines and templates). */
    verdictInputs: string;
    /** How far the stored cursor is ahead of the storage service's clock, when more than the skew allowed (it is not used then). */
    cursorAheadMs?: number;
    /** Where a routine sweep reads from; absent when it would read every row (no usable cursor, or the verdict inputs changed). */
    cursorSince?: Date;
    /** Where this sweep read from; absent when it read every row. */
    since?: Date;
    /** When the sweep read the intake sheet, by Smartsheet's clock (its `modifiedAt`); what the cursor is stamped with. */
    readAt?: string;
    columns: IntakeColumnIds;
    /** The rows read, in sheet order, then those read by id because a Done is owed to them. */
    rows: readonly IntakeRow[];
    /** Rows of the sweep's own read (without those read by id). */
    rowsRead: number;
    /** Done jobs whose Done never reached their intake row (and whose row was not known gone). */
    owedDone: readonly StoredJob[];
    /** Jobs whose intake row refused the sweep's status and whose back-off has ended: their rows are read by id too. */
    retriesDue: readonly StoredJob[];
    /** The job of each row that `rowsWhoseJobIsRead` names; `undefined` for none, or one that does not parse. */
    jobs: ReadonlyMap<number, StoredJob | undefined>;
    /** Product codes of the rows to judge that a job already holds, and the row key of that job. */
    codeHolders: ReadonlyMap<string, number>;
    /** Jobs that could not be read so far, in the order met. */
    invalid: readonly InvalidJob[];
}

/** What the sweep writes to the Jobs table for one row: a new row, or a rejected one replaced. */
export type JobWrite = { create: JobRowInput } | { replace: StoredJob; with: JobRowInput };

/** A log line, as the apply writes it. */
export interface LogLine {
    level: "info" | "warn";
    text: string;
}

/**
 * One intake status to write; with `ifLanded`, only if that job's write landed (an overlapping
 * sweep may have written the job first). The apply re-reads the row's job right before the write
 * and writes what its state owes then (`owedIntakeStatus`), or nothing.
 */
export interface StatusWrite {
    rowId: number;
    status: string;
    ifLanded?: string;
}

/** The intake status a job's state owes its row; none for a running job (its steps write its statuses). */
export function owedIntakeStatus(job: JobRow): string | undefined {
    switch (job.state) {
        case "queued":
            return IntakeStatus.queued;
        case "parked":
            return IntakeStatus.stalled(job.parkReason ?? "parked");
        case "done":
            return IntakeStatus.done;
        case "rejected":
            return IntakeStatus.rejected(job.rejectReason ?? "invalid request");
        case "running":
            return undefined;
    }
}

/** Why a row whose product code another job holds is rejected. */
export function codeTakenReason(productCode: string): string {
    return `Product Code ${productCode} is already provisioned by another intake row`;
}

/** How long the sweep leaves an intake row alone after its `refusals`-th refusal: 2 minutes, doubling, at most an hour. */
export function refusalBackoffMs(refusals: number): number {
    return Math.min(60 * 60_000, 2 * 60_000 * 2 ** Math.max(0, refusals - 1));
}

/** Whether the job's intake row refused a status and its back-off has not ended at `now`. */
function backingOff(job: JobRow | undefined, now: Date): boolean {
    return job?.intakeStatusRetryAt !== undefined && Date.parse(job.intakeStatusRetryAt) > now.getTime();
}

/**
 * One step of a sweep, in the order the apply takes them. A row's `queueJob` or `rejectRequest`
 * "lands" unless its job write finds that an overlapping sweep wrote the job first; whatever names
 * it in `ifLanded` happens only if it landed.
 */
export type SweepAction =
    /** A refused row's back-off ended and it shows what its job owes now (or nothing is owed): the refusal is over. */
    | { type: "settleRefusal"; key: JobKey; line: LogLine }
    /** A done job's intake row is gone: note it on the job, so no Done is owed any more. */
    | { type: "noteIntakeRowGone"; key: JobKey; goneAt: string; line: LogLine }
    /** A valid request: its job is written queued; its Queued and its message follow. */
    | { type: "queueJob"; key: JobKey; jobKey: string; write: JobWrite; line: LogLine }
    /** An invalid request: its job is written rejected with the reason (unless it already says it); its status follows. */
    | { type: "rejectRequest"; key: JobKey; jobKey: string; reason: string; write?: JobWrite; line: LogLine }
    /** The intake statuses, in one batched write (500 rows a request). */
    | { type: "writeStatuses"; intakeSheetId: number; statusColumnId: number; statuses: StatusWrite[] }
    /** A done job's Done reached its intake row (this sweep wrote it, or the row said it already). */
    | { type: "noteDoneWritten"; key: JobKey; line?: LogLine }
    /** The key-only message of a job this sweep queued. */
    | { type: "sendMessage"; key: JobKey; ifLanded: string }
    /** A queued job with no orchestration: its message is sent again. */
    | { type: "requeue"; key: JobKey; jobKey: string; line: LogLine }
    /** Jobs that could not be read: one error line each. */
    | { type: "reportInvalidJobs"; invalid: InvalidJob[]; run: string }
    /** A row that needed work a routine sweep would not have read (full sweeps only). */
    | { type: "reportMissedByCursor"; jobKey: string; line: LogLine }
    /** The whole sweep succeeded: routine sweeps carry on from its read of the sheet. */
    | { type: "advanceCursor"; intakeSheetId: number; cursor: IntakeCursor };

/** A row this sweep did something for (a job written, or a status); `ifLanded` when that depends on a job write. */
interface WorkedRow {
    rowId: number;
    ifLanded?: string;
}

export interface SweepPlan {
    /** The rows' work, up to the messages of the jobs it queued. */
    actions: SweepAction[];
    approvedRows: number;
    /** Rows it works on, in the order it first touches them; a full sweep says which of them the cursor missed. */
    worked: WorkedRow[];
    /** The jobs it queues, by job key. */
    queuing: string[];
}

/** A queued job as listed after the sweep's writes, and whether its orchestration exists (not asked for jobs this sweep queued). */
export interface OutstandingJob {
    key: JobKey;
    hasOrchestration?: boolean;
}

/** The queued jobs listed after the sweep's own writes. */
export interface OutstandingRead {
    queued: readonly OutstandingJob[];
    invalid: readonly InvalidJob[];
}

/**
 * The rows whose job the read looks up: approved rows, then unapproved rows with a status other
 * than Done (unticking cancels nothing, so such a row may hold a finished job whose status someone
 * typed over; a row saying Done has nothing to repair).
 */
export function rowsWhoseJobIsRead(rows: readonly IntakeRow[]): { approved: IntakeRow[]; unapproved: IntakeRow[] } {
    return {
        approved: rows.filter((row) => row.approved),
        unapproved: rows.filter((row) => !row.approved && row.status !== "" && row.status !== IntakeStatus.done),
    };
}

/**
 * The approved rows to judge: those with no job yet (a row whose job does not parse has one) and
 * those whose job was rejected. The Jobs table decides which rows have a job, never the Status a
 * customer may have typed.
 */
export function rowsToJudge(
    approved: readonly IntakeRow[],
    jobs: ReadonlyMap<number, StoredJob | undefined>,
    invalid: readonly InvalidJob[],
    intakeSheetId: number,
): IntakeRow[] {
    const pk = String(intakeSheetId);
    return approved.filter((row) => {
        const state = jobs.get(row.rowId)?.row.state;
        return state === undefined ? !invalid.some((job) => job.jobKey === formatJobKey({ pk, rk: String(row.rowId) })) : state === "rejected";
    });
}

/**
 * What one site's sweep does with what it read: pure, so the same read and `now` give the same
 * plan. Queues valid approved requests that have no job, rejects invalid ones with the reason on
 * the row, repairs final statuses typed over, writes Dones their jobs could not write, and notes
 * done jobs whose row is gone. The statuses go before the messages: a job can start only once its
 * Queued is written, so a fast job's later status is never overwritten.
 */
export function planSweep(read: SweepRead, now: Date): SweepPlan {
    const pk = String(read.intakeSheetId);
    const nowText = now.toISOString();
    const rows = new Map(read.rows.map((row) => [row.rowId, row]));
    const actions: SweepAction[] = [];

    for (const job of read.owedDone.filter((owed) => !rows.has(Number(owed.row.intakeRowId)))) {
        const key = { pk: job.row.intakeSheetId, rk: job.row.intakeRowId };
        actions.push({
            type: "noteIntakeRowGone",
            key,
            goneAt: nowText,
            line: { level: "info", text: `job ${formatJobKey(key)} is done, but its intake row ${job.row.intakeRowId} is gone: no Done left to write` },
        });
    }
    const announcing = read.owedDone.filter((job) => rows.has(Number(job.row.intakeRowId)) && !backingOff(job.row, now));

    const { approved, unapproved } = rowsWhoseJobIsRead(read.rows);
    const candidates = rowsToJudge(approved, read.jobs, read.invalid, read.intakeSheetId);
    // A code belongs to the job that holds it in the Jobs table, whatever its intake row says now
    // (unticked, or deleted: unticking cancels nothing); among new rows, the first approved row wins it.
    const codesTaken = new Map(read.codeHolders);

    const statuses = new Map<number, StatusWrite>();
    const worked = new Map<number, WorkedRow>();
    const work = (rowId: number, ifLanded?: string) => {
        if (!worked.has(rowId)) worked.set(rowId, ifLanded === undefined ? { rowId } : { rowId, ifLanded });
    };
    const setStatus = (row: IntakeRow, status: string, ifLanded?: string) => {
        if (row.status === status || (ifLanded === undefined && backingOff(read.jobs.get(row.rowId)?.row, now))) return;
        statuses.set(row.rowId, ifLanded === undefined ? { rowId: row.rowId, status } : { rowId: row.rowId, status, ifLanded });
        work(row.rowId, ifLanded);
    };

    // A final status cannot move any more, so writing it races with nobody. A parked job's Stalled
    // is put back over anything else (a late `In progress` from its resume, a customer's typing); the
    // apply re-reads each job right before the write and writes what its state owes then. A queued or
    // running job's cell is its steps' business: the sweep writing it could land on a later stage.
    for (const row of [...approved, ...unapproved]) {
        const job = read.jobs.get(row.rowId)?.row;
        if (job?.state === "done" || job?.state === "parked" || (job?.state === "rejected" && !row.approved)) setStatus(row, owedIntakeStatus(job)!);
        // A queued job whose sweep stopped between its job row and its Queued (a function timeout): the row says nothing yet.
        else if (job?.state === "queued" && row.status === "") setStatus(row, IntakeStatus.queued);
    }
    for (const job of announcing) setStatus(rows.get(Number(job.row.intakeRowId))!, IntakeStatus.done);
    // Rows that refused a status: their back-off has ended, so what their job owes is written again.
    for (const job of read.retriesDue) {
        const row = rows.get(Number(job.row.intakeRowId));
        const owed = owedIntakeStatus(job.row);
        if (!row) continue;
        if (owed === undefined || row.status === owed) {
            const key = { pk, rk: job.row.intakeRowId };
            actions.push({ type: "settleRefusal", key, line: { level: "info", text: `job ${formatJobKey(key)}: intake row ${row.rowId} needs no status from the sweep any more; its refusal is settled` } });
        } else setStatus(row, owed);
    }

    const queuing: JobKey[] = [];
    for (const row of [...candidates].sort((a, b) => a.rowNumber - b.rowNumber)) {
        const key = { pk, rk: String(row.rowId) };
        const jobKey = formatJobKey(key);
        const stored = read.jobs.get(row.rowId);
        const verdict = validate(row, read.lines, codesTaken, read.templates);
        if (!verdict.ok) {
            const status = IntakeStatus.rejected(verdict.reason);
            if (stored?.row.rejectReason === verdict.reason && row.status === status) continue;
            const write: JobWrite | undefined = !stored
                ? { create: JobLife.reject.apply({ ...baseRow(key, row, nowText, read), intakeStatus: status }, verdict.reason) }
                : stored.row.rejectReason === verdict.reason
                  ? undefined
                  : { replace: stored, with: JobLife.reject.apply({ ...stored.row, intakeStatus: status }, verdict.reason) };
            actions.push({
                type: "rejectRequest",
                key,
                jobKey,
                reason: verdict.reason,
                ...(write ? { write } : {}),
                line: { level: "warn", text: lineOf(JobLife.reject, key, stored ? "rejected" : "new", verdict.reason) },
            });
            work(row.rowId, jobKey);
            setStatus(row, status, jobKey);
            continue;
        }

        const request = verdict.request;
        const attempt = stored ? stored.row.attempt + 1 : 1;
        const job = {
            ...baseRow(key, row, nowText, read),
            productCode: request.productCode,
            productName: request.productName,
            productLine: request.productLine,
            lineFolderId: read.lines.get(request.productLine),
            attempt,
            instanceId: instanceIdFor(key, attempt),
            intakeStatus: IntakeStatus.queued,
        };
        // The code is this row's from here on, whether its write lands or an overlapping sweep's
        // write of the same row got there first: either way no later row may queue it again.
        codesTaken.set(request.productCode, row.rowId);
        actions.push(
            stored
                ? { type: "queueJob", key, jobKey, write: { replace: stored, with: JobLife.reconsider.apply(job) }, line: { level: "info", text: lineOf(JobLife.reconsider, key, "rejected", "the intake row was corrected") } }
                : { type: "queueJob", key, jobKey, write: { create: JobLife.open.apply(job) }, line: { level: "info", text: lineOf(JobLife.open, key, "new", `${request.productCode} ${request.productName}`) } },
        );
        queuing.push(key);
        work(row.rowId, jobKey);
        setStatus(row, IntakeStatus.queued, jobKey);
    }

    // If the status write fails nothing is sent; the next sweep finds the jobs queued with no
    // orchestration and sends their messages then.
    if (statuses.size > 0) {
        actions.push({ type: "writeStatuses", intakeSheetId: read.intakeSheetId, statusColumnId: read.columns.status, statuses: [...statuses.values()] });
    }
    for (const job of announcing) {
        const key = { pk: job.row.intakeSheetId, rk: job.row.intakeRowId };
        actions.push(
            statuses.has(Number(key.rk))
                ? { type: "noteDoneWritten", key, line: { level: "info", text: `job ${formatJobKey(key)}: Done written onto its intake row, which the job itself could not write` } }
                : { type: "noteDoneWritten", key },
        );
    }
    for (const key of queuing) actions.push({ type: "sendMessage", key, ifLanded: formatJobKey(key) });

    return { actions, approvedRows: approved.length, worked: [...worked.values()], queuing: queuing.map(formatJobKey) };
}

/**
 * What is left once the rows' work is done, from the queued jobs listed after it and the job
 * writes that `landed`: messages sent again for queued jobs with no orchestration (a crash
 * between writing a job and sending its message), the jobs that could not be read, on a full
 * sweep each row whose work the cursor missed, and the cursor moved to the sweep's read of the
 * sheet by Smartsheet's clock (left where it was when the read gave no time).
 */
export function planFollowUp(read: SweepRead, plan: SweepPlan, landed: ReadonlySet<string>, outstanding: OutstandingRead): SweepAction[] {
    const actions: SweepAction[] = [];
    const queuedNow = new Set(plan.queuing.filter((jobKey) => landed.has(jobKey)));
    for (const job of outstanding.queued) {
        const jobKey = formatJobKey(job.key);
        if (queuedNow.has(jobKey) || job.hasOrchestration !== false) continue;
        actions.push({ type: "requeue", key: job.key, jobKey, line: { level: "info", text: `job ${jobKey} queued with no orchestration: message sent again` } });
    }

    const invalid = [...read.invalid];
    invalid.push(...outstanding.invalid.filter((job) => !invalid.some((known) => known.jobKey === job.jobKey)));
    if (invalid.length > 0) actions.push({ type: "reportInvalidJobs", invalid, run: `intake sweep of site ${read.site}` });

    const cursorSince = read.cursorSince;
    if (read.kind === "full" && cursorSince) {
        const rows = new Map(read.rows.map((row) => [row.rowId, row]));
        const owed = new Set(read.owedDone.map((job) => Number(job.row.intakeRowId)).filter((rowId) => rows.has(rowId)));
        const pk = String(read.intakeSheetId);
        for (const worked of plan.worked) {
            if (worked.ifLanded !== undefined && !landed.has(worked.ifLanded)) continue;
            const row = rows.get(worked.rowId)!;
            if (owed.has(worked.rowId) || modifiedSince(row, cursorSince)) continue;
            const jobKey = formatJobKey({ pk, rk: String(worked.rowId) });
            actions.push({
                type: "reportMissedByCursor",
                jobKey,
                line: {
                    level: "warn",
                    text:
                        `job ${jobKey}: intake row ${worked.rowId} needed work that the cursor missed (row last modified ${row.modifiedAt ?? "at an unknown time"}, ` +
                        `routine sweeps read rows modified since ${cursorSince.toISOString()}); the full sweep did it now`,
                },
            });
        }
    }

    if (read.readAt) actions.push({ type: "advanceCursor", intakeSheetId: read.intakeSheetId, cursor: { sweptAt: read.readAt, verdictInputs: read.verdictInputs } });
    return actions;
}

/** What the count line says the sweep read. */
export function readingOf(read: Pick<SweepRead, "kind" | "since" | "cursor" | "cursorAheadMs">): string {
    if (read.since) return `rows modified since ${read.since.toISOString()}`;
    if (read.kind === "full") return "every row";
    if (!read.cursor.cursor) return `every row: ${read.cursor.problem ? "the cursor does not parse" : "no cursor yet"}`;
    if (read.cursorAheadMs !== undefined) return `every row: the cursor is ahead of the storage service's clock by ${Math.round(read.cursorAheadMs / 1000)} s`;
    return "every row: the product lines or the templates changed, so a rejected row may pass now";
}

/** Whether a routine sweep reading rows modified since `since` reads this row (Smartsheet keeps whole seconds). */
function modifiedSince(row: IntakeRow, since: Date): boolean {
    if (row.modifiedAt === undefined) return true;
    return Math.floor(Date.parse(row.modifiedAt) / 1000) >= Math.floor(since.getTime() / 1000);
}

type Verdict = { ok: true; request: IntakeRequest } | { ok: false; reason: string };

function validate(row: IntakeRow, lines: ReadonlyMap<string, number>, codesTaken: ReadonlyMap<string, number>, templates: string[]): Verdict {
    const parsed = IntakeRequest.safeParse({ productCode: row.code, productName: row.name, productLine: row.line });
    if (!parsed.success) return { ok: false, reason: parsed.error.issues.map((issue) => issue.message).join("; ") };
    const request = parsed.data;
    const owner = codesTaken.get(request.productCode);
    if (owner !== undefined && owner !== row.rowId) {
        return { ok: false, reason: codeTakenReason(request.productCode) };
    }
    if (!lines.has(request.productLine)) {
        return { ok: false, reason: `Product Line "${request.productLine}" has no folder under Products (known: ${[...lines.keys()].join(", ")})` };
    }
    try {
        composeProductNames(request.productCode, request.productName, templates);
    } catch (error) {
        if (error instanceof NameDoesNotFitError) return { ok: false, reason: error.message };
        throw error;
    }
    return { ok: true, request };
}

function baseRow(key: JobKey, row: IntakeRow, now: string, read: SweepRead) {
    return {
        intakeSheetId: key.pk,
        intakeRowId: key.rk,
        productCode: row.code || "(none)",
        productName: row.name,
        productLine: row.line,
        attempt: 1,
        recoveries: 0,
        createdAt: now,
        lastProgressAt: now,
        blueprintVersion: read.blueprintVersion,
        blueprintSettled: read.blueprintSettled,
        templates: read.templates,
        intakeStatusColumnId: read.columns.status,
        intakeFolderColumnId: read.columns.folder,
    };
}
