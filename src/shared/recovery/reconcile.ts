import { keyOf, type JobRow } from "../jobs/JobRow";
import { JobConcurrencyError, JobStateConflictError, type StoredJob } from "../jobs/JobStore";
import { transitionLine } from "../jobs/transitions";
import { instanceIdFor } from "../naming/instanceIds";
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
}

/** The instance that owns a job's current attempt. */
export function currentInstanceId(row: JobRow): string {
    return row.instanceId ?? instanceIdFor(keyOf(row), row.attempt);
}

/** The orchestration finished the job: it completed and said so in its output. */
export function finishedTheJob(status: OrchestrationState | undefined): boolean {
    const output = status?.output as { result?: unknown } | null | undefined;
    return status?.runtimeStatus === "Completed" && output?.result === "done";
}

/**
 * Writes the terminal states that job rows missed (an orchestration completed, its row still
 * says running: a lost write, a deploy, an outage). Only rows of active jobs are read, each
 * transition is a conditional write and is logged; nothing is ever resubmitted from here.
 */
export async function reconcileJobs(deps: RecoveryDeps, occasion: string, active?: StoredJob[]): Promise<ReconcileReport> {
    const jobs = active ?? (await deps.jobs.listActive(String(deps.config.INTAKE_SHEET_ID)));
    const transitions: string[] = [];
    const finished = new Set<string>();
    for (const stored of jobs) {
        const row = stored.row;
        const instanceId = currentInstanceId(row);
        if (!finishedTheJob(await deps.orchestrations.status(instanceId))) continue;
        try {
            await deps.jobs.replace(stored, { ...row, state: "done", stage: "register", claims: {} }, { from: [row.state] });
        } catch (error) {
            // Someone else wrote it meanwhile; the next run looks again.
            if (error instanceof JobConcurrencyError || error instanceof JobStateConflictError) continue;
            throw error;
        }
        const line = transitionLine(keyOf(row), row.state, "done", `orchestration ${instanceId} completed; the row had missed it`);
        deps.log.warn(line);
        transitions.push(line);
        finished.add(row.intakeRowId);
    }
    deps.log.info(`reconcile (${occasion}): ${jobs.length} active jobs checked, ${transitions.length} transitions`);
    return { checked: jobs.length, transitions, finished };
}
