import { z } from "zod";
import { hasHiddenCharacters } from "../text/logText";
import { problem, quoted, type ApiResponse } from "./jobsApi";
import { ConvergenceDecision, currentInstanceId, formatJobKey, parseJobKey, type JobKey, type JobRow } from "../jobs/JobRow";
import { JobConcurrencyError, JobStateConflictError, type StoredJob } from "../jobs/JobStore";
import { ConvergenceNames, convergeInstanceId } from "../convergence/contracts";
import { TAKEABLE, undecidedOf } from "../convergence/convergeSteps";
import { describeConflict } from "../convergence/describePlan";
import { JobLife, lineOf } from "../jobs/jobLife";
import { jobEvents } from "../telemetry/jobEvents";
import { instanceIdFor } from "../jobs/instanceIds";
import { LIVE_STATUSES } from "../orchestration/Orchestrations";
import { startAttempt } from "../orchestration/startAttempt";
import { UNPARK_EVENT, type UnparkEvent } from "../provisioning/contracts";
import type { RecoveryDeps } from "./reconcile";

const plainText = (max: number) =>
    z
        .string()
        .trim()
        .max(max)
        .refine((text) => !hasHiddenCharacters(text), "must not hold control or invisible formatting characters");

/** Optional body of `POST /api/jobs/{jobKey}/unpark`: kept on the job row as the audit trail. */
const UnparkRequest = z.strictObject({
    by: plainText(100).pipe(z.string().min(1)).optional(),
    note: plainText(500).optional(),
    /** For a product parked on its convergence's conflicts: whose side each conflict takes. */
    decision: ConvergenceDecision.optional(),
});

/**
 * What App Service authentication (Easy Auth) says of the caller, from the headers it adds:
 * `X-MS-CLIENT-PRINCIPAL-NAME`, `X-MS-CLIENT-PRINCIPAL-IDP` and `X-MS-CLIENT-PRINCIPAL` (base64 JSON).
 * Easy Auth removes these headers from what a client sends and sets its own, so they are only
 * believed when the platform says it is on (`WEBSITE_AUTH_ENABLED`); otherwise anyone can send them.
 */
interface CallerHeaders {
    principalName?: string | null;
    principalIdp?: string | null;
    principal?: string | null;
}

/** The decoded `X-MS-CLIENT-PRINCIPAL`: the provider, and its claims with the type that holds the name. */
const ClientPrincipal = z.object({
    auth_typ: z.string().optional(),
    name_typ: z.string().optional(),
    claims: z.array(z.object({ typ: z.string(), val: z.string() })).default([]),
});

const IdentityName = plainText(200).pipe(z.string().min(1));
const NAME_CLAIMS = ["name", "preferred_username", "email", "upn", "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name"];

/** Who the platform says is calling, or `undefined` when it says nothing (or is not there to say it). */
function platformIdentity(headers: CallerHeaders, easyAuthEnabled: boolean): { name: string; provider: string } | undefined {
    if (!easyAuthEnabled) return undefined;
    const principal = decodePrincipal(headers.principal);
    const claimed = principal ? [principal.name_typ, ...NAME_CLAIMS].map((typ) => principal.claims.find((claim) => claim.typ === typ)?.val) : [];
    const name = [headers.principalName, ...claimed].map((candidate) => IdentityName.safeParse(candidate)).find((parsed) => parsed.success)?.data;
    if (name === undefined) return undefined;
    const provider = IdentityName.safeParse(headers.principalIdp ?? principal?.auth_typ);
    return { name, provider: provider.success ? provider.data : "App Service authentication" };
}

function decodePrincipal(encoded: string | null | undefined): z.infer<typeof ClientPrincipal> | undefined {
    if (!encoded) return undefined;
    try {
        const parsed = ClientPrincipal.safeParse(JSON.parse(Buffer.from(encoded, "base64").toString("utf8")));
        return parsed.success ? parsed.data : undefined;
    } catch {
        return undefined;
    }
}

/** Larger bodies are refused before they are parsed. */
export const MAX_UNPARK_BODY_BYTES = 4096;

export function unparkBodyTooLarge(): ApiResponse {
    return problem(413, `The body is larger than ${MAX_UNPARK_BODY_BYTES} bytes; send at most {"by","note"}.`);
}

/**
 * Resumes a parked job. If its orchestration is waiting, the `unpark` event is raised and the
 * orchestration runs the parked stage again; if the orchestration is gone (purged, terminated
 * by hand), a new attempt is started from the row. Either way what exists is adopted.
 */
