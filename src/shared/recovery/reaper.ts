import { IntakeStatus, writeIntakeStatus } from "../intakeRow/intakeStatus";
import { currentInstanceId, formatJobKey, keyOf, OPEN_STATES, type JobKey, type JobRow } from "../jobs/JobRow";
import {
    JobConcurrencyError,
    JobStateConflictError,
    readOrReport,
    reportInvalidJobs,
    type IndexEntry,
    type InvalidJob,
    type Listing,
    type StoredJob,
} from "../jobs/JobStore";
import { JobLife, lineOf } from "../jobs/jobLife";
import { jobEvents } from "../telemetry/jobEvents";
import { instanceIdFor } from "../jobs/instanceIds";
import { LIVE_STATUSES, type OrchestrationState } from "../orchestration/Orchestrations";
import { startAttempt } from "../orchestration/startAttempt";
import { parkAlertClaimIsLive } from "../provisioning/parkAlert";
import { forEachSite, type SiteFailure } from "../sites/eachSite";
import { failureKind } from "../failures";
import type { Site } from "../sites/Sites";
import { ParkAlertRetries, type ParkAlertRetryReport } from "./parkAlertRetries";
import { orphanedText, tellOpsOfOrphanedJobs, type OrphanedIntakeSheet } from "./orphanedJobs";
import { eachJobAlone, orphanedIndexes, failedJobsText, failedSitesText, reconcileSite, type FailedJob, type RecoveryDeps } from "./reconcile";

interface ReaperReport {
    active: number;
    stale: number;
    /** Of the stale ones, those left alone because their work waits in a queue behind others. */
    backlogged: number;
    transitions: string[];
    /** Jobs skipped because their index entry or row does not parse. */
    invalid: InvalidJob[];
    /** Entities this run read from the Jobs table: its cost, which must not grow with finished jobs. */
    entitiesRead: number;
    /** Sites the reaper could not look after this run (each logged and alerted). */
    failed: SiteFailure[];
    /** Jobs it could not look after this run (each logged); the next run tries them again. */
    failedJobs: FailedJob[];
    /** The park alerts this run sent beside the reaping, and those it left for the next run. */
    alerts: ParkAlertRetryReport;
    /** Intake sheets in no site of SITES that still have active jobs: reaped like a site's (nothing is written to Smartsheet), ops told once. */
    orphaned: OrphanedIntakeSheet[];
}

/** How many windows a job may wait in a backlog before it is taken over anyway (its work item may be lost). */
export const BACKLOG_PATIENCE_WINDOWS = 4;

interface Clock {
    now: number;
    windowMs: number;
    /** Some open job made progress within the window: the pipeline as a whole moves. */
    pipelineMoving: boolean;
}

/**
 * The patient reaper. It looks only at active jobs, and takes over only those whose row has not
 * moved for longer than the window — longer than any live worker may run (`functionTimeout`,
 * checked at start-up), and every step touches the row when it starts and when it ends — and
 * whose work is not merely waiting in a queue behind others (see `waitsInBacklog`). It
 * finishes them, never restarts them: a recovery instance continues from the row, adopting what
 * exists. After `MAX_RECOVERIES` it parks the job and tells ops and the customer instead, and
 * it tells ops again of parked jobs whose alert has not gone through yet (beside the reaping,
 * within a budget per run: see `ParkAlertRetries`). It goes site by site: a site that fails is
 * logged and alerted, and stops no other; a job that fails stops no other job. Then it looks after
 * the jobs of intake sheets in no site of SITES the same way, and tells ops of them once.
 */
