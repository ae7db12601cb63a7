import { formatJobKey, JobState, parseJobKey, type JobRow } from "../jobs/JobRow";
import { InvalidJobRowError, type JobStore, type StoredJob } from "../jobs/JobStore";
import type { Orchestrations } from "../orchestration/Orchestrations";

export interface ApiResponse {
    status: number;
    jsonBody: unknown;
}

/** An error answer: `{ error, ...extra }` with the status. */
export function problem(status: number, message: string, extra: object = {}): ApiResponse {
    return { status, jsonBody: { error: message, ...extra } };
}

export function present(row: JobRow) {
    return { jobKey: formatJobKey({ pk: row.intakeSheetId, rk: row.intakeRowId }), ...row };
}

/** `GET /api/jobs/{jobKey}`: the job row, and what Durable Functions says of its instance. */
export async function getJob(jobs: JobStore, orchestrations: Orchestrations, jobKeyText: string): Promise<ApiResponse> {
    const key = parseJobKey(jobKeyText);
    if (!key) return problem(400, `"${jobKeyText}" is not a job key; expected <intakeSheetId>-<intakeRowId>, e.g. 4583173393803140-1042.`);
    let stored: StoredJob | undefined;
    try {
        stored = await jobs.get(key);
    } catch (error) {
        if (error instanceof InvalidJobRowError) return problem(422, error.message, { jobKey: formatJobKey(key) });
        throw error;
    }
    if (!stored) return problem(404, `There is no job ${jobKeyText}.`);
    const instance = stored.row.instanceId ? await orchestrations.status(stored.row.instanceId) : undefined;
    return {
        status: 200,
        jsonBody: {
            ...present(stored.row),
            orchestration: instance
                ? { instanceId: stored.row.instanceId, runtimeStatus: instance.runtimeStatus, customStatus: instance.customStatus }
                : null,
        },
    };
}

/** `GET /api/jobs?state=`: active jobs by default; any state on request. Jobs whose rows do not parse are named in `invalid`. */
export async function listJobs(jobs: JobStore, intakeSheetId: number, stateText: string | null): Promise<ApiResponse> {
    const pk = String(intakeSheetId);
    if (stateText === null || stateText === "") {
        const active = await jobs.listActive(pk);
        return { status: 200, jsonBody: { state: "active", jobs: active.found.map((job) => present(job.row)), invalid: active.invalid } };
    }
    const state = JobState.safeParse(stateText);
    if (!state.success) return problem(400, `Unknown state "${stateText}"; use one of ${JobState.options.join(", ")}.`);
    const listing = await jobs.listByState(pk, state.data);
    return { status: 200, jsonBody: { state: state.data, jobs: listing.found.map((job) => present(job.row)), invalid: listing.invalid } };
}
