import { createHash } from "node:crypto";
import { afterFailure, reportAlertGivenUp, alertFailureOf, alertRetryPolicy, type AfterFailure } from "../alerts/delivery";
import { currentInstanceId, formatJobKey, JobState, type JobKey } from "../jobs/JobRow";
import {
    InvalidJobRowError,
    JobConcurrencyError,
    JobExistsError,
    JobStateConflictError,
    ProductCodeTakenError,
    readOrReport,
    reportInvalidJobs,
    type InvalidJob,
    type StoredJob,
} from "../jobs/JobStore";
import { JobLife, lineOf } from "../jobs/jobLife";
import type { Orchestrations } from "../orchestration/Orchestrations";
import { prepareBlueprint } from "../provisioning/blueprintSource";
import { sheetsToCopy } from "../provisioning/templateRules";
import type { ProvisioningDeps } from "../provisioning/ProvisioningDeps";
import { columnIdsByTitle } from "../smartsheet/columns";
import type { Row, Sheet } from "../smartsheet/model";
import type { RefusedRow, SheetRead, SmartsheetPort } from "../smartsheet/SmartsheetPort";
import { forEachSite, type SiteFailure } from "../sites/eachSite";
import type { Site } from "../sites/Sites";
import { IntakeColumns, IntakeStatus } from "../intakeRow/intakeStatus";
import { cursorAheadMs, rowsModifiedSince, type IntakeCursorStore } from "./IntakeCursorStore";
import {
    codeTakenReason,
    owedIntakeStatus,
    planFollowUp,
    refusalBackoffMs,
    planSweep,
    readingOf,
    rowsToJudge,
    rowsWhoseJobIsRead,
    type IntakeColumnIds,
    type IntakeRow,
    type JobWrite,
    type LogLine,
    type OutstandingJob,
    type OutstandingRead,
    type SweepAction,
    type SweepKind,
    type StatusWrite,
    type SweepRead,
} from "./sweepPlan";
import { jobEvents } from "../telemetry/jobEvents";
import { WEBHOOK_GRACE_MS, type WebhookHealth } from "./WebhookHealth";

export type { SweepKind } from "./sweepPlan";

export interface SweepDeps extends ProvisioningDeps {
    orchestrations: Orchestrations;
    /** Sends the key-only provisioning message for a job. */
    enqueue(key: JobKey): Promise<void>;
    /** Where the routine sweep carries on from. */
    cursors: IntakeCursorStore;
    /** Counts, per site and week, what timer sweeps found that no webhook announced. */
    webhookHealth?: WebhookHealth;
}

interface SweepReport {
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
    /** Jobs whose intake row refused its status (locked, no permission): retried with back-off, ops told once. */
    statusesRefused: string[];
    /** A timer sweep of a site with a webhook: the jobs it queued or rejected for rows changed longer ago than a webhook takes (none announced them). */
    unannounced?: string[];
    smartsheetCalls: number;
}

/** Smartsheet's `rowIds` filter, kept to a URL of reasonable length. */
const ROW_IDS_PER_READ = 100;

/** Smartsheet's limit of rows in one update. */
const ROWS_PER_UPDATE = 500;