export async function reap(sharedDeps: RecoveryDeps): Promise<ReaperReport> {
    const deps = { ...sharedDeps, jobs: sharedDeps.jobs.withOwnCount() };
    const now = deps.now().getTime();
    const windowMs = deps.config.STALE_AFTER_MINUTES * 60_000;
    // Every site's jobs share the task hub: whether the pipeline moves is asked of all of them.
    // Only the reaping below says a site is well again: a listing that works ends no outage.
    const listed = await forEachSite(deps, "reaper", async (site) => ({ site, index: await deps.jobs.listActiveIndex(String(site.intakeSheetId)) }), undefined, { endsNoOutage: true });
    const pipelineMoving = listed.results.some(({ index }) =>
        index.found.some((entry) => OPEN_STATES.includes(entry.state) && now - Date.parse(entry.lastProgressAt) <= windowMs),
    );
    const clock: Clock = { now, windowMs, pipelineMoving };
    const indexes = new Map(listed.results.map(({ site, index }) => [site.name, index]));
    // Alerts go out beside the reaping: a webhook that hangs holds up no take-over and no site.
    const alertRetries = new ParkAlertRetries(deps);
    // forEachSite stops for nothing a site throws, so the alerts are always finished.
    const reaped = await forEachSite(
        deps,
        "reaper",
        (site) => reapSite(deps, { pk: String(site.intakeSheetId), site }, indexes.get(site.name)!, clock, alertRetries),
        listed.results.map(({ site }) => site),
    );
    const orphans = await reapOrphans(deps, clock, alertRetries);
    const alerts = await alertRetries.finish();
    const reports = [...reaped.results, ...orphans.reports];
    const failed = [...listed.failed, ...reaped.failed, ...orphans.failed];
    const report: ReaperReport = {
        active: reaped.results.reduce((sum, one) => sum + one.active, 0),
        stale: reports.reduce((sum, one) => sum + one.stale, 0),
        backlogged: reports.reduce((sum, one) => sum + one.backlogged, 0),
        transitions: reports.flatMap((one) => one.transitions),
        invalid: reports.flatMap((one) => one.invalid),
        failed,
        failedJobs: reports.flatMap((one) => one.failedJobs),
        alerts,
        orphaned: orphans.orphaned,
        entitiesRead: deps.jobs.entitiesRead,
    };
    deps.log.info(
        `reaper: ${report.active} active jobs, ${report.stale} without progress for ${deps.config.STALE_AFTER_MINUTES} min, ` +
            `${report.backlogged} waiting in a backlog, ${report.transitions.length} transitions, ${report.invalid.length} invalid skipped, ` +
            `${report.entitiesRead} Jobs-table entities read` +
            failedSitesText(failed) +
            failedJobsText(report.failedJobs) +
            orphanedText(report.orphaned) +
            parkAlertsText(alerts),
    );
    deps.telemetry?.event("reaper.completed", { active: report.active, stale: report.stale, backlogged: report.backlogged, transitions: report.transitions.length, failedSites: failed.length });
    return report;
}

/** `; park alerts: 1 sent, 3 failed, 9 left for the next run`, or nothing when none was owed. */
function parkAlertsText(alerts: ParkAlertRetryReport): string {
    if (alerts.sent + alerts.failed + alerts.deferred === 0) return "";
    return `; park alerts: ${alerts.sent} sent, ${alerts.failed} failed, ${alerts.deferred} left for the next run`;
}

type SiteReport = Omit<ReaperReport, "failed" | "entitiesRead" | "alerts" | "orphaned">;

/**
 * The jobs of intake sheets in no site of SITES (taken out while jobs were open), reaped like a
 * site's so that none is lost from sight: a stale one is taken over (its next attempt parks, for
 * want of a site), a parked one's alert is retried; ops is told once per intake sheet.
 */
async function reapOrphans(
    deps: RecoveryDeps,
    clock: Clock,
    alertRetries: ParkAlertRetries,
): Promise<{ reports: SiteReport[]; failed: SiteFailure[]; orphaned: OrphanedIntakeSheet[] }> {
    const reports: SiteReport[] = [];
    const failed: SiteFailure[] = [];
    const orphaned: OrphanedIntakeSheet[] = [];
    for (const [pk, index] of await orphanedIndexes(deps, "reaper")) {
        const sheet = { intakeSheetId: pk, active: index.found.length + index.invalid.length };
        orphaned.push(sheet);
        alertRetries.oweAlert({ about: `intake sheet ${pk}`, line: `${sheet.active} active jobs in no site of SITES`, tell: () => tellOpsOfOrphanedJobs(deps, sheet) });
        try {
            reports.push(await reapSite(deps, { pk }, index, clock, alertRetries));
        } catch (error) {
            const reason = error instanceof Error ? error.message : String(error);
            deps.log.error(`reaper: the jobs of intake sheet ${pk} (in no site of SITES) failed: ${reason}; the next run tries again`);
            failed.push({ site: `intake sheet ${pk}`, reason, kind: failureKind(error) });
        }
    }
    return { reports, failed, orphaned };
}

