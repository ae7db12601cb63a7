import { ACTIVE_STATES, formatJobKey, JobState, parseJobKey, type JobRow } from "../jobs/JobRow";
import { InvalidJobRowError, type InvalidJob, type JobStore, type StoredJob } from "../jobs/JobStore";
import type { Orchestrations } from "../orchestration/Orchestrations";
import type { Sites } from "../sites/Sites";
import { inertText } from "../text/logText";

export interface ApiResponse {
    status: number;
    jsonBody: unknown;
}

/** What the jobs API reads: the Jobs table, and the sites whose intake sheets partition it. */
export interface JobsApiDeps {
    jobs: JobStore;
    sites: Sites;
}

/** What a caller typed, as an error message may quote it: short, and inert on a terminal. */
export function quoted(typed: string): string {
    return `"${inertText(typed.slice(0, 100))}"`;
}

/** An error answer: `{ error, ...extra }` with the status. */
export function problem(status: number, message: string, extra: object = {}): ApiResponse {
    return { status, jsonBody: { error: message, ...extra } };
}

export function present(row: JobRow, sites: Sites) {
    return { jobKey: formatJobKey({ pk: row.intakeSheetId, rk: row.intakeRowId }), site: sites.ofIntakeSheet(row.intakeSheetId)?.name, ...row };
}

/** `GET /api/jobs/{jobKey}`: the job row, its site, and what Durable Functions says of its instance. */
export async function getJob(deps: JobsApiDeps, orchestrations: Orchestrations, jobKeyText: string): Promise<ApiResponse> {
    const key = parseJobKey(jobKeyText);
    if (!key) return problem(400, `${quoted(jobKeyText)} is not a job key; expected <intakeSheetId>-<intakeRowId>, e.g. 4583173393803140-1042.`);
    let stored: StoredJob | undefined;
    try {
        stored = await deps.jobs.get(key);
    } catch (error) {
        if (error instanceof InvalidJobRowError) return problem(422, error.message, { jobKey: formatJobKey(key) });
        throw error;
    }
    if (!stored) return problem(404, `There is no job ${jobKeyText}.`);
    const instance = stored.row.instanceId ? await orchestrations.status(stored.row.instanceId) : undefined;
    return {
        status: 200,
        jsonBody: {
            ...present(stored.row, deps.sites),
            orchestration: instance
                ? { instanceId: stored.row.instanceId, runtimeStatus: instance.runtimeStatus, customStatus: instance.customStatus }
                : null,
        },
    };
}

/**
 * `GET /api/jobs?state=&site=`: active jobs by default, any state on request, of every site or
 * of the one named; without a site, also the active jobs of intake sheets in no site of SITES. Jobs
 * whose rows do not parse are named in `invalid`.
 */
export async function listJobs(deps: JobsApiDeps, query: { state: string | null; site?: string | null }): Promise<ApiResponse> {
    const stateText = query.state ?? "";
    let state: JobState | undefined;
    if (stateText !== "") {
        const parsed = JobState.safeParse(stateText);
        if (!parsed.success) return problem(400, `Unknown state ${quoted(stateText)}; use one of ${JobState.options.join(", ")}.`);
        state = parsed.data;
    }
    const siteName = query.site ?? "";
    const site = siteName === "" ? undefined : deps.sites.named(siteName);
    if (siteName !== "" && !site) {
        return problem(400, `Unknown site ${quoted(siteName)}; use one of ${deps.sites.all().map((known) => known.name).join(", ")}.`);
    }
    const jobs: ReturnType<typeof present>[] = [];
    const invalid: InvalidJob[] = [];
    const configured = deps.sites.all().map(({ intakeSheetId }) => String(intakeSheetId));
    // Without a site asked for, the active jobs of intake sheets taken out of SITES are listed too (their `site` is absent).
    const orphaned = site || (state && !ACTIVE_STATES.includes(state)) ? [] : [...(await deps.jobs.listActiveIndexOutside(configured)).keys()];
    for (const pk of site ? [String(site.intakeSheetId)] : [...configured, ...orphaned]) {
        const listing = state ? await deps.jobs.listByState(pk, state) : await deps.jobs.listActive(pk);
        jobs.push(...listing.found.map((job) => present(job.row, deps.sites)));
        invalid.push(...listing.invalid);
    }
    return { status: 200, jsonBody: { state: state ?? "active", ...(site ? { site: site.name } : {}), jobs, invalid } };
}
