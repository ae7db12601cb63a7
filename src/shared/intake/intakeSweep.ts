import { createHash } from "node:crypto";
import { z } from "zod";
import { currentInstanceId, formatJobKey, keyOf, type JobKey } from "../jobs/JobRow";
import {
    JobConcurrencyError,
    JobExistsError,
    JobStateConflictError,
    readOrReport,
    reportInvalidJobs,
    type InvalidJob,
    type StoredJob,
} from "../jobs/JobStore";
import { JobLife } from "../jobs/jobLife";
import { instanceIdFor } from "../jobs/instanceIds";
import { cleanText, composeProductNames, NameDoesNotFitError } from "../naming/productNames";
import type { Orchestrations } from "../orchestration/Orchestrations";
import type { Blueprint } from "../provisioning/Blueprint";
import { prepareBlueprint } from "../provisioning/blueprintSource";
import type { ProvisioningDeps } from "../provisioning/ProvisioningDeps";
import { columnIdsByTitle } from "../smartsheet/columns";
import type { Row, Sheet } from "../smartsheet/model";
import type { RowUpdate } from "../smartsheet/SmartsheetPort";
import { forEachSite, type SiteFailure } from "../sites/eachSite";
import type { Site } from "../sites/Sites";
import { IntakeColumns, IntakeStatus } from "../intakeRow/intakeStatus";
import { rowsModifiedSince, type CursorRead, type IntakeCursorStore } from "./IntakeCursorStore";

export interface SweepDeps extends ProvisioningDeps {
    orchestrations: Orchestrations;
    /** Sends the key-only provisioning message for a job. */
    enqueue(key: JobKey): Promise<void>;
    /** Where the routine sweep carries on from. */
    cursors: IntakeCursorStore;
}

/** A routine sweep reads the rows changed since its cursor; a full sweep reads every row. */
export type SweepKind = "routine" | "full";

export interface SweepReport {
    site: string;
    kind: SweepKind;
    /** The rows read were those modified since this instant; absent when the whole sheet was read. */
    rowsModifiedSince?: string;
    rowsRead: number;
    approvedRows: number;
    queued: string[];
    rejected: string[];
    requeued: string[];
    /** Jobs whose intake row needed work that a routine sweep would not have read (full sweeps only). */
    missedByCursor: string[];
    statusesWritten: number;
    smartsheetCalls: number;
}

