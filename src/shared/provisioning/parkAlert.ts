import { formatJobKey, type JobKey } from "../jobs/JobRow";
import { JobConcurrencyError, JobStateConflictError } from "../jobs/JobStore";
import { JobLife } from "../jobs/jobLife";
import type { ProvisioningDeps } from "./ProvisioningDeps";

/**
 * Tells ops that a job is parked, before anything else that can fail (the intake row may be
 * deleted or locked): an error line in the log every time, then the alert channel if one is
 * configured (the webhook). `parkAlerted` is set only once the webhook answered 2xx (or when there is no
 * webhook: the log line is then the alert); otherwise the failure is counted on the row and the
 * reaper tries again. Returns whether ops was reached. `line` is the transition line to log.
 */
export async function tellOpsOfParking(
    deps: Pick<ProvisioningDeps, "alerts" | "log" | "jobs" | "sites">,
    key: JobKey,
    line: string,
): Promise<boolean> {
    const stored = await deps.jobs.get(key);
    if (!stored || stored.row.state !== "parked") return false;
    const row = stored.row;
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
    try {
        await deps.jobs.update(
            key,
            (latest) =>
                latest.parkedAt !== row.parkedAt
                    ? undefined // a later parking: its own alert decides
                    : { ...latest, parkAlerted: failure === undefined, parkAlertAttempts: latest.parkAlertAttempts + 1, parkAlertError: failure },
            { from: JobLife.whileParked.from },
        );
    } catch (error) {
        if (!(error instanceof JobConcurrencyError || error instanceof JobStateConflictError)) throw error;
    }
    return failure === undefined;
}