export async function unparkJob(deps: RecoveryDeps, jobKeyText: string, bodyText: string, caller: CallerHeaders = {}): Promise<ApiResponse> {
    const key = parseJobKey(jobKeyText);
    if (!key) return problem(400, `${quoted(jobKeyText)} is not a job key; expected <intakeSheetId>-<intakeRowId>.`);
    if (!deps.sites.ofIntakeSheet(key.pk)) {
        const sheets = deps.sites.all().map((site) => `${site.name}: ${site.intakeSheetId}`);
        return problem(404, `There is no job ${jobKeyText} on this app's intake sheets (${sheets.join(", ")}).`);
    }
    if (Buffer.byteLength(bodyText, "utf8") > MAX_UNPARK_BODY_BYTES) return unparkBodyTooLarge();
    let body: unknown = {};
    if (bodyText.trim() !== "") {
        try {
            body = JSON.parse(bodyText);
        } catch {
            return problem(400, "The body must be JSON, e.g. {\"by\":\"ops\",\"note\":\"renamed the template sheet\"}, or empty.");
        }
    }
    const request = UnparkRequest.safeParse(body);
    if (!request.success) return problem(400, `Unexpected body: ${z.prettifyError(request.error).replace(/\n/g, "; ")}`);

    const jobKey = formatJobKey(key);
    // A bookkeeping write landing between the read and the unpark's own (the parking's alert, say) is not the caller's
    // business: read the row again and decide again.
    for (let attempt = 1; ; attempt++) {
        const answer = await unparkAsRead(deps, key, request.data, caller);
        if (answer !== CHANGED) return answer;
        if (attempt >= 5) return problem(409, `Job ${jobKey} kept changing while it was being unparked; look at it again.`);
        await new Promise((resolve) => setTimeout(resolve, 40 * attempt));
    }
}

/** The row changed between its read and the unpark's write: read it again. */
const CHANGED = Symbol("changed while unparking");

/** The unpark decided on the row as read now; `CHANGED` when the row changed before its write. */
async function unparkAsRead(deps: RecoveryDeps, key: JobKey, request: z.infer<typeof UnparkRequest>, caller: CallerHeaders): Promise<ApiResponse | typeof CHANGED> {
    const stored = await deps.jobs.get(key);
    if (!stored) return problem(404, `There is no job ${formatJobKey(key)}.`);
    const row = stored.row;
    const jobKey = formatJobKey(key);
    if (row.state === "done" && row.convergence?.state === "parked") return unparkConvergence(deps, stored, request, caller);
    if (request.decision !== undefined) {
        return problem(400, `Job ${jobKey} is ${row.state}${row.state === "parked" ? " in provisioning" : ""}, not parked on a convergence: a decision (keep-product, take-template) is for a convergence's conflicts; leave it out.`, {
            state: row.state,
        });
    }
    if (row.state !== "parked") {
        return problem(409, `Job ${jobKey} is ${row.state}, not parked; there is nothing to unpark.`, { state: row.state });
    }

    const instanceId = currentInstanceId(row);
    const status = await deps.orchestrations.status(instanceId);
    const trail = trailOf(deps, jobKey, request, caller, row.parkReason);
    const by = trail.by;
    if (status && LIVE_STATUSES.includes(status.runtimeStatus)) {
        try {
            await deps.jobs.replace(stored, { ...row, unparks: [...row.unparks, trail] }, { from: JobLife.whileParked.from });
        } catch (error) {
            if (error instanceof JobConcurrencyError || error instanceof JobStateConflictError) {
                return CHANGED;
            }
            throw error;
        }
        const event: UnparkEvent = { parkedAt: row.parkedAt, by, note: request.note };
        await deps.orchestrations.raiseEvent(instanceId, UNPARK_EVENT, event);
        deps.log.info(`job ${jobKey}: unpark requested by ${describeCaller(trail)}; event raised on ${instanceId}`);
        return { status: 202, jsonBody: { jobKey, instanceId, action: "unpark event raised", stage: row.stage } };
    }

    // Nobody is waiting: start the next attempt, running at the parked stage.
    const attempt = row.attempt + 1;
    const next = instanceIdFor(key, attempt);
    try {
        await deps.jobs.replace(stored, JobLife.unparkToNewAttempt.apply(row, { trail, instanceId: next, now: deps.now().toISOString() }), {
            from: JobLife.unparkToNewAttempt.from,
        });
    } catch (error) {
        if (error instanceof JobConcurrencyError || error instanceof JobStateConflictError) {
            return CHANGED;
        }
        throw error;
    }
    await startAttempt(deps.orchestrations, key, attempt);
    deps.log.info(
        lineOf(JobLife.unparkToNewAttempt, key, "parked", `unparked by ${describeCaller(trail)}; ${instanceId} was ${status?.runtimeStatus ?? "gone"}, started ${next}`),
    );
    jobEvents.transition(deps.telemetry, { ...row, state: "running", attempt }, deps.sites, { from: "parked", to: "running", reason: "unparked" });
    return { status: 202, jsonBody: { jobKey, instanceId: next, action: "new attempt started", stage: row.stage } };
}

