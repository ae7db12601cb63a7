import { z } from "zod";
import { problem, type ApiResponse } from "../jobs/jobsApi";
import { currentInstanceId, formatJobKey, parseJobKey } from "../jobs/JobRow";
import { JobConcurrencyError, JobStateConflictError } from "../jobs/JobStore";
import { transitionLine } from "../jobs/transitions";
import { instanceIdFor } from "../naming/instanceIds";
import { LIVE_STATUSES } from "../orchestration/Orchestrations";
import { OrchestrationNames, UNPARK_EVENT, type UnparkEvent } from "../provisioning/contracts";
import type { RecoveryDeps } from "./reconcile";

/** Optional body of `POST /api/jobs/{jobKey}/unpark`. */
export const UnparkRequest = z.strictObject({
    by: z.string().trim().min(1).max(100).optional(),
    note: z.string().trim().max(500).optional(),
});

/**
 * Resumes a parked job. If its orchestration is waiting, the `unpark` event is raised and the
 * orchestration runs the parked stage again; if the orchestration is gone (purged, terminated
 * by hand), a new attempt is started from the row. Either way what exists is adopted.
 */
export async function unparkJob(deps: RecoveryDeps, jobKeyText: string, bodyText: string): Promise<ApiResponse> {
    const key = parseJobKey(jobKeyText);
    if (!key) return problem(400, `"${jobKeyText}" is not a job key; expected <intakeSheetId>-<intakeRowId>.`);
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
    if (status && LIVE_STATUSES.includes(status.runtimeStatus)) {
        const event: UnparkEvent = { parkedAt: row.parkedAt, by, note: request.data.note };
        await deps.orchestrations.raiseEvent(instanceId, UNPARK_EVENT, event);
        deps.log.info(`job ${jobKey}: unpark requested by ${by}; event raised on ${instanceId}`);
        return { status: 202, jsonBody: { jobKey, instanceId, action: "unpark event raised", stage: row.stage } };
    }

    // Nobody is waiting: start the next attempt, running at the parked stage.
    const attempt = row.attempt + 1;
    const next = instanceIdFor(key, attempt);
    try {
        await deps.jobs.replace(
            stored,
            {
                ...row,
                state: "running",
                attempt,
                instanceId: next,
                recoveries: 0,
                parkReason: undefined,
                parkedAt: undefined,
                parkAlerted: false,
                lastProgressAt: deps.now().toISOString(),
            },
            { from: ["parked"] },
        );
    } catch (error) {
        if (error instanceof JobConcurrencyError || error instanceof JobStateConflictError) {
            return problem(409, `Job ${jobKey} changed while it was being unparked; look at it again.`);
        }
        throw error;
    }
    await deps.orchestrations.start(OrchestrationNames.provisionProduct, next, { jobKey: key, attempt });
    deps.log.info(
        transitionLine(key, "parked", "running", `unparked by ${by}; ${instanceId} was ${status?.runtimeStatus ?? "gone"}, started ${next}`),
    );
    return { status: 202, jsonBody: { jobKey, instanceId: next, action: "new attempt started", stage: row.stage } };
}