/** One site's jobs (or an intake sheet's in no site): reconcile, then take over (or park) the stale ones; the unalerted parked ones are owed to `alertRetries`. */
async function reapSite(
    deps: RecoveryDeps,
    { pk, site }: { pk: string; site?: Site },
    index: Listing<IndexEntry>,
    clock: Clock,
    alertRetries: ParkAlertRetries,
): Promise<SiteReport> {
    const reconciled = await reconcileSite(deps, { intakeSheetId: pk }, "reaper", index);
    const transitions = [...reconciled.transitions];
    const isStale = (job: Pick<JobRow, "state" | "lastProgressAt" | "quietUntil">) =>
        OPEN_STATES.includes(job.state) && clock.now - quietSince(job) > clock.windowMs;
    // The index says which rows may be stale; parked ones are read too, for the manual path
    // (a person sets the row itself to running) and for alerts not yet delivered. The row decides.
    const suspects = index.found.filter((entry) => !reconciled.finished.has(entry.jobRowKey) && (entry.state === "parked" || isStale(entry)));
    // Reconciliation has named the rows it could not read, and the jobs it could not look after (their
    // status could not be read, say); each job is named once per run. A parking's alert needs its row
    // only, so one whose status cannot be read is still told (chaos seed 26120302, schedule 123).
    const unreadable = new Set(reconciled.invalid.map((job) => job.jobKey));
    const notLookedAfter = new Set(reconciled.failedJobs.map((job) => job.jobKey));
    const invalid: InvalidJob[] = [];
    const failedJobs = [...reconciled.failedJobs];
    let stale = 0;
    let backlogged = 0;
    for (const entry of suspects) {
        const key = { pk, rk: entry.jobRowKey };
        const jobKey = formatJobKey(key);
        if (unreadable.has(jobKey)) continue;
        await eachJobAlone(deps, "the reaper", key, failedJobs, async () => {
            const stored = await readOrReport(() => deps.jobs.get(key), key, invalid);
            if (!stored) return;
            const row = stored.row;
            if (row.state === "parked" && !row.parkAlerted) {
                // Given up (said once in an alert.failed line): no run sends it again.
                if (row.parkAlertFailed) return;
                if (parkAlertDue(deps, row, clock)) {
                    alertRetries.owe(key, `park alert, try ${row.parkAlertAttempts + 1}: ${lineOf(JobLife.park, key, "running", row.parkReason ?? "parked")}`);
                }
                return;
            }
            if (notLookedAfter.has(jobKey)) return;
            if (!isStale(row)) return;
            stale += 1;
            const instanceId = currentInstanceId(row);
            const status = reconciled.statuses.has(instanceId) ? reconciled.statuses.get(instanceId) : await deps.orchestrations.status(instanceId);
            if (waitsInBacklog(row, status, clock)) {
                backlogged += 1;
                return;
            }
            const line = await takeOver(deps, site, stored, status, alertRetries);
            if (line) transitions.push(line);
        });
    }
    reportInvalidJobs(deps.log, invalid, "reaper");
    deps.telemetry?.record("sheetwright.reaper.backlog", backlogged, { site: site?.name ?? `intake sheet ${pk}` });
    invalid.push(...reconciled.invalid);
    return { active: reconciled.checked, stale, backlogged, transitions, invalid, failedJobs };
}

/**
 * Whoever parked a job tells ops right after; the reaper tries once that try failed (no sooner than
 * the row's `parkAlertRetryAt`), or once its worker cannot still be at it. A run telling ops now
 * (its claim is live) is left to it.
 */
function parkAlertDue(deps: RecoveryDeps, row: JobRow, clock: Clock): boolean {
    if (parkAlertClaimIsLive(deps, row)) return false;
    if (row.parkAlertRetryAt !== undefined && Date.parse(row.parkAlertRetryAt) > clock.now) return false;
    const firstTryMayRun = row.parkAlertAttempts === 0 && !row.parkAlertClaim && clock.now - Date.parse(row.parkedAt ?? row.lastProgressAt) <= clock.windowMs;
    return !firstTryMayRun;
}

/** A job is quiet on purpose until `quietUntil` (its orchestration waits on a durable timer). */
function quietSince(job: Pick<JobRow, "lastProgressAt" | "quietUntil">): number {
    return Math.max(Date.parse(job.lastProgressAt), job.quietUntil ? Date.parse(job.quietUntil) : 0);
}

/**
 * Work waiting in a queue behind a burst or the rate limit has not touched the row either. A
 * stale job waits in a backlog, not dead, when its instance is Pending (the start message waits
 * in the control queue) or Running while other jobs moved within the window. Which of its steps
 * are outstanding cannot be told apart from the row: a duplicate delivery of a finished step
 * touches it too, and the client's status carries no history on the real host. A worker that
 * died mid-step needs no take-over to go on: Durable Functions delivers its work item again after
 * the work-item visibility timeout (5 min, shorter than the window). Patience is bounded: after
 * `BACKLOG_PATIENCE_WINDOWS` windows without progress the job is taken over anyway.
 */
function waitsInBacklog(row: JobRow, status: OrchestrationState | undefined, clock: Clock): boolean {
    if (!clock.pipelineMoving || clock.now - quietSince(row) > BACKLOG_PATIENCE_WINDOWS * clock.windowMs) return false;
    return status?.runtimeStatus === "Pending" || status?.runtimeStatus === "Running";
}