/** Who unparks (the platform's identity when App Service authentication is on, else what the body claims), when, and why. */
function trailOf(deps: RecoveryDeps, jobKey: string, request: z.infer<typeof UnparkRequest>, caller: CallerHeaders, parkReason: string | undefined): JobRow["unparks"][number] {
    const easyAuth = deps.config.WEBSITE_AUTH_ENABLED === true;
    const identity = platformIdentity(caller, easyAuth);
    if (!easyAuth && (caller.principalName || caller.principal)) {
        deps.log.warn(
            `job ${jobKey}: the unpark request carries X-MS-CLIENT-PRINCIPAL headers but App Service authentication is off ` +
                `(WEBSITE_AUTH_ENABLED is not True), so anyone could have sent them: ignored; recording what the body claims`,
        );
    }
    return { by: identity?.name ?? request.by ?? "ops", claimedBy: request.by, identityProvider: identity?.provider, note: request.note, at: deps.now().toISOString(), parkReason };
}

/**
 * Resumes a product parked on its convergence: its conflicts (if any) need a decision —
 * `keep-product` leaves them as the product has them, `take-template` writes the template's
 * attributes over those it can (an edited or data-holding column or field) — and the next
 * attempt starts from the row, carrying out what is left of the frozen plan.
 */
async function unparkConvergence(deps: RecoveryDeps, stored: StoredJob, request: z.infer<typeof UnparkRequest>, caller: CallerHeaders): Promise<ApiResponse | typeof CHANGED> {
    const row = stored.row;
    const key = { pk: row.intakeSheetId, rk: row.intakeRowId };
    const jobKey = formatJobKey(key);
    const run = row.convergence!;
    const conflicts = undecidedOf(run);
    if (conflicts.length > 0 && request.decision === undefined) {
        return problem(
            400,
            `Job ${jobKey} is parked on its convergence to ${run.to} with ${conflicts.length} conflict${conflicts.length === 1 ? "" : "s"} (${conflicts.slice(0, 3).map(describeConflict).join("; ")}): ` +
                `unpark it with a decision, "keep-product" (the product's edits stay) or "take-template" (the template's change is written over them).`,
            { state: "parked", conflicts: conflicts.length },
        );
    }
    if (request.decision === "take-template") {
        const stuck = conflicts.filter((conflict) => !TAKEABLE.has(conflict.kind));
        if (stuck.length > 0) {
            return problem(
                400,
                `take-template cannot resolve ${stuck.map(describeConflict).join("; ")}: change the product by hand (rename its column or field, say), then unpark with keep-product.`,
                { state: "parked" },
            );
        }
    }
    const trail = trailOf(deps, jobKey, request, caller, run.parkReason);
    const attempt = run.attempt + 1;
    const instanceId = convergeInstanceId(key, run.to, attempt);
    const now = deps.now().toISOString();
    try {
        await deps.jobs.replace(
            stored,
            {
                ...row,
                unparks: [...row.unparks, trail],
                convergence: {
                    ...run,
                    attempt,
                    instanceId,
                    state: run.plan === undefined ? "planned" : "applying",
                    decision: conflicts.length > 0 ? request.decision : run.decision,
                    decidedBy: conflicts.length > 0 ? trail.by : run.decidedBy,
                    decisionNote: conflicts.length > 0 ? request.note : run.decisionNote,
                    parkReason: undefined,
                    parkedAt: undefined,
                    lastProgressAt: now,
                },
            },
            { from: JobLife.whileDone.from },
        );
    } catch (error) {
        if (error instanceof JobConcurrencyError || error instanceof JobStateConflictError) {
            return CHANGED;
        }
        throw error;
    }
    await deps.orchestrations.start(ConvergenceNames.product, instanceId, { jobKey: key, to: run.to });
    deps.log.info(
        `job ${jobKey} convergence parked → applying (unparked by ${describeCaller(trail)}${conflicts.length > 0 ? `, decision ${request.decision}` : ""}; started ${instanceId})`,
    );
    return { status: 202, jsonBody: { jobKey, instanceId, action: "convergence resumed", to: run.to, decision: conflicts.length > 0 ? request.decision : undefined } };
}

/** `dana@contoso.com (aad)`, `dana@contoso.com (aad; claimed "Dana")`, or what the caller claimed, marked as such. */
function describeCaller(trail: { by: string; claimedBy?: string; identityProvider?: string }): string {
    if (!trail.identityProvider) return `${trail.by} (claimed, not authenticated)`;
    const claimed = trail.claimedBy !== undefined && trail.claimedBy !== trail.by ? `; claimed "${trail.claimedBy}"` : "";
    return `${trail.by} (${trail.identityProvider}${claimed})`;
}
