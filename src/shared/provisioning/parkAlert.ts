import { formatJobKey, type JobKey, type JobRow } from "../jobs/JobRow";
import { JobNotFoundError, JobStateConflictError } from "../jobs/JobStore";
import { JobLife } from "../jobs/jobLife";
import type { ProvisioningDeps } from "./ProvisioningDeps";

/** What one call of `tellOpsOfParking` did: told ops, tried and failed, or left it (told already, or another run is telling). */
export type ParkAlertOutcome = "sent" | "failed" | "left";

/** How often the answer of a sent alert is written before the run gives up (and leaves its claim for the reaper). */
const RECORD_TRIES = 3;

type AlertDeps = Pick<ProvisioningDeps, "alerts" | "log" | "jobs" | "sites" | "config" | "timing" | "now" | "sleep" | "newRunId">;

/**
 * Since when a run that claimed a park alert cannot still be at it: no run of the app lives longer
 * than the reaper's window (`functionTimeout` is shorter, checked at start-up), give or take clock skew.
 */
export function parkAlertClaimExpiredBefore(deps: Pick<AlertDeps, "config" | "timing" | "now">): number {
    return deps.now().getTime() - deps.config.STALE_AFTER_MINUTES * 60_000 - deps.timing.clockSkewMs;
}

/** Another run is telling ops about this parking now (or may be: its time is not up). */
export function parkAlertClaimIsLive(deps: Pick<AlertDeps, "config" | "timing" | "now">, row: Pick<JobRow, "parkAlertClaim">): boolean {
    return row.parkAlertClaim !== undefined && Date.parse(row.parkAlertClaim.claimedAt) > parkAlertClaimExpiredBefore(deps);
}

/**
 * Tells ops that a job is parked, before anything else that can fail (the intake row may be
 * deleted or locked): an error line in the log, then the alert channel if one is configured (the
 * webhook). An alert cannot be taken back, so the run first claims it on the row (a conditional
 * write): of runs at once (a duplicate activity, the reaper) only the claimant tells ops, once.
 * `parkAlerted` is set only once the webhook answered 2xx (or when there is no webhook: the log
 * line is then the alert); otherwise the failure is counted on the row and the reaper tries again.
 * A claim whose answer was never recorded (its run died, or storage refused the write) is the
 * reaper's to send again once its run cannot still be at it. `line` is the transition line to log.
 */
export async function tellOpsOfParking(deps: AlertDeps, key: JobKey, line: string): Promise<ParkAlertOutcome> {
    const runId = deps.newRunId();
    let row: JobRow;
    try {
        row = (
            await deps.jobs.update(
                key,
                (latest) =>
                    latest.parkAlerted || parkAlertClaimIsLive(deps, latest)
                        ? undefined
                        : { ...latest, parkAlertClaim: { claimedAt: deps.now().toISOString(), by: runId } },
                { from: JobLife.whileParked.from },
            )
        ).row;
    } catch (error) {
        if (error instanceof JobStateConflictError || error instanceof JobNotFoundError) return "left";
        throw error;
    }
    if (row.parkAlertClaim?.by !== runId) return "left";

    deps.log.error(line);
    let failure: string | undefined;
    try {
        await deps.alerts?.send({
            event: "job.parked",
            site: deps.sites.ofIntakeSheet(key.pk)?.name,
            jobKey: formatJobKey(key),
            productCode: row.productCode,
            productName: row.productName,
            stage: row.stage,
            reason: row.parkReason,
            recoveries: row.recoveries,
            parkedAt: row.parkedAt,
        });
    } catch (error) {
        failure = error instanceof Error ? error.message : String(error);
        deps.log.error(
            `job ${formatJobKey(key)}: the park alert webhook failed (try ${row.parkAlertAttempts + 1}): ${failure}; ` +
                `the reaper tries again on its next run`,
        );
    }
    await recordAnswer(deps, key, runId, failure);
    return failure === undefined ? "sent" : "failed";
}

/** The answer on the row, and the claim gone; a later parking (its claim is not ours) decides for itself. */
async function recordAnswer(deps: AlertDeps, key: JobKey, runId: string, failure: string | undefined): Promise<void> {
    for (let attempt = 1; ; attempt++) {
        try {
            await deps.jobs.update(
                key,
                (latest) =>
                    latest.parkAlertClaim?.by !== runId
                        ? undefined
                        : {
                              ...latest,
                              parkAlerted: failure === undefined,
                              parkAlertAttempts: latest.parkAlertAttempts + 1,
                              parkAlertError: failure,
                              parkAlertClaim: undefined,
                          },
                { from: JobLife.whileParked.from },
            );
            return;
        } catch (error) {
            if (error instanceof JobStateConflictError || error instanceof JobNotFoundError) return;
            if (attempt >= RECORD_TRIES) {
                deps.log.error(
                    `job ${formatJobKey(key)}: the park alert was ${failure === undefined ? "delivered" : "tried"} but could not be recorded ` +
                        `(${error instanceof Error ? error.message : String(error)}); its claim stays, and the reaper tells ops again once it is old`,
                );
                throw error;
            }
            await deps.sleep(100 * attempt);
        }
    }
}
