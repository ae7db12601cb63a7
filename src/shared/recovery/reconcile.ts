import { currentInstanceId, type JobKey } from "../jobs/JobRow";
import {
    JobConcurrencyError,
    JobStateConflictError,
    readOrReport,
    reportInvalidJobs,
    type IndexEntry,
    type InvalidJob,
    type Listing,
} from "../jobs/JobStore";
import { JobLife, transitionLine } from "../jobs/jobLife";
import type { OrchestrationState, Orchestrations } from "../orchestration/Orchestrations";
import type { ProvisioningDeps } from "../provisioning/ProvisioningDeps";

export interface RecoveryDeps extends ProvisioningDeps {
    orchestrations: Orchestrations;
}

export interface ReconcileReport {
    checked: number;
    transitions: string[];
    /** Row keys of the jobs this run moved to done. */
    finished: Set<string>;
    /** What Durable Functions said of each instance it asked about (`undefined`: no such instance). */
    statuses: Map<string, OrchestrationState | undefined>;
    /** Jobs skipped because their index entry or row does not parse; each has been logged once. */
    invalid: InvalidJob[];
}

/** The orchestration finished the job: it completed and said so in its output. */
function finishedTheJob(status: OrchestrationState | undefined): boolean {
    const output = status?.output as { result?: unknown } | null | undefined;
    return status?.runtimeStatus === "Completed" && output?.result === "done";
}

/**
 * Writes the terminal states that job rows missed (an orchestration completed, its row still
 * says running: a lost write, a deploy, an outage). It reads the active index, asks Durable
 * Functions about each instance, and reads a job's row only to write it. Each transition is a
 * conditional write and is logged; nothing is ever resubmitted from here.
 */
export async function reconcileJobs(deps: RecoveryDeps, occasion: string, index?: Listing<IndexEntry>): Promise<ReconcileReport> {
    const pk = String(deps.config.INTAKE_SHEET_ID);
    const entries = index ?? (await deps.jobs.listActiveIndex(pk));
    const transitions: string[] = [];
    const finished = new Set<string>();
    const statuses = new Map<string, OrchestrationState | undefined>();
    const invalid = [...entries.invalid];
    for (const entry of entries.found) {
        const key: JobKey = { pk, rk: entry.jobRowKey };
        const instanceId = entry.instanceId;
        const status = await deps.orchestrations.status(instanceId);
        statuses.set(instanceId, status);
        if (!finishedTheJob(status)) continue;
        const stored = await readOrReport(() => deps.jobs.get(key), key, invalid);
        if (!stored || currentInstanceId(stored.row) !== instanceId || !JobLife.missedDone.from.includes(stored.row.state)) continue;
        const from = stored.row.state;
        try {
            await deps.jobs.replace(stored, JobLife.missedDone.apply(stored.row), { from: JobLife.missedDone.from });
        } catch (error) {
            // Someone else wrote it meanwhile; the next run looks again.
            if (error instanceof JobConcurrencyError || error instanceof JobStateConflictError) continue;
            throw error;
        }
        const line = transitionLine(key, from, "done", `orchestration ${instanceId} completed; the row had missed it`);
        deps.log.warn(line);
        transitions.push(line);
        finished.add(entry.jobRowKey);
    }
    reportInvalidJobs(deps.log, invalid, `reconciliation (${occasion})`);
    const checked = entries.found.length + entries.invalid.length;
    deps.log.info(`reconcile (${occasion}): ${checked} active jobs checked, ${transitions.length} transitions, ${invalid.length} invalid skipped`);
    return { checked, transitions, finished, statuses, invalid };
}
