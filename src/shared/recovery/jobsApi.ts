import { z } from "zod";
import { ConvergeInputError } from "../convergence/ConvergeInputError";
import { ConvergePlanQuery, planProducts, type ConvergeDeps } from "../convergence/planProducts";
import { TemplateVersionsQuery, templateVersions } from "../convergence/templateVersions";
import { ConvergeApplyRequest, startConvergence } from "../convergence/startConvergence";
import { trialConvergence } from "../convergence/trialConvergence";
import type { WebhookHealth } from "../intake/WebhookHealth";
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
    webhookHealth: WebhookHealth;
}

/** What a caller typed, as an error message may quote it: short, and inert on a terminal. */
export function quoted(typed: string): string {
    return `"${inertText(typed.slice(0, 100))}"`;
}

/** An error answer: `{ error, ...extra }` with the status. */
export function problem(status: number, message: string, extra: object = {}): ApiResponse {
    return { status, jsonBody: { error: message, ...extra } };
}

function present(row: JobRow, sites: Sites) {
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

/** The most jobs one answer of `GET /api/jobs` holds, and the table's own page limit. */
export const MAX_PAGE_SIZE = 1000;

/** `pageSize` as typed in the query: a whole number of jobs, 1–1,000. */
const PageSize = z.coerce
    .number({ error: `expected a whole number of jobs from 1 to ${MAX_PAGE_SIZE}` })
    .int(`expected a whole number of jobs from 1 to ${MAX_PAGE_SIZE}`)
    .min(1, `expected a whole number of jobs from 1 to ${MAX_PAGE_SIZE}`)
    .max(MAX_PAGE_SIZE, `expected at most ${MAX_PAGE_SIZE} jobs (the table's page limit)`);

/** Where the next page starts: the intake sheet being read and the table's token within it. Opaque to callers. */
const Cursor = z.strictObject({ v: z.literal(1), state: JobState, site: z.string().optional(), pk: z.string().min(1), token: z.string().min(1).optional() });
type Cursor = z.infer<typeof Cursor>;

function encodeCursor(cursor: Cursor): string {
    return Buffer.from(JSON.stringify(cursor), "utf8").toString("base64url");
}

function decodeCursor(text: string): Cursor | undefined {
    try {
        const parsed = Cursor.safeParse(JSON.parse(Buffer.from(text, "base64url").toString("utf8")));
        return parsed.success ? parsed.data : undefined;
    } catch {
        return undefined;
    }
}

interface ListQuery {
    state: string | null;
    site?: string | null;
    pageSize?: string | null;
    continuation?: string | null;
}

/**
 * `GET /api/jobs?state=&site=&pageSize=&continuation=`: active jobs by default, any state on
 * request, of every site or of the one named; without a site, also the active jobs of intake
 * sheets in no site of SITES. Jobs whose rows do not parse are named in `invalid`. Finished
 * states (done, rejected) come in pages of at most `pageSize` jobs (default and most: 1,000),
 * site after site: while `continuation` is in the answer, more follow — ask again with it. The
 * active jobs come whole (the active index keeps them few).
 */
export async function listJobs(deps: JobsApiDeps, query: ListQuery): Promise<ApiResponse> {
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
    const configured = deps.sites.all().map(({ intakeSheetId }) => String(intakeSheetId));
    const pageSizeText = query.pageSize ?? "";
    const continuationText = query.continuation ?? "";
    const finished = state !== undefined && !ACTIVE_STATES.includes(state) ? state : undefined;
    if (!finished && (pageSizeText !== "" || continuationText !== "")) {
        return problem(400, `pageSize and continuation page the finished states (${FINISHED_STATES.join(", ")}); the active jobs come whole: leave them out, or add state=done.`);
    }
    if (finished) {
        const pageSize = PageSize.safeParse(pageSizeText === "" ? MAX_PAGE_SIZE : pageSizeText);
        if (!pageSize.success) return problem(400, `pageSize ${quoted(pageSizeText)}: ${pageSize.error.issues[0]!.message}.`);
        const partitions = site ? [String(site.intakeSheetId)] : configured;
        let cursor: Cursor = { v: 1, state: finished, site: site?.name, pk: partitions[0]! };
        if (continuationText !== "") {
            const decoded = decodeCursor(continuationText);
            if (!decoded) return problem(400, "continuation is not one this API gave; send the continuation of the previous answer as it was, or leave it out to start again.");
            if (decoded.state !== finished || decoded.site !== site?.name) {
                return problem(400, `continuation belongs to the listing of state=${decoded.state}${decoded.site ? `&site=${quoted(decoded.site)}` : ""}; ask with the same state and site, or leave it out to start again.`);
            }
            if (!partitions.includes(decoded.pk)) {
                return problem(400, `continuation is in intake sheet ${quoted(decoded.pk)}, which no site of SITES names any more; leave it out to start again.`);
            }
            cursor = decoded;
        }
        return { status: 200, jsonBody: await finishedPage(deps, partitions, cursor, pageSize.data, site?.name) };
    }
    const jobs: ReturnType<typeof present>[] = [];
    const invalid: InvalidJob[] = [];
    // Without a site asked for, the active jobs of intake sheets taken out of SITES are listed too (their `site` is absent).
    const orphaned = site ? [] : [...(await deps.jobs.listActiveIndexOutside(configured)).keys()];
    for (const pk of site ? [String(site.intakeSheetId)] : [...configured, ...orphaned]) {
        const listing = state ? await deps.jobs.listByState(pk, state) : await deps.jobs.listActive(pk);
        jobs.push(...listing.found.map((job) => present(job.row, deps.sites)));
        invalid.push(...listing.invalid);
    }
    return { status: 200, jsonBody: { state: state ?? "active", ...(site ? { site: site.name } : {}), jobs, invalid } };
}

const FINISHED_STATES = JobState.options.filter((state) => !ACTIVE_STATES.includes(state));

/** Up to `pageSize` jobs from `cursor` on, intake sheet after intake sheet, and where the next page starts. */
async function finishedPage(deps: JobsApiDeps, partitions: readonly string[], start: Cursor, pageSize: number, siteName: string | undefined) {
    const jobs: ReturnType<typeof present>[] = [];
    const invalid: InvalidJob[] = [];
    let cursor: Cursor | undefined = start;
    while (cursor && jobs.length + invalid.length < pageSize) {
        const page = await deps.jobs.pageByState(cursor.pk, cursor.state, { pageSize: pageSize - jobs.length - invalid.length, continuation: cursor.token });
        jobs.push(...page.found.map((job) => present(job.row, deps.sites)));
        invalid.push(...page.invalid);
        const next: string | undefined = partitions[partitions.indexOf(cursor.pk) + 1];
        cursor = page.continuation ? { ...cursor, token: page.continuation } : next ? { v: 1, state: cursor.state, site: cursor.site, pk: next } : undefined;
    }
    return { state: start.state, ...(siteName ? { site: siteName } : {}), jobs, invalid, ...(cursor ? { continuation: encodeCursor(cursor) } : {}) };
}

/**
 * The webhook receiver's health figure: per site with a webhook, the rows the timer sweeps found in
 * each of the last four ISO weeks that no webhook had announced (healthy: 0). Sites on timer sweeps
 * alone are listed without figures.
 */
export async function webhookHealthReport(deps: JobsApiDeps, now: Date): Promise<ApiResponse> {
    const hooked = deps.sites.all().filter((site) => site.webhookBaseUrl).map((site) => site.name);
    const weeks = await deps.webhookHealth.weeks(hooked, now);
    return {
        status: 200,
        jsonBody: {
            sites: deps.sites.all().map((site) => ({
                site: site.name,
                webhook: Boolean(site.webhookBaseUrl),
                ...(site.webhookBaseUrl ? { weeks: weeks.filter((week) => week.site === site.name).map(({ week, found }) => ({ week, unannounced: found })) } : {}),
            })),
        },
    };
}

/** What the convergence routes read besides the jobs API's: stored blueprints, and each site's Smartsheet. */
export type ConvergeApiDeps = JobsApiDeps & ConvergeDeps;

/** A query as typed, each parameter once: `to`, `site`, `product`. */
type QueryText = Record<string, string | null>;

/** The first problem of a query that does not parse, as `name: what is wrong`. */
function queryProblem(error: z.ZodError): ApiResponse {
    const issue = error.issues[0]!;
    return problem(400, `${issue.path.join(".") || "query"}: ${issue.message}.`);
}

/** Answers a convergence query: 400 for a query that does not parse or names what does not exist, naming what does. */
async function answerConvergeQuery<S extends z.ZodType>(schema: S, query: unknown, answer: (parsed: z.infer<S>) => Promise<unknown>): Promise<ApiResponse> {
    const parsed = schema.safeParse(query);
    if (!parsed.success) return queryProblem(parsed.error);
    try {
        return { status: 200, jsonBody: await answer(parsed.data) };
    } catch (error) {
        if (error instanceof ConvergeInputError) return problem(400, error.message);
        throw error;
    }
}

/**
 * `GET /api/converge/plan?to=&site=&product=`: the convergence plan of each done product (of the
 * site, or the one product, asked for) to the template version `to` (default: the template as it
 * is now, analysed afresh), read-only: nothing is written to Smartsheet. 400 for a version, site
 * or product that does not exist, naming those that do.
 */
export function convergencePlan(deps: ConvergeApiDeps, query: QueryText): Promise<ApiResponse> {
    return answerConvergeQuery(ConvergePlanQuery, query, (parsed) => planProducts(deps, parsed));
}

/** `GET /api/converge/versions?site=`: per template version, the products on it (newest first), from the Jobs table. */
export function convergenceVersions(deps: ConvergeApiDeps, query: QueryText): Promise<ApiResponse> {
    return answerConvergeQuery(TemplateVersionsQuery, query, (parsed) => templateVersions(deps, parsed));
}

/**
 * `POST /api/converge` with `{"to","site","product","by"}` (all optional): starts converging the
 * products asked for, one fleet per site (202 with each fleet's instance id, `started: false`
 * when it runs already). 400 as the plan's; 415 for a body that is not JSON.
 */
export async function convergenceApply(deps: ConvergeApiDeps & { orchestrations: Orchestrations }, body: unknown): Promise<ApiResponse> {
    const answered = await answerConvergeQuery(ConvergeApplyRequest, body ?? {}, (request) => startConvergence(deps, request));
    return answered.status === 200 ? { ...answered, status: 202 } : answered;
}

/**
 * `POST /api/converge/trial` with `{"to","site","product"}` (all optional): the plan of one
 * product (the one named, or the one whose plan changes most) carried out on copies of it in a
 * scratch folder, audited and removed; 200 with the report (`passed`), the product untouched.
 */
export function convergenceTrial(deps: ConvergeApiDeps, body: unknown): Promise<ApiResponse> {
    return answerConvergeQuery(ConvergePlanQuery.strict(), body ?? {}, (query) => trialConvergence(deps, query));
}
