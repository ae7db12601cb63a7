import { afterFailure, reportAlertGivenUp, alertFailureOf, alertRetryPolicy, type AfterFailure, type AlertFailure } from "../alerts/delivery";
import { formatJobKey, type JobKey, type JobRow } from "../jobs/JobRow";
import { JobNotFoundError, JobStateConflictError } from "../jobs/JobStore";
import { JobLife } from "../jobs/jobLife";
import type { ProvisioningDeps } from "./ProvisioningDeps";

/** What one call of `tellOpsOfParking` did: told ops, tried and failed, or left it (told already, given up, not due yet, or another run is telling). */
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
 * line is then the alert). A failure that may pass (5xx, 429, no answer) is counted on the row
 * with the time of the next try (`parkAlertRetryAt`: 1 min doubling to 1 h), which the reaper
 * makes; one that cannot (400, 401, 403, 404, 410…), or the tenth, gives the alert up
 * (`parkAlertFailed`), said once in an `alert.failed` line, and nobody sends it again.
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
                    latest.parkAlerted || latest.parkAlertFailed || parkAlertClaimIsLive(deps, latest) || retryNotDue(deps, latest)
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
    let failure: AlertFailure | undefined;
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
        failure = alertFailureOf(error);
    }
    const next = await recordAnswer(deps, key, runId, failure);
    if (failure && next) {
        const tries = "givenUp" in next ? next.givenUp.tries : next.tries;
        deps.log.error(
            `job ${formatJobKey(key)}: the park alert webhook failed (try ${tries}): ${failure.reason}` + ("retryAt" in next ? `; the reaper tries again after ${next.retryAt}` : ""),
        );
        if ("givenUp" in next) reportAlertGivenUp(deps, { alert: "job.parked", about: `job ${formatJobKey(key)}`, ...next.givenUp });
    }
    return failure === undefined ? "sent" : "failed";
}

/** A try that failed in a way that may pass waits for its time. */
function retryNotDue(deps: Pick<AlertDeps, "now">, row: Pick<JobRow, "parkAlertRetryAt">): boolean {
    return row.parkAlertRetryAt !== undefined && Date.parse(row.parkAlertRetryAt) > deps.now().getTime();
}

/**
 * The answer on the row, and the claim gone; a later parking (its claim is not ours) decides for
 * itself. For a failure: what follows it (another try at a time, or the alert given up), once recorded.
 */
async function recordAnswer(deps: AlertDeps, key: JobKey, runId: string, failure: AlertFailure | undefined): Promise<AfterFailure | undefined> {
    for (let attempt = 1; ; attempt++) {
        let next: AfterFailure | undefined;
        try {
            await deps.jobs.update(
                key,
                (latest) => {
                    if (latest.parkAlertClaim?.by !== runId) return undefined;
                    const tries = latest.parkAlertAttempts + 1;
                    next = failure === undefined ? undefined : afterFailure(failure, tries, deps.now(), alertRetryPolicy(deps.config.STALE_AFTER_MINUTES));
                    return {
                        ...latest,
                        parkAlerted: failure === undefined,
                        parkAlertAttempts: tries,
                        parkAlertError: failure?.reason,
                        parkAlertRetryAt: next && "retryAt" in next ? next.retryAt : undefined,
                        parkAlertFailed: next && "givenUp" in next ? next.givenUp : undefined,
                        parkAlertClaim: undefined,
                    };
                },
                { from: JobLife.whileParked.from },
            );
            return next;
        } catch (error) {
            if (error instanceof JobStateConflictError || error instanceof JobNotFoundError) return undefined;
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
