import { currentInstanceId, formatJobKey, type JobKey } from "../jobs/JobRow";
import {
    JobConcurrencyError,
    JobStateConflictError,
    readOrReport,
    reportInvalidJobs,
    type IndexEntry,
    type InvalidJob,
    type Listing,
} from "../jobs/JobStore";
import { JobLife, lineOf } from "../jobs/jobLife";
import { jobEvents } from "../telemetry/jobEvents";
import type { OrchestrationState, Orchestrations } from "../orchestration/Orchestrations";
import type { ProvisioningDeps } from "../provisioning/ProvisioningDeps";
import { forEachSite, type SiteFailure } from "../sites/eachSite";
import type { Site } from "../sites/Sites";

export interface RecoveryDeps extends ProvisioningDeps {
    orchestrations: Orchestrations;
}

/** One site's reconciliation, as the reaper uses it. */
interface SiteReconcileReport {
    checked: number;
    transitions: string[];
    /** Row keys of the jobs this run moved to done. */
    finished: Set<string>;
    /** What Durable Functions said of each instance it asked about (`undefined`: no such instance). */
    statuses: Map<string, OrchestrationState | undefined>;
    /** Jobs skipped because their index entry or row does not parse; each has been logged once. */
    invalid: InvalidJob[];
    /** Jobs this run could not look after (their status or row could not be read); each logged once, tried again next run. */
    failedJobs: FailedJob[];
}

/** A job one run could not look after, and why; the run went on with the others. */
export interface FailedJob {
    jobKey: string;
    reason: string;
}

/** Every site's reconciliation. */
interface ReconcileReport {
    checked: number;
    transitions: string[];
    invalid: InvalidJob[];
    /** Jobs that could not be looked after (each logged); the next run tries them again. */
    failedJobs: FailedJob[];
    /** Sites that could not be reconciled (each logged and alerted). */
    failed: SiteFailure[];
}

/** The orchestration finished the job: it completed and said so in its output. */
function finishedTheJob(status: OrchestrationState | undefined): boolean {
    const output = status?.output as { result?: unknown } | null | undefined;
    return status?.runtimeStatus === "Completed" && output?.result === "done";
}

/**
 * Writes the terminal states that job rows missed (an orchestration completed, its row still
 * says running: a lost write, a deploy, an outage), site by site; a site that fails stops no
 * other. Each transition is a conditional write and is logged; nothing is ever resubmitted.
 */
export async function reconcileJobs(deps: RecoveryDeps, occasion: string): Promise<ReconcileReport> {
    const run = await forEachSite(deps, `reconciliation (${occasion})`, (site) => reconcileSite(deps, site, occasion));
    // Jobs of intake sheets taken out of SITES are reconciled too: an orchestration may have finished them.
    const orphans: SiteReconcileReport[] = [];
    for (const [pk, index] of await orphanedIndexes(deps, `reconciliation (${occasion})`)) {
        try {
            orphans.push(await reconcileSite(deps, { intakeSheetId: pk }, occasion, index));
        } catch (error) {
            deps.log.error(`reconciliation (${occasion}): the jobs of intake sheet ${pk} (in no site of SITES) failed: ${error instanceof Error ? error.message : String(error)}; the next run tries again`);
        }
    }
    const reports = [...run.results, ...orphans];
    const checked = reports.reduce((sum, report) => sum + report.checked, 0);
    const transitions = reports.flatMap((report) => report.transitions);
    const invalid = reports.flatMap((report) => report.invalid);
    const failedJobs = reports.flatMap((report) => report.failedJobs);
    deps.log.info(
        `reconcile (${occasion}): ${checked} active jobs checked, ${transitions.length} transitions, ${invalid.length} invalid skipped` +
            failedSitesText(run.failed) +
            failedJobsText(failedJobs),
    );
    return { checked, transitions, invalid, failedJobs, failed: run.failed };
}

/**
 * The active index of every intake sheet in no site of SITES (taken out while it had open jobs),
 * by intake sheet; a listing that fails is logged and yields none this run.
 */