/** One intake row's request, as the customer typed it; parsing it is the validation. */
export const IntakeRequest = z.object({
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
export type IntakeRequest = z.infer<typeof IntakeRequest>;

interface IntakeRow {
    rowId: number;
    rowNumber: number;
    modifiedAt?: string;
    code: string;
    name: string;
    line: string;
    approved: boolean;
    status: string;
}

/** Smartsheet's `rowIds` filter, kept to a URL of reasonable length. */
const ROW_IDS_PER_READ = 100;

/** Every site's sweep: `sites` for those that swept, `failed` for those that could not (each logged and alerted). */
export interface IntakeSweepRun {
    sites: SweepReport[];
    failed: SiteFailure[];
}

/**
 * Sweeps every site's intake sheet, each with its own client and cursor. A site that fails (its
 * token refused, its template folder gone) is logged and alerted, keeps its cursor, and stops
 * no other site.
 */
export async function sweepIntake(deps: SweepDeps, kind: SweepKind = "routine"): Promise<IntakeSweepRun> {
    const run = await forEachSite(deps, kind === "full" ? "full intake sweep" : "intake sweep", (site) => sweepSite(deps, site, kind));
    return { sites: run.results, failed: run.failed };
}

/**
 * Turns approved intake rows that have no job yet into job rows and key-only messages, and rows
 * with bad data into rejected jobs that say why; nothing is created in Smartsheet for either.
 *
 * A routine sweep reads only the rows modified since its cursor (the whole sheet when there is
 * no cursor yet, or when the product lines or templates changed, since a rejected row may pass
 * then), so its cost does not grow with the sheet: the product-line folders, the template
 * listing, one read of the changed rows and one batched status write. What is outstanding at
 * any age comes from the Jobs table instead: queued jobs whose message was lost are sent again,
 * and a `Done` that never reached its intake row is written. The cursor moves to the sweep's
 * start only once the whole sweep has succeeded. A full sweep reads every row and logs, by job
 * key, each row that needed work the cursor had missed.
 */
export async function sweepSite(deps: SweepDeps, site: Site, kind: SweepKind = "routine"): Promise<SweepReport> {
    const startedAt = deps.now();
    const smartsheet = site.smartsheet.withOwnTally();
    const intakeSheetId = site.intakeSheetId;
    const pk = String(intakeSheetId);

    const stored = await deps.cursors.read(intakeSheetId);
    if (stored.problem) {
        deps.log.warn(
            `intake sweep of site ${site.name}: the cursor of intake sheet ${pk} does not parse (${stored.problem}); this sweep reads every row and writes a new one`,
        );
    }
    const lines = new Map<string, number>();
    for (const folder of await smartsheet.listFolderChildren(site.productsFolderId, ["folders"])) {
        if (folder.resourceType === "folder" && !lines.has(folder.name.trim())) lines.set(folder.name.trim(), folder.id);
    }
    const blueprint = await prepareBlueprint(deps, smartsheet, site.templateFolderId);
    const templates = blueprint.sheets.map((template) => template.name);
    const verdictInputs = verdictInputsOf(lines, templates);
    // Where a routine sweep reads from; nowhere when a row untouched since could be judged differently now.
    const cursorSince = stored.cursor?.verdictInputs === verdictInputs ? rowsModifiedSince(stored.cursor, deps.timing.clockSkewMs) : undefined;
    const since = kind === "routine" ? cursorSince : undefined;

    const sheet = await smartsheet.getSheet(intakeSheetId, { pageSize: 500, rowsModifiedSince: since });
    const columns = intakeColumns(sheet);
    const rows = new Map(sheet.rows.map((row) => [row.id, readIntakeRow(row, columns)]));
    const rowsRead = rows.size;

    // A Done the job could not write onto its intake row (locked, say) is owed at any age.
    const invalid: InvalidJob[] = [];
    const doneElsewhere = await deps.jobs.listDoneWithIntakeStatusOtherThan(pk, IntakeStatus.done);
    invalid.push(...doneElsewhere.invalid);
    const owedDone = doneElsewhere.found.filter((job) => !job.row.intakeRowGoneAt);
    const unread = owedDone.map((job) => Number(job.row.intakeRowId)).filter((rowId) => !rows.has(rowId));
    for (let start = 0; start < unread.length; start += ROW_IDS_PER_READ) {
        const read = await smartsheet.getSheet(intakeSheetId, { rowIds: unread.slice(start, start + ROW_IDS_PER_READ) });
        for (const row of read.rows) rows.set(row.id, readIntakeRow(row, columns));
    }
    for (const job of owedDone.filter((owed) => !rows.has(Number(owed.row.intakeRowId)))) {
        await deps.jobs.update(keyOf(job.row), (row) => ({ ...row, intakeRowGoneAt: startedAt.toISOString() }), { from: JobLife.whileDone.from });
        deps.log.info(`job ${formatJobKey(keyOf(job.row))} is done, but its intake row ${job.row.intakeRowId} is gone: no Done left to write`);
    }
    const announcing = owedDone.filter((job) => rows.has(Number(job.row.intakeRowId)));

    const inHand = [...rows.values()];
    const approved = inHand.filter((row) => row.approved);

    // The Jobs table decides which rows have a job, never the Status a customer may have typed.
    const jobs = new Map<number, StoredJob | undefined>();
    const jobOf = async (row: IntakeRow) => {
        if (!jobs.has(row.rowId)) {
            const key = { pk, rk: String(row.rowId) };
            jobs.set(row.rowId, await readOrReport(() => deps.jobs.get(key), key, invalid));
        }
        return jobs.get(row.rowId);
    };
    for (const row of approved) await jobOf(row);
    // No job yet (a row whose job does not parse has one), or a rejected one to look at again.
    const candidates = approved.filter((row) => {
        const state = jobs.get(row.rowId)?.row.state;
        return state === undefined ? !invalid.some((job) => job.jobKey === formatJobKey({ pk, rk: String(row.rowId) })) : state === "rejected";
    });

    // A code belongs to the job that holds it in the Jobs table, whatever its intake row says now
    // (unticked, or deleted: unticking cancels nothing); among new rows, the first approved row wins it.
    const codesTaken = new Map<string, number>();
    for (const code of new Set(candidates.map((row) => row.code))) {
        if (!code) continue;
        const holder = await deps.jobs.holderOfCode(pk, code);
        if (holder !== undefined) codesTaken.set(code, Number(holder));
    }

    const report: SweepReport = {
        site: site.name,
        kind,
        ...(since ? { rowsModifiedSince: since.toISOString() } : {}),
        rowsRead,
        approvedRows: approved.length,
        queued: [],
        rejected: [],
        requeued: [],
        missedByCursor: [],
        statusesWritten: 0,
        smartsheetCalls: 0,
    };
    const statusWrites = new Map<number, string>();
    // Rows this sweep did something for: a job written, or a status.
    const worked = new Set<number>();
    const setStatus = (row: IntakeRow, status: string) => {
        if (row.status === status) return;
        statusWrites.set(row.rowId, status);
        worked.add(row.rowId);
    };
    const toSend: JobKey[] = [];
    const now = startedAt.toISOString();

    // A final status cannot move any more, so writing it races with nobody. A queued, running or
    // parked job's cell is its steps' business: the sweep writing it could land on a later stage.
    for (const row of approved) {
        const state = jobs.get(row.rowId)?.row.state;
        if (state === "done") setStatus(row, IntakeStatus.done);
    }
    // Unticking Approved cancels nothing, so an unticked row may hold a finished job whose status
    // someone typed over. (Rows already saying "Done" are left unread: nothing to repair there.)
    for (const row of inHand.filter((candidate) => !candidate.approved && candidate.status !== "" && candidate.status !== IntakeStatus.done)) {
        const job = (await jobOf(row))?.row;
        if (job?.state === "done") setStatus(row, IntakeStatus.done);
        if (job?.state === "rejected") setStatus(row, IntakeStatus.rejected(job.rejectReason ?? "invalid request"));
    }
    for (const job of announcing) setStatus(rows.get(Number(job.row.intakeRowId))!, IntakeStatus.done);

    for (const row of [...candidates].sort((a, b) => a.rowNumber - b.rowNumber)) {
        const key = { pk, rk: String(row.rowId) };
        const jobKey = formatJobKey(key);
        const stored = jobs.get(row.rowId);
        const verdict = validate(row, lines, codesTaken, templates);
        if (!verdict.ok) {
            const status = IntakeStatus.rejected(verdict.reason);
            if (stored?.row.rejectReason === verdict.reason && row.status === status) continue;
            const written = !stored
                ? await createOrKeep(deps, { ...baseRow(key, row, now, templates, blueprint, columns), state: "rejected", rejectReason: verdict.reason, intakeStatus: status })
                : stored.row.rejectReason === verdict.reason || (await replaceOrKeep(deps, stored, { ...stored.row, rejectReason: verdict.reason, intakeStatus: status }));
            if (!written) continue;
            deps.log.warn(`job ${jobKey} rejected: ${verdict.reason}`);
            worked.add(row.rowId);
            setStatus(row, status);
            report.rejected.push(jobKey);
            continue;
        }

        const request = verdict.request;
        const attempt = stored ? stored.row.attempt + 1 : 1;
        const job = {
            ...baseRow(key, row, now, templates, blueprint, columns),
            productCode: request.productCode,
            productName: request.productName,
            productLine: request.productLine,
            lineFolderId: lines.get(request.productLine),
            state: "queued" as const,
            attempt,
            instanceId: instanceIdFor(key, attempt),
            intakeStatus: IntakeStatus.queued,
        };
        // The code is this row's from here on, whether this write lands or an overlapping sweep's
        // write of the same row got there first: either way no later row may queue it again.
        codesTaken.set(request.productCode, row.rowId);
        if (stored) {
            if (!(await replaceOrKeep(deps, stored, job))) continue;
            deps.log.info(`job ${jobKey} rejected → queued (the intake row was corrected)`);
        } else {
            if (!(await createOrKeep(deps, job))) continue;
            deps.log.info(`job ${jobKey} new → queued (${request.productCode} ${request.productName})`);
        }
        toSend.push(key);
        worked.add(row.rowId);
        setStatus(row, IntakeStatus.queued);
        report.queued.push(jobKey);
    }

    // Statuses first, messages after: a job can only start once its Queued is written, so a
    // fast job's later status is never overwritten. If this write fails nothing is sent; the
    // next sweep finds the jobs queued with no orchestration and sends their messages then.
    const updates: RowUpdate[] = [...statusWrites].map(([rowId, status]) => ({
        id: rowId,
        cells: [{ columnId: columns.status, value: status }],
    }));
    for (let start = 0; start < updates.length; start += 500) {
        await smartsheet.updateRows(intakeSheetId, updates.slice(start, start + 500));
    }
    for (const job of announcing) {
        const key = keyOf(job.row);
        await deps.jobs.update(key, (row) => ({ ...row, intakeStatus: IntakeStatus.done, intakeStatusError: undefined }), { from: JobLife.whileDone.from });
        if (statusWrites.has(Number(key.rk))) deps.log.info(`job ${formatJobKey(key)}: Done written onto its intake row, which the job itself could not write`);
    }
    for (const key of toSend) await deps.enqueue(key);

    // A crash between writing a job and sending its message leaves it queued with no instance.
    const queuedJobs = await deps.jobs.listActive(pk, { states: ["queued"] });
    invalid.push(...queuedJobs.invalid.filter((job) => !invalid.some((known) => known.jobKey === job.jobKey)));
    for (const job of queuedJobs.found) {
        const key = { pk, rk: job.row.intakeRowId };
        if (report.queued.includes(formatJobKey(key))) continue;
        if (await deps.orchestrations.status(currentInstanceId(job.row))) continue;
        await deps.enqueue(key);
        deps.log.info(`job ${formatJobKey(key)} queued with no orchestration: message sent again`);
        report.requeued.push(formatJobKey(key));
    }
    reportInvalidJobs(deps.log, invalid, `intake sweep of site ${site.name}`);

    if (kind === "full" && cursorSince) {
        const owed = new Set(announcing.map((job) => Number(job.row.intakeRowId)));
        for (const rowId of worked) {
            const row = rows.get(rowId)!;
            if (owed.has(rowId) || modifiedSince(row, cursorSince)) continue;
            const jobKey = formatJobKey({ pk, rk: String(rowId) });
            report.missedByCursor.push(jobKey);
            deps.log.warn(
                `job ${jobKey}: intake row ${rowId} needed work that the cursor missed (row last modified ${row.modifiedAt ?? "at an unknown time"}, ` +
                    `routine sweeps read rows modified since ${cursorSince.toISOString()}); the full sweep did it now`,
            );
        }
    }

    await deps.cursors.advance(intakeSheetId, { sweptAt: now, verdictInputs });

    report.statusesWritten = updates.length;
    report.smartsheetCalls = smartsheet.calls().total;
    const read = since ? `rows modified since ${since.toISOString()}` : kind === "full" ? "every row" : `every row: ${wholeSheetBecause(stored)}`;
    deps.log.info(
        `intake sweep of site ${site.name} (${kind}, ${read}): ${rowsRead} rows read, ${approved.length} approved, ${report.queued.length} queued, ` +
            `${report.rejected.length} rejected, ${report.requeued.length} re-sent, ` +
            (kind === "full" ? `${report.missedByCursor.length} missed by the cursor, ` : "") +
            `${report.smartsheetCalls} Smartsheet calls`,
    );
    return report;
}

function wholeSheetBecause(stored: CursorRead): string {
    if (!stored.cursor) return stored.problem ? "the cursor does not parse" : "no cursor yet";
    return "the product lines or the templates changed, so a rejected row may pass now";
}

/** Whether a routine sweep reading rows modified since `since` reads this row (Smartsheet keeps whole seconds). */
function modifiedSince(row: IntakeRow, since: Date): boolean {
    if (row.modifiedAt === undefined) return true;
    return Math.floor(Date.parse(row.modifiedAt) / 1000) >= Math.floor(since.getTime() / 1000);
}

/** What a verdict depends on besides the row itself: the product lines and the template's sheet names. */
function verdictInputsOf(lines: Map<string, number>, templates: readonly string[]): string {
    return createHash("sha256")
        .update(JSON.stringify({ lines: [...lines.keys()].sort(), templates }))
        .digest("hex");
}

type Verdict = { ok: true; request: IntakeRequest } | { ok: false; reason: string };

function validate(row: IntakeRow, lines: Map<string, number>, codesTaken: Map<string, number>, templates: string[]): Verdict {
    const parsed = IntakeRequest.safeParse({ productCode: row.code, productName: row.name, productLine: row.line });
    if (!parsed.success) return { ok: false, reason: parsed.error.issues.map((issue) => issue.message).join("; ") };
    const request = parsed.data;
    const owner = codesTaken.get(request.productCode);
    if (owner !== undefined && owner !== row.rowId) {
        return { ok: false, reason: `Product Code ${request.productCode} is already provisioned by another intake row` };
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

/** Writes a new job row; false when a concurrent sweep got there first (its row and status stand). */
async function createOrKeep(deps: SweepDeps, row: Parameters<SweepDeps["jobs"]["create"]>[0]): Promise<boolean> {
    try {
        await deps.jobs.create(row);
        return true;
    } catch (error) {
        if (error instanceof JobExistsError) return false;
        throw error;
    }
}

/** Replaces a rejected job's row; false when someone else wrote it since it was read. */
async function replaceOrKeep(deps: SweepDeps, stored: StoredJob, next: Parameters<SweepDeps["jobs"]["create"]>[0]): Promise<boolean> {
    try {
        await deps.jobs.replace(stored, next, { from: JobLife.reconsider.from });
        return true;
    } catch (error) {
        if (error instanceof JobConcurrencyError || error instanceof JobStateConflictError) return false;
        throw error;
    }
}

function baseRow(key: JobKey, row: IntakeRow, now: string, templates: string[], blueprint: Blueprint, columns: ColumnIds) {
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
        blueprintVersion: blueprint.version,
        templates,
        intakeStatusColumnId: columns.status,
        intakeFolderColumnId: columns.folder,
    };
}

type ColumnIds = Record<keyof typeof IntakeColumns, number>;

function intakeColumns(sheet: Sheet): ColumnIds {
    const { ids, missing } = columnIdsByTitle(sheet, IntakeColumns);
    if (missing.length > 0) {
        throw new Error(`The intake sheet ${sheet.id} has no ${missing.map((title) => `"${title}"`).join(", ")} column; add it back.`);
    }
    return ids as ColumnIds;
}

function readIntakeRow(row: Row, columns: ColumnIds): IntakeRow {
    const value = (columnId: number) => row.cells.find((cell) => cell.columnId === columnId)?.value;
    const text = (columnId: number) => {
        const found = value(columnId);
        return found === undefined ? "" : String(found).trim();
    };
    return {
        rowId: row.id,
        rowNumber: row.rowNumber,
        modifiedAt: row.modifiedAt,
        code: text(columns.productCode),
        name: text(columns.productName),
        line: text(columns.productLine),
        approved: value(columns.approved) === true,
        status: text(columns.status),
    };
}
