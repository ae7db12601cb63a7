import { z } from "zod";
import { hasHiddenCharacters } from "../text/logText";
import { problem, quoted, type ApiResponse } from "./jobsApi";
import { currentInstanceId, formatJobKey, parseJobKey } from "../jobs/JobRow";
import { JobConcurrencyError, JobStateConflictError } from "../jobs/JobStore";
import { JobLife, transitionLine } from "../jobs/jobLife";
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
export const UnparkRequest = z.strictObject({
    by: plainText(100).pipe(z.string().min(1)).optional(),
    note: plainText(500).optional(),
});

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
export async function unparkJob(deps: RecoveryDeps, jobKeyText: string, bodyText: string): Promise<ApiResponse> {
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
    const by = request.data.by ?? "ops";
    const trail = { by, note: request.data.note, at: deps.now().toISOString(), parkReason: row.parkReason };
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
        deps.log.info(`job ${jobKey}: unpark requested by ${by}; event raised on ${instanceId}`);
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
        transitionLine(key, "parked", "running", `unparked by ${by}; ${instanceId} was ${status?.runtimeStatus ?? "gone"}, started ${next}`),
    );
    jobEvents.transition(deps.telemetry, { ...row, state: "running", attempt }, deps.sites, { from: "parked", to: "running", reason: "unparked" });
    return { status: 202, jsonBody: { jobKey, instanceId: next, action: "new attempt started", stage: row.stage } };
}