export async function orphanedIndexes(deps: RecoveryDeps, run: string): Promise<Map<string, Listing<IndexEntry>>> {
    try {
        return await deps.jobs.listActiveIndexOutside(deps.sites.all().map((site) => String(site.intakeSheetId)));
    } catch (error) {
        deps.log.error(`${run}: the jobs of intake sheets in no site of SITES could not be listed (${error instanceof Error ? error.message : String(error)}); the next run tries again`);
        return new Map();
    }
}

/** `; 1 job failed, tried again next run`, or nothing when every job was looked after. */
export function failedJobsText(failed: readonly FailedJob[]): string {
    if (failed.length === 0) return "";
    return `; ${failed.length} job${failed.length === 1 ? "" : "s"} failed, tried again next run`;
}

/**
 * Runs one job's part of a run; a job that fails it (a status that cannot be read, storage
 * failing for its row) is logged, named in `failed`, and stops none of the others.
 */
export async function eachJobAlone(
    deps: Pick<RecoveryDeps, "log">,
    run: string,
    key: JobKey,
    failed: FailedJob[],
    work: () => Promise<void>,
): Promise<void> {
    try {
        await work();
    } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        deps.log.error(`job ${formatJobKey(key)}: ${run} could not look after it: ${reason}; tried again next run, the other jobs carry on`);
        failed.push({ jobKey: formatJobKey(key), reason });
    }
}

/** `; 1 site failed (globex)`, or nothing when every site ran. */
export function failedSitesText(failed: readonly SiteFailure[]): string {
    if (failed.length === 0) return "";
    return `; ${failed.length} site${failed.length === 1 ? "" : "s"} failed (${failed.map((failure) => failure.site).join(", ")})`;
}

/**
 * One site's reconciliation: reads its active index (or takes the one the reaper read), asks
 * Durable Functions about each instance, and reads a job's row only to write it.
 */
export async function reconcileSite(
    deps: RecoveryDeps,
    site: Pick<Site, "intakeSheetId"> | { intakeSheetId: string },
    occasion: string,
    index?: Listing<IndexEntry>,
): Promise<SiteReconcileReport> {
    const pk = String(site.intakeSheetId);
    const entries = index ?? (await deps.jobs.listActiveIndex(pk));
    const transitions: string[] = [];
    const finished = new Set<string>();
    const statuses = new Map<string, OrchestrationState | undefined>();
    const invalid = [...entries.invalid];
    const failedJobs: FailedJob[] = [];
    for (const entry of entries.found) {
        const key: JobKey = { pk, rk: entry.jobRowKey };
        await eachJobAlone(deps, `reconciliation (${occasion})`, key, failedJobs, async () => {
            const instanceId = entry.instanceId;
            const status = await deps.orchestrations.status(instanceId);
            statuses.set(instanceId, status);
            if (!finishedTheJob(status)) return;
            const stored = await readOrReport(() => deps.jobs.get(key), key, invalid);
            if (!stored || currentInstanceId(stored.row) !== instanceId || !JobLife.missedDone.from.includes(stored.row.state)) return;
            const from = stored.row.state;
            try {
                await deps.jobs.replace(stored, JobLife.missedDone.apply(stored.row), { from: JobLife.missedDone.from });
            } catch (error) {
                // Someone else wrote it meanwhile; the next run looks again.
                if (error instanceof JobConcurrencyError || error instanceof JobStateConflictError) return;
                throw error;
            }
            const line = lineOf(JobLife.missedDone, key, from, `orchestration ${instanceId} completed; the row had missed it`);
            deps.log.warn(line);
            jobEvents.done(deps.telemetry, stored.row, deps.sites, from, deps.now());
            transitions.push(line);
            finished.add(entry.jobRowKey);
        });
    }
    reportInvalidJobs(deps.log, invalid, `reconciliation (${occasion})`);
    return { checked: entries.found.length + entries.invalid.length, transitions, finished, statuses, invalid, failedJobs };
}
