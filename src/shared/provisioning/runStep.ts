import type { JobRow, JobRowInput, JobState } from "../jobs/JobRow";
import { formatJobKey } from "../jobs/JobRow";
import { JobLife } from "../jobs/jobLife";
import { failureKind, messageOf } from "../failures";
import type { SmartsheetPort } from "../smartsheet/SmartsheetPort";
import type { Site } from "../sites/Sites";
import type { Blueprint } from "./Blueprint";
import { loadBlueprint } from "./blueprintSource";
import { SupersededError } from "./errors";
import { StepBugError, type JobView, type StepInput, type StepOutcome } from "./contracts";
import type { ProvisioningDeps } from "./ProvisioningDeps";

export interface StepContext {
    /** The row as of the step's start (after its progress touch). */
    readonly row: JobRow;
    /**
     * The job's site, found from its key. Asking for it throws a permanent `NoSiteError` when the
     * job's intake sheet belongs to no configured site, so a step that needs no site still runs.
     */
    readonly site: Site;
    /** The site's client, counting only this step's calls; they are added to the row when the step ends. */
    readonly smartsheet: SmartsheetPort;
    /** Unique to this execution of the activity: activities run at least once, maybe twice at a time. */
    readonly runId: string;
    /** A fenced, conditional write: only while the job is running and owned by this instance. */
    update(change: (row: JobRow) => JobRowInput | undefined): Promise<JobRow>;
    blueprint(row: JobRow): Promise<Blueprint>;
}

export interface StepResult {
    missing?: string[];
    waitUntil?: string;
}

/**
 * Runs one provisioning step the same way every time: touch `lastProgressAt` (proving to the
 * reaper that a live worker has the job), check that this instance still owns the job, do the
 * work, then add the Smartsheet calls it spent to the row and touch it again. What a failure
 * does is what its error's `failureKind` says: a permanent one comes back as an outcome (the job
 * parks); a superseded one as the outcome that stops quietly; a transient or ambiguous one is
 * recorded on the row and thrown, for the step's retries; so is a bug, marked as one
 * (`StepBugError`), so that the job parks with its message once the step's retries are spent.
 */
export async function runStep(
    deps: ProvisioningDeps,
    input: StepInput,
    step: string,
    body: (context: StepContext) => Promise<StepResult | void>,
    options: {
        from?: readonly JobState[];
        /** The instance that owns the job for this step (default: the provisioning attempt's); another one's step is superseded. */
        owner?: (row: JobRow) => string | undefined;
        /** The step's Smartsheet calls are background work (a convergence), paced behind provisioning's. */
        background?: boolean;
    } = {},
): Promise<StepOutcome> {
    const key = input.jobKey;
    const from = options.from ?? JobLife.work.from;
    let site: Site | undefined;
    let tallied: SmartsheetPort | undefined;
    const siteOfJob = () => (site ??= deps.sites.ofJob(key));
    const smartsheetOfJob = () => {
        if (!tallied) {
            const own = siteOfJob().smartsheet.withOwnTally((message) => deps.log.warn(`job ${formatJobKey(key)}: ${message}`));
            tallied = options.background ? own.inBackground() : own;
        }
        return tallied;
    };
    const ownerOf = options.owner ?? ((row: JobRow) => row.instanceId);
    const fenced = (change: (row: JobRow) => JobRowInput | undefined) => (row: JobRow) => {
        const owner = ownerOf(row);
        if (owner !== input.instanceId) {
            throw new SupersededError(`Job ${formatJobKey(key)} is owned by ${owner ?? "no instance"} now.`);
        }
        return change(row);
    };
    const update = async (change: (row: JobRow) => JobRowInput | undefined, allowed: readonly JobState[] = from) =>
        (await deps.jobs.update(key, fenced(change), { from: allowed })).row;

    let started: JobRow;
    try {
        started = await update((row) => ({ ...row, lastProgressAt: deps.now().toISOString() }));
    } catch (error) {
        if (failureKind(error) === "superseded") {
            deps.log.info(`job ${formatJobKey(key)}: ${step} skipped: ${messageOf(error)}`);
            return { outcome: "superseded", reason: messageOf(error) };
        }
        throw error;
    }

    const context: StepContext = {
        row: started,
        get site() {
            return siteOfJob();
        },
        get smartsheet() {
            return smartsheetOfJob();
        },
        runId: deps.newRunId(),
        update: (change) => update(change),
        blueprint: (row) => loadBlueprint(deps, siteOfJob(), smartsheetOfJob(), row),
    };
    try {
        const result = await body(context);
        const finished = await recordCalls(update, deps, tallied, from);
        return { outcome: "done", job: viewOf(finished), missing: result?.missing, waitUntil: result?.waitUntil };
    } catch (error) {
        const message = messageOf(error);
        const finished = await recordCalls(update, deps, tallied, from, message).catch(() => undefined);
        const kind = failureKind(error);
        switch (kind) {
            case "superseded":
                return { outcome: "superseded", reason: message };
            case "permanent":
                return { outcome: "permanent", reason: message, job: finished ? viewOf(finished) : undefined };
            case "transient":
            case "ambiguous":
                deps.log.warn(`job ${formatJobKey(key)}: ${step} failed, will retry: ${message}`);
                throw error;
            case "bug":
                deps.log.warn(`job ${formatJobKey(key)}: ${step} failed with an unexpected error (a bug?); its retries try again, then the job parks: ${message}`);
                throw new StepBugError(step, message, { cause: error });
        }
    }
}

async function recordCalls(
    update: (change: (row: JobRow) => JobRowInput | undefined, allowed?: readonly JobState[]) => Promise<JobRow>,
    deps: ProvisioningDeps,
    smartsheet: SmartsheetPort | undefined,
    from: readonly JobState[],
    lastError?: string,
): Promise<JobRow> {
    const spent = smartsheet?.calls() ?? { total: 0, byOperation: {} };
    return update(
        (row) => {
            const byOperation = { ...row.callsByOperation };
            for (const [operation, count] of Object.entries(spent.byOperation)) byOperation[operation] = (byOperation[operation] ?? 0) + count;
            return {
                ...row,
                smartsheetCalls: row.smartsheetCalls + spent.total,
                callsByOperation: byOperation,
                lastProgressAt: deps.now().toISOString(),
                lastError,
            };
        },
        [...from, "parked", "done"],
    );
}

/** The orchestration's view of the job: what it needs to pick the next step. */
function viewOf(row: JobRow): JobView {
    return {
        state: row.state,
        stage: row.stage ?? "copy",
        productCode: row.productCode,
        templates: row.templates,
        copied: row.templates.filter((template) => row.copies[template]),
        recoveries: row.recoveries,
        parkReason: row.state === "parked" ? row.parkReason : undefined,
        parkedAt: row.state === "parked" ? row.parkedAt : undefined,
    };
}
