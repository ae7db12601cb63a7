import { z } from "zod";
import { hasHiddenCharacters } from "../text/logText";
import { problem, quoted, type ApiResponse } from "./jobsApi";
import { currentInstanceId, formatJobKey, parseJobKey } from "../jobs/JobRow";
import { JobConcurrencyError, JobStateConflictError } from "../jobs/JobStore";
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

    const stored = await deps.jobs.get(key);
    if (!stored) return problem(404, `There is no job ${jobKeyText}.`);
    const row = stored.row;
    const jobKey = formatJobKey(key);
    if (row.state !== "parked") {
        return problem(409, `Job ${jobKey} is ${row.state}, not parked; there is nothing to unpark.`, { state: row.state });
    }

    const instanceId = currentInstanceId(row);
    const status = await deps.orchestrations.status(instanceId);
    const easyAuth = deps.config.WEBSITE_AUTH_ENABLED === true;
    const identity = platformIdentity(caller, easyAuth);
    if (!easyAuth && (caller.principalName || caller.principal)) {
        deps.log.warn(
            `job ${jobKey}: the unpark request carries X-MS-CLIENT-PRINCIPAL headers but App Service authentication is off ` +
                `(WEBSITE_AUTH_ENABLED is not True), so anyone could have sent them: ignored; recording what the body claims`,
        );
    }
    const by = identity?.name ?? request.data.by ?? "ops";
    const trail = {
        by,
        claimedBy: request.data.by,
        identityProvider: identity?.provider,
        note: request.data.note,
        at: deps.now().toISOString(),
        parkReason: row.parkReason,
    };
    if (status && LIVE_STATUSES.includes(status.runtimeStatus)) {
        try {
            await deps.jobs.replace(stored, { ...row, unparks: [...row.unparks, trail] }, { from: JobLife.whileParked.from });
        } catch (error) {
            if (error instanceof JobConcurrencyError || error instanceof JobStateConflictError) {
                return problem(409, `Job ${jobKey} changed while it was being unparked; look at it again.`);
            }
            throw error;
        }
        const event: UnparkEvent = { parkedAt: row.parkedAt, by, note: request.data.note };
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
            return problem(409, `Job ${jobKey} changed while it was being unparked; look at it again.`);
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

/** `dana@contoso.com (aad)`, `dana@contoso.com (aad; claimed "Dana")`, or what the caller claimed, marked as such. */
function describeCaller(trail: { by: string; claimedBy?: string; identityProvider?: string }): string {
    if (!trail.identityProvider) return `${trail.by} (claimed, not authenticated)`;
    const claimed = trail.claimedBy !== undefined && trail.claimedBy !== trail.by ? `; claimed "${trail.claimedBy}"` : "";
    return `${trail.by} (${trail.identityProvider}${claimed})`;
}