async function takeOver(
    deps: RecoveryDeps,
    site: Site | undefined,
    stored: StoredJob,
    status: OrchestrationState | undefined,
    alertRetries: ParkAlertRetries,
): Promise<string | undefined> {
    const row = stored.row;
    const key = keyOf(row);
    const oldInstanceId = currentInstanceId(row);
    const idleMinutes = Math.round((deps.now().getTime() - Date.parse(row.lastProgressAt)) / 6_000) / 10;
    const why = stallOf(status, oldInstanceId, idleMinutes, row);
    const attempt = row.attempt + 1;
    const instanceId = instanceIdFor(key, attempt);
    const now = deps.now().toISOString();
    const parking = row.recoveries >= deps.config.MAX_RECOVERIES;
    const reason = `No progress after ${row.recoveries} recoveries: ${why}` + (row.lastError ? `; last error: ${row.lastError}` : "");

    // First fence the old instance out (its steps check the owner on every write), using the
    // ETag the staleness was judged on: if the job moved meanwhile, it is alive; leave it.
    try {
        await deps.jobs.replace(
            stored,
            parking ? JobLife.parkAfterRecoveries.apply(row, { instanceId, reason, now }) : JobLife.takeOver.apply(row, { instanceId, why, now }),
            { from: parking ? JobLife.parkAfterRecoveries.from : JobLife.takeOver.from },
        );
    } catch (error) {
        if (error instanceof JobConcurrencyError || error instanceof JobStateConflictError) {
            deps.log.info(`job ${key.pk}-${key.rk} moved while the reaper looked at it; left alone`);
            return undefined;
        }
        throw error;
    }
    if (status && LIVE_STATUSES.includes(status.runtimeStatus)) {
        await deps.orchestrations.terminate(oldInstanceId, `taken over by ${instanceId} (reaper: ${why})`).catch((error: unknown) => {
            deps.log.warn(`terminating ${oldInstanceId} failed (${String(error)}); its steps are fenced out anyway`);
        });
    }

    let line: string;
    if (parking) {
        line = lineOf(JobLife.parkAfterRecoveries, key, row.state, reason);
        jobEvents.parked(deps.telemetry, { ...row, attempt }, deps.sites, row.state, reason);
        // Ops first, whatever becomes of the intake row (it may be the very thing that is broken).
        alertRetries.owe(key, line, { first: true });
        if (site) await writeStall(deps, site, key, reason);
        else deps.log.error(`job ${key.pk}-${key.rk}: its intake sheet belongs to no site in SITES; no stall is written onto its intake row`);
    } else {
        line = lineOf(JobLife.takeOver, key, row.state, `recovery ${row.recoveries + 1}/${deps.config.MAX_RECOVERIES}: ${why}; ${instanceId} continues from the row`);
        deps.log.warn(line);
        jobEvents.recovered(deps.telemetry, { ...row, attempt }, deps.sites, why);
    }
    // The new instance finishes the job (or, when parked, waits for unpark). If it cannot be
    // started now, the row still names it, and the next run of the reaper tries again.
    await startAttempt(deps.orchestrations, key, attempt).catch((error: unknown) => deps.log.error(`job ${key.pk}-${key.rk}: starting ${instanceId} failed: ${String(error)}`));
    return line;
}

/** `Stalled — <reason>` on the job's intake row, for the customer; a row that cannot be written stops nothing (ops is told apart). */
async function writeStall(deps: RecoveryDeps, site: Site, key: JobKey, reason: string): Promise<void> {
    const spent = site.smartsheet.withOwnTally();
    try {
        const latest = await deps.jobs.require(key);
        const columns = await writeIntakeStatus(spent, latest.row, IntakeStatus.stalled(reason));
        await deps.jobs.update(
            key,
            (current) => ({
                ...current,
                intakeStatus: IntakeStatus.stalled(reason),
                ...columns,
                smartsheetCalls: current.smartsheetCalls + spent.calls().total,
            }),
            { from: JobLife.whileParked.from },
        );
    } catch (error) {
        deps.log.error(`job ${key.pk}-${key.rk}: could not write the stall onto the intake row: ${String(error)}; ops is told apart`);
    }
}

function stallOf(status: OrchestrationState | undefined, instanceId: string, idleMinutes: number, row: JobRow): string {
    if (!status) return `no instance ${instanceId} exists (lost message or purged), idle ${idleMinutes} min`;
    if (LIVE_STATUSES.includes(status.runtimeStatus)) {
        return `${instanceId} is ${status.runtimeStatus} but the job made no progress for ${idleMinutes} min (stage ${row.stage ?? "copy"})`;
    }
    return `${instanceId} ended ${status.runtimeStatus} at stage ${row.stage ?? "copy"}`;
}