/** Every site's sweep: `sites` for those that swept, `failed` for those that could not (each logged and alerted). */
interface IntakeSweepRun {
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
 *
 * Read, plan, apply: `readSweep` fetches what the sweep decides on, `planSweep` (pure) decides,
 * the apply carries the plan out. The queued jobs are listed only after the rows' work, so that
 * jobs written since (by this sweep, or one overlapping it) are seen; `planFollowUp` (pure)
 * decides what to send again and what to report, and the cursor moves last.
 */
export async function sweepSite(deps: SweepDeps, site: Site, kind: SweepKind = "routine"): Promise<SweepReport> {
    const startedAt = deps.now();
    const smartsheet = site.smartsheet.withOwnTally();

    const read = await readSweep(deps, site, smartsheet, kind);
    const plan = planSweep(read, startedAt);
    const rowWork = await applySweepActions(deps, smartsheet, plan.actions, site);
    const outstanding = await readOutstanding(deps, read, new Set(plan.queuing.filter((jobKey) => rowWork.landed.has(jobKey))));
    // A row whose job could not be written is read again by the next sweep: the cursor stays.
    const followUpActions = planFollowUp(read, plan, rowWork.landed, outstanding).filter((action) => action.type !== "advanceCursor" || rowWork.unwritten.length === 0);
    const followUp = await applySweepActions(deps, smartsheet, followUpActions, site);

    const unannounced = kind !== "webhook" && site.webhookBaseUrl ? unannouncedBy(read, [...rowWork.queued, ...rowWork.rejected], startedAt) : undefined;
    if (unannounced && unannounced.length > 0) await countUnannounced(deps, site, startedAt, unannounced);

    const report: SweepReport = {
        site: site.name,
        kind,
        ...(read.since ? { rowsModifiedSince: read.since.toISOString() } : {}),
        rowsRead: read.rowsRead,
        approvedRows: plan.approvedRows,
        queued: rowWork.queued,
        rejected: rowWork.rejected,
        requeued: followUp.requeued,
        missedByCursor: followUp.missedByCursor,
        statusesWritten: rowWork.statusesWritten,
        statusesRefused: rowWork.statusesRefused,
        ...(unannounced ? { unannounced } : {}),
        smartsheetCalls: smartsheet.calls().total,
    };
    deps.log.info(
        `intake sweep of site ${site.name} (${kind}, ${readingOf(read)}): ${report.rowsRead} rows read, ${report.approvedRows} approved, ${report.queued.length} queued, ` +
            `${report.rejected.length} rejected, ${report.requeued.length} re-sent, ` +
            (kind === "full" ? `${report.missedByCursor.length} missed by the cursor, ` : "") +
            (report.statusesRefused.length > 0 ? `${report.statusesRefused.length} statuses refused by their rows, ` : "") +
            (unannounced ? `${unannounced.length} found that no webhook announced, ` : "") +
            `${report.smartsheetCalls} Smartsheet calls`,
    );
    deps.telemetry?.event("sweep.completed", { site: site.name, kind, rowsRead: report.rowsRead, queued: report.queued.length, rejected: report.rejected.length, missedByCursor: report.missedByCursor.length, smartsheetCalls: report.smartsheetCalls });
    return report;
}

/**
 * Of the jobs a timer sweep queued or rejected, those whose intake row changed longer ago than a
 * webhook's sweep takes to come (`WEBHOOK_GRACE_MS` before Smartsheet's read): no webhook announced
 * them. A row changed within the grace may have its callback on the way, and is not counted.
 */
function unannouncedBy(read: SweepRead, jobKeys: readonly string[], startedAt: Date): string[] {
    const readAt = read.readAt ? Date.parse(read.readAt) : startedAt.getTime();
    const modifiedAt = new Map(read.rows.map((row) => [formatJobKey({ pk: String(read.intakeSheetId), rk: String(row.rowId) }), row.modifiedAt]));
    return jobKeys.filter((jobKey) => {
        const changed = modifiedAt.get(jobKey);
        return changed !== undefined && Date.parse(changed) < readAt - WEBHOOK_GRACE_MS;
    });
}

/** The receiver's health figure: counted per site and week (a failure to count is logged, and stops nothing). */
async function countUnannounced(deps: SweepDeps, site: Site, at: Date, unannounced: readonly string[]): Promise<void> {
    deps.telemetry?.count("sheetwright.sweep.found", { site: site.name, kind: "unannounced" });
    try {
        await deps.webhookHealth?.add(site.name, at, unannounced.length);
    } catch (error) {
        deps.log.warn(`intake sweep of site ${site.name}: could not count ${unannounced.length} rows no webhook announced (${error instanceof Error ? error.message : String(error)})`);
    }
}

/**
 * Everything one site's sweep decides on: the cursor, the product-line folders, the template
 * (one listing), the intake rows (those changed since the cursor, or all), the done jobs whose
 * Done never reached their row (and those rows, by id, when the read did not bring them), the
 * jobs of the rows that need a look, and who holds the codes of the rows to judge.
 */
async function readSweep(deps: SweepDeps, site: Site, smartsheet: SmartsheetPort, kind: SweepKind): Promise<SweepRead> {
    const intakeSheetId = site.intakeSheetId;
    const pk = String(intakeSheetId);

    const cursor = await deps.cursors.read(intakeSheetId);
    if (cursor.problem) {
        deps.log.warn(
            `intake sweep of site ${site.name}: the cursor of intake sheet ${pk} does not parse (${cursor.problem}); this sweep reads every row and writes a new one`,
        );
    }
    const cursorAhead = cursorAheadMs(cursor, deps.timing.clockSkewMs);
    if (cursorAhead !== undefined) {
        deps.log.warn(
            `intake sweep of site ${site.name}: the cursor of intake sheet ${pk} is ${Math.round(cursorAhead / 1000)} s ahead of the storage service's clock ` +
                `(it says ${cursor.cursor!.sweptAt}, stored at ${cursor.storedAt}; MAX_CLOCK_SKEW_SECONDS allows ${deps.timing.clockSkewMs / 1000} s): ` +
                `a clock that ran ahead stamped it, and trusting it would hide the rows changed until then; this sweep reads every row ` +
                `and writes a cursor stamped by Smartsheet's clock`,
        );
    }
    const lines = new Map<string, number>();
    for (const folder of await smartsheet.listFolderChildren(site.productsFolderId, ["folders"])) {
        if (folder.resourceType === "folder" && !lines.has(folder.name.trim())) lines.set(folder.name.trim(), folder.id);
    }
    const blueprint = await prepareBlueprint(deps, smartsheet, site.templateFolderId);
    const templates = sheetsToCopy(blueprint.sheets);
    const verdictInputs = verdictInputsOf(lines, templates);
    // Where a routine sweep reads from; nowhere when a row untouched since could be judged differently now, or the cursor is ahead.
    const usable = cursor.cursor?.verdictInputs === verdictInputs && cursorAhead === undefined;
    const cursorSince = usable ? rowsModifiedSince(cursor.cursor!, deps.timing.clockSkewMs) : undefined;
    const since = kind === "routine" ? cursorSince : undefined;

    const sheet = await smartsheet.getSheet(intakeSheetId, { pageSize: 500, rowsModifiedSince: since });
    const columns = intakeColumns(sheet);
    const rows = new Map(sheet.rows.map((row) => [row.id, readIntakeRow(row, columns)]));
    const rowsRead = rows.size;
    const readAt = smartsheetTimeOfRead(sheet);
    if (!readAt) {
        deps.log.warn(`intake sweep of site ${site.name}: Smartsheet gave neither a Date nor a modifiedAt for intake sheet ${pk}, the only clock the cursor is stamped by; the cursor stays where it was`);
    }

    // A Done the job could not write onto its intake row (locked, say) is owed at any age.
    const invalid: InvalidJob[] = [];
    const doneElsewhere = await deps.jobs.listDoneWithIntakeStatusOtherThan(pk, IntakeStatus.done);
    invalid.push(...doneElsewhere.invalid);
    const owedDone = doneElsewhere.found.filter((job) => !job.row.intakeRowGoneAt);
    // A row that refused a status is written again once its back-off ends, at any age.
    const retries = await deps.jobs.listIntakeStatusRetriesDue(pk, deps.now());
    invalid.push(...retries.invalid);
    const retriesDue = retries.found.filter((job) => !job.row.intakeRowGoneAt);
    // So is a parked job's Stalled that its park could not write (a rate limit that outlasted the step's retries).
    const parked = await deps.jobs.listActive(pk, { states: ["parked"] });
    invalid.push(...parked.invalid);
    const owedStalls = parked.found.filter((job) => !job.row.intakeRowGoneAt && job.row.intakeStatus !== owedIntakeStatus(job.row));
    const unread = [...new Set([...owedDone, ...retriesDue, ...owedStalls].map((job) => Number(job.row.intakeRowId)))].filter((rowId) => !rows.has(rowId));
    for (let start = 0; start < unread.length; start += ROW_IDS_PER_READ) {
        const byId = await smartsheet.getSheet(intakeSheetId, { rowIds: unread.slice(start, start + ROW_IDS_PER_READ) });
        for (const row of byId.rows) rows.set(row.id, readIntakeRow(row, columns));
    }

    const inHand = [...rows.values()];
    const { approved, unapproved } = rowsWhoseJobIsRead(inHand);
    const jobs = new Map<number, StoredJob | undefined>([...owedStalls, ...retriesDue].map((job) => [Number(job.row.intakeRowId), job]));
    const readJobs = async (of: readonly IntakeRow[]) => {
        for (const row of of) {
            if (jobs.has(row.rowId)) continue;
            const key = { pk, rk: String(row.rowId) };
            jobs.set(row.rowId, await readOrReport(() => deps.jobs.get(key), key, invalid));
        }
    };
    await readJobs(approved);
    const codeHolders = new Map<string, number>();
    for (const code of new Set(rowsToJudge(approved, jobs, invalid, intakeSheetId).map((row) => row.code))) {
        if (!code) continue;
        const holder = await deps.jobs.holderOfCode(pk, code);
        if (holder !== undefined) codeHolders.set(code, Number(holder));
    }
    await readJobs(unapproved);

    return {
        site: site.name,
        kind,
        intakeSheetId,
        cursor,
        lines,
        templates,
        blueprintVersion: blueprint.version,
        blueprintSettled: blueprint.settled,
        verdictInputs,
        ...(cursorAhead !== undefined ? { cursorAheadMs: cursorAhead } : {}),
        ...(cursorSince ? { cursorSince } : {}),
        ...(since ? { since } : {}),
        ...(readAt ? { readAt } : {}),
        columns,
        rows: inHand,
        rowsRead,
        owedDone,
        retriesDue,
        jobs,
        codeHolders,
        invalid,
    };
}

/**
 * The intake sheet's queued jobs, listed after the rows' work (so jobs this sweep or an
 * overlapping one wrote are in it), and whether each has an orchestration; those this sweep
 * queued itself are not asked about.
 */
async function readOutstanding(deps: SweepDeps, read: SweepRead, queuedNow: ReadonlySet<string>): Promise<OutstandingRead> {
    const pk = String(read.intakeSheetId);
    const listing = await deps.jobs.listActive(pk, { states: ["queued"] });
    const queued: OutstandingJob[] = [];
    for (const job of listing.found) {
        const key = { pk, rk: job.row.intakeRowId };
        queued.push(queuedNow.has(formatJobKey(key)) ? { key } : { key, hasOrchestration: Boolean(await deps.orchestrations.status(currentInstanceId(job.row))) });
    }
    return { queued, invalid: listing.invalid };
}

interface Applied {
    /** Job keys of the rows' `queueJob` and `rejectRequest` that landed. */
    landed: Set<string>;
    queued: string[];
    rejected: string[];
    requeued: string[];
    missedByCursor: string[];
    statusesWritten: number;
    statusesRefused: string[];
    /** Rows whose status was refused, or not written because their job moved on. */
    notWritten: Set<number>;
    /** Job keys whose job row could not be written (the storage service refused that row): tried again next sweep. */
    unwritten: string[];
}

/**
 * Carries out a plan's actions in order. Job rows are written conditionally (a new row only if
 * none exists, a rejected row only if still rejected and unchanged since read, a done job's
 * bookkeeping only while done); a job write that finds an overlapping sweep got there first does
 * not land, and nothing that depends on it happens. Any other failure stops the sweep there, so
 * the cursor stays where it was.
 */
async function applySweepActions(deps: SweepDeps, smartsheet: SmartsheetPort, actions: readonly SweepAction[], site: Site): Promise<Applied> {
    const applied: Applied = { landed: new Set(), queued: [], rejected: [], requeued: [], missedByCursor: [], statusesWritten: 0, statusesRefused: [], notWritten: new Set(), unwritten: [] };
    const landed = (jobKey: string | undefined) => jobKey === undefined || applied.landed.has(jobKey);
    const log = (line: LogLine) => (line.level === "warn" ? deps.log.warn(line.text) : deps.log.info(line.text));
    for (const action of actions) {
        switch (action.type) {
            case "noteIntakeRowGone":
                await deps.jobs.update(action.key, (row) => ({ ...row, intakeRowGoneAt: action.goneAt }), { from: JobLife.whileDone.from });
                log(action.line);
                break;
            case "queueJob": {
                const outcome = await writeOrKeep(deps, action.write, action.jobKey, applied);
                if (outcome !== "written" && outcome !== "codeTaken") break;
                if (outcome === "codeTaken") {
                    // An overlapping sweep gave the code to another row between this sweep's read and its write.
                    const reason = codeTakenReason(jobInputOf(action.write).productCode);
                    if ((await writeOrKeep(deps, rejectedWrite(action.write, reason), action.jobKey, applied)) !== "written") break;
                    deps.log.warn(lineOf(JobLife.reject, action.key, "replace" in action.write ? "rejected" : "new", reason));
                    applied.landed.add(action.jobKey);
                    applied.rejected.push(action.jobKey);
                    break;
                }
                log(action.line);
                jobEvents.transition(deps.telemetry, jobInputOf(action.write), deps.sites, { from: "replace" in action.write ? "rejected" : "new", to: "queued" });
                deps.telemetry?.count("sheetwright.sweep.found", { site: site.name, kind: "new" });
                applied.landed.add(action.jobKey);
                applied.queued.push(action.jobKey);
                break;
            }
            case "rejectRequest":
                if (action.write && (await writeOrKeep(deps, action.write, action.jobKey, applied)) !== "written") break;
                log(action.line);
                if (action.write) jobEvents.transition(deps.telemetry, jobInputOf(action.write), deps.sites, { from: "replace" in action.write ? "rejected" : "new", to: "rejected", reason: action.reason });
                applied.landed.add(action.jobKey);
                applied.rejected.push(action.jobKey);
                break;
            case "writeStatuses":
                await writeStatuses(deps, smartsheet, site, action.intakeSheetId, action.statusColumnId, action.statuses.filter((write) => landed(write.ifLanded)), applied);
                break;
            case "settleRefusal":
                await deps.jobs.update(action.key, (row) => ({ ...row, intakeStatusRefusal: undefined, intakeStatusRetryAt: undefined }), { from: JobState.options });
                log(action.line);
                break;
            case "noteDoneWritten":
                if (applied.notWritten.has(Number(action.key.rk))) break;
                await deps.jobs.update(action.key, (row) => ({ ...row, intakeStatus: IntakeStatus.done, intakeStatusError: undefined }), { from: JobLife.whileDone.from });
                if (action.line) log(action.line);
                break;
            case "sendMessage":
                if (applied.queued.includes(action.ifLanded)) await deps.enqueue(action.key);
                break;
            case "requeue":
                await deps.enqueue(action.key);
                log(action.line);
                applied.requeued.push(action.jobKey);
                break;
            case "reportInvalidJobs":
                reportInvalidJobs(deps.log, action.invalid, action.run);
                break;
            case "reportMissedByCursor":
                applied.missedByCursor.push(action.jobKey);
                log(action.line);
                deps.telemetry?.count("sheetwright.sweep.found", { site: site.name, kind: "missedByCursor" });
                break;
            case "advanceCursor":
                await deps.cursors.advance(action.intakeSheetId, action.cursor, deps.timing.clockSkewMs);
                break;
        }
    }
    return applied;
}

/**
 * The intake statuses, each re-read from its job right before the write (the job may have moved
 * on since the sweep read it: an overlapping sweep sent its message, it started, it finished):
 * what its state owes then is written, or nothing for a running job. Each row is written or
 * refused on its own (partial success), so a row Smartsheet refuses (locked, no permission to it)
 * stops no other row: it is noted on its job, retried with back-off, and named to ops once.
 */
async function writeStatuses(
    deps: SweepDeps,
    smartsheet: SmartsheetPort,
    site: Site,
    intakeSheetId: number,
    statusColumnId: number,
    planned: readonly StatusWrite[],
    applied: Applied,
): Promise<void> {
    const due: Array<{ write: StatusWrite & { key: JobKey }; job: StoredJob }> = [];
    for (const plannedWrite of planned) {
        const write = { ...plannedWrite, key: { pk: String(intakeSheetId), rk: String(plannedWrite.rowId) } };
        const job = await deps.jobs.get(write.key).catch((error: unknown) => {
            if (error instanceof InvalidJobRowError) return undefined;
            throw error;
        });
        const owed = job && owedIntakeStatus(job.row);
        if (job && owed !== undefined) due.push({ write: { ...write, status: owed }, job });
        else applied.notWritten.add(write.rowId);
    }
    for (let start = 0; start < due.length; start += ROWS_PER_UPDATE) {
        const batch = due.slice(start, start + ROWS_PER_UPDATE);
        const answer = await smartsheet.updateRowsEach(
            intakeSheetId,
            batch.map(({ write }) => ({ id: write.rowId, cells: [{ columnId: statusColumnId, value: write.status }] })),
        );
        const refused = new Map(answer.refused.map((row) => [row.rowId, row]));
        for (const { write, job } of batch) {
            const refusal = refused.get(write.rowId);
            if (refusal) {
                applied.notWritten.add(write.rowId);
                applied.statusesRefused.push(formatJobKey(write.key));
                await noteRefusal(deps, site, write, refusal);
            } else {
                applied.statusesWritten += 1;
                const recordsStall = job.row.state === "parked" && job.row.intakeStatus !== write.status;
                const settlesRefusal = Boolean(job.row.intakeStatusRefusal || job.row.intakeStatusRetryAt);
                if (recordsStall || settlesRefusal) {
                    await deps.jobs.update(
                        write.key,
                        (row) => ({
                            ...row,
                            // A parked job's Stall is recorded, so the next sweep does not read the row again for it.
                            ...(row.state === "parked" && owedIntakeStatus(row) === write.status ? { intakeStatus: write.status } : {}),
                            ...(settlesRefusal ? { intakeStatusRefusal: undefined, intakeStatusRetryAt: undefined } : {}),
                        }),
                        { from: JobState.options },
                    );
                }
                if (settlesRefusal) {
                    deps.log.info(`job ${formatJobKey(write.key)}: intake row ${write.rowId} took "${write.status}" after ${job.row.intakeStatusRefusal?.refusals ?? 1} refusal(s)`);
                }
            }
        }
    }
}

/**
 * A row refused its status: the job notes it and when the sweep tries again (a back-off doubling
 * per refusal); the first refusal of a spell is an error line and an alert naming the row and what
 * Smartsheet said, later ones a warning. An alert that does not go through is tried at the next refusal.
 */
async function noteRefusal(deps: SweepDeps, site: Site, write: StatusWrite & { key: JobKey }, refusal: RefusedRow): Promise<void> {
    const now = deps.now();
    const jobKey = formatJobKey(write.key);
    // The alert is claimed in the same conditional write that notes the refusal: of two overlapping sweeps, one tells ops.
    let tells = false;
    const noted = await deps.jobs.update(
        write.key,
        (row) => {
            const prior = row.intakeStatusRefusal;
            const refusals = (prior?.refusals ?? 0) + 1;
            const claimLive = prior?.alertClaimedAt !== undefined && now.getTime() - Date.parse(prior.alertClaimedAt) < ALERT_CLAIM_MS;
            const retryLater = prior?.alertRetryAt !== undefined && Date.parse(prior.alertRetryAt) > now.getTime();
            tells = !(prior?.alerted ?? false) && !prior?.alertFailed && !claimLive && !retryLater;
            return {
                ...row,
                intakeStatusRefusal: {
                    status: write.status,
                    ...(refusal.errorCode === undefined ? {} : { errorCode: refusal.errorCode }),
                    message: refusal.message,
                    refusals,
                    firstRefusedAt: prior?.firstRefusedAt ?? now.toISOString(),
                    alerted: prior?.alerted ?? false,
                    ...(prior?.alertTries ? { alertTries: prior.alertTries } : {}),
                    ...(prior?.alertRetryAt ? { alertRetryAt: prior.alertRetryAt } : {}),
                    ...(prior?.alertFailed ? { alertFailed: prior.alertFailed } : {}),
                    ...(tells ? { alertClaimedAt: now.toISOString() } : prior?.alertClaimedAt ? { alertClaimedAt: prior.alertClaimedAt } : {}),
                },
                intakeStatusRetryAt: new Date(now.getTime() + refusalBackoffMs(refusals)).toISOString(),
            };
        },
        { from: JobState.options },
    );
    const said = `Smartsheet said ${refusal.errorCode ?? "?"}: ${refusal.message}`;
    const state = noted.row.intakeStatusRefusal!;
    if (!tells) {
        deps.log.warn(`job ${jobKey}: intake row ${write.rowId} refused "${write.status}" again (${state.refusals} times; ${said}); next try after ${noted.row.intakeStatusRetryAt}`);
        return;
    }
    deps.log.error(
        `job ${jobKey}: intake row ${write.rowId} of site ${site.name} refused "${write.status}" (${said}); every other row was written. ` +
            `Unlock the row or give the token's user edit rights to it; the sweep tries again after ${noted.row.intakeStatusRetryAt}`,
    );
    try {
        await deps.alerts?.send({
            event: "intake.rowRefused",
            site: site.name,
            jobKey,
            intakeSheetId: write.key.pk,
            intakeRowId: write.key.rk,
            status: write.status,
            ...(refusal.errorCode === undefined ? {} : { errorCode: refusal.errorCode }),
            message: refusal.message,
            refusedAt: now.toISOString(),
        });
    } catch (error) {
        const failure = alertFailureOf(error);
        let next: AfterFailure | undefined;
        await deps.jobs.update(
            write.key,
            (row) => {
                const refusal = row.intakeStatusRefusal;
                if (!refusal?.alertClaimedAt) return undefined;
                next = afterFailure(failure, (refusal.alertTries ?? 0) + 1, deps.now(), alertRetryPolicy(deps.config.STALE_AFTER_MINUTES));
                return {
                    ...row,
                    intakeStatusRefusal: {
                        ...refusal,
                        alertClaimedAt: undefined,
                        alertTries: "givenUp" in next ? next.givenUp.tries : next.tries,
                        alertRetryAt: "retryAt" in next ? next.retryAt : undefined,
                        ...("givenUp" in next ? { alertFailed: next.givenUp } : {}),
                    },
                };
            },
            { from: JobState.options },
        );
        const recorded = next as AfterFailure | undefined;
        const givenUp = recorded && "givenUp" in recorded ? recorded.givenUp : undefined;
        deps.log.error(
            `job ${jobKey}: the alert that intake row ${write.rowId} refused its status did not go through (${failure.reason}); the line above is the alert` +
                (givenUp ? "" : `, and the next refusal${recorded && "retryAt" in recorded ? ` after ${recorded.retryAt}` : ""} tries again`),
        );
        if (givenUp) reportAlertGivenUp(deps, { alert: "intake.rowRefused", about: `job ${jobKey}`, ...givenUp });
        return;
    }
    await deps.jobs.update(
        write.key,
        (row) => (row.intakeStatusRefusal ? { ...row, intakeStatusRefusal: { ...row.intakeStatusRefusal, alerted: true, alertClaimedAt: undefined, alertRetryAt: undefined } } : undefined),
        { from: JobState.options },
    );
}

/** How long a sweep's claim to tell ops of a refused row holds: longer than one alert may take (its 10 s timeout). */
const ALERT_CLAIM_MS = 60_000;

/**
 * Writes one row's job: `kept` when an overlapping sweep wrote it since it was read (its row and
 * status stand), `codeTaken` when another job holds its code. The row's job. The storage service refusing this row alone (Azurite fails a transaction
 * holding U+2028, say) stops no other row: it is named in an error line, nothing is sent for it,
 * and the next sweep tries it again (the cursor stays).
 */
async function writeOrKeep(deps: SweepDeps, write: JobWrite, jobKey: string, applied: Applied): Promise<"written" | "kept" | "codeTaken" | "failed"> {
    try {
        if ("create" in write) await deps.jobs.create(write.create, { reserveCode: true });
        else await deps.jobs.replace(write.replace, write.with, { from: JobLife.reconsider.from, reserveCode: true });
        return "written";
    } catch (error) {
        if (error instanceof ProductCodeTakenError) return "codeTaken";
        if (error instanceof JobExistsError || error instanceof JobConcurrencyError || error instanceof JobStateConflictError) return "kept";
        const message = error instanceof Error ? error.message : String(error);
        deps.log.error(`intake sweep: job ${jobKey} could not be written to the Jobs table (${message}); the other rows go on, this row is tried again next sweep`);
        applied.unwritten.push(jobKey);
        return "failed";
    }
}

function jobInputOf(write: JobWrite) {
    return "create" in write ? write.create : write.with;
}

/** The same row's job written rejected instead of queued, with `reason`. */
function rejectedWrite(write: JobWrite, reason: string): JobWrite {
    const { lineFolderId: _line, instanceId: _instance, ...rest } = jobInputOf(write);
    const rejected = JobLife.reject.apply({ ...rest, attempt: "create" in write ? 1 : write.replace.row.attempt, intakeStatus: IntakeStatus.rejected(reason) }, reason);
    return "create" in write ? { create: rejected } : { replace: write.replace, with: rejected };
}

/**
 * When the sweep read the intake sheet, by Smartsheet's clock, the one every instance shares:
 * when Smartsheet answered the read (its `Date`; the first page's, when paged), and never before
 * the sheet's `modifiedAt` as read. A row changed after the read gets a later `modifiedAt`,
 * whatever any instance's clock says. None when Smartsheet gave neither.
 */
function smartsheetTimeOfRead(sheet: SheetRead): string | undefined {
    const times = [sheet.modifiedAt, sheet.answeredAt].map((time) => (time === undefined ? NaN : Date.parse(time))).filter(Number.isFinite);
    return times.length > 0 ? new Date(Math.max(...times)).toISOString() : undefined;
}

/** What a verdict depends on besides the row itself: the product lines and the template's sheet names. */
function verdictInputsOf(lines: Map<string, number>, templates: readonly string[]): string {
    return createHash("sha256")
        .update(JSON.stringify({ lines: [...lines.keys()].sort(), templates }))
        .digest("hex");
}

function intakeColumns(sheet: Sheet): IntakeColumnIds {
    const { ids, missing } = columnIdsByTitle(sheet, IntakeColumns);
    if (missing.length > 0) {
        throw new Error(`The intake sheet ${sheet.id} has no ${missing.map((title) => `"${title}"`).join(", ")} column; add it back.`);
    }
    return ids as IntakeColumnIds;
}

function readIntakeRow(row: Row, columns: IntakeColumnIds): IntakeRow {
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
