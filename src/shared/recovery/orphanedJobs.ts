import { afterFailure, reportAlertGivenUp, alertFailureOf, alertRetryPolicy, type AlertFailure } from "../alerts/delivery";
import { parkAlertClaimExpiredBefore, type ParkAlertOutcome } from "../provisioning/parkAlert";
import { NOTICES } from "../jobs/JobStore";
import type { RecoveryDeps } from "./reconcile";

/** An intake sheet with active jobs (queued, running or parked) that belongs to no configured site. */
export interface OrphanedIntakeSheet {
    intakeSheetId: string;
    active: number;
}

/** `; 2 active jobs orphaned by configuration (intake sheet 123 is in no site of SITES)`, or nothing. */
export function orphanedText(orphaned: readonly OrphanedIntakeSheet[]): string {
    if (orphaned.length === 0) return "";
    const active = orphaned.reduce((sum, one) => sum + one.active, 0);
    const sheets = orphaned.map((one) => one.intakeSheetId).join(", ");
    return `; ${active} active job${active === 1 ? "" : "s"} orphaned by configuration (intake sheet${orphaned.length === 1 ? "" : "s"} ${sheets} in no site of SITES)`;
}

/**
 * Tells ops, once per intake sheet across runs and instances (claimed in the Jobs table before it
 * is sent), that an intake sheet has active jobs but no site: an error line, then the alert channel.
 * A failed send that may pass is tried again by a later run (1 min doubling to 1 h, 10 tries); one
 * that cannot, or the tenth, is given up with one alert.failed line. A claim whose run died expires like a park alert's.
 */
export async function tellOpsOfOrphanedJobs(
    deps: Pick<RecoveryDeps, "alerts" | "log" | "telemetry" | "jobs" | "sites" | "config" | "timing" | "now" | "newRunId">,
    orphaned: OrphanedIntakeSheet,
): Promise<ParkAlertOutcome> {
    const by = deps.newRunId();
    if (!(await deps.jobs.claimNotice(NOTICES.orphanedIntakeSheet, orphaned.intakeSheetId, by, deps.now(), parkAlertClaimExpiredBefore(deps)))) return "left";
    const known = deps.sites.all().map((site) => `${site.name}: ${site.intakeSheetId}`).join(", ");
    const reason =
        `intake sheet ${orphaned.intakeSheetId} belongs to no site in SITES (${known}) but has ${orphaned.active} active job${orphaned.active === 1 ? "" : "s"}; ` +
        `add its site back to SITES (then unpark its parked jobs), or finish them by hand in the Jobs table; list them with GET /api/jobs`;
    deps.log.error(`reaper: ${reason}`);
    let failure: AlertFailure | undefined;
    try {
        await deps.alerts?.send({ event: "jobs.orphaned", intakeSheetId: orphaned.intakeSheetId, activeJobs: orphaned.active, reason, foundAt: deps.now().toISOString() });
    } catch (error) {
        failure = alertFailureOf(error);
    }
    const now = deps.now();
    const next = await deps.jobs.recordNotice(NOTICES.orphanedIntakeSheet, orphaned.intakeSheetId, by, failure ? undefined : now, (tries) =>
        afterFailure(failure!, tries, now, alertRetryPolicy(deps.config.STALE_AFTER_MINUTES)),
    );
    if (failure && next && "givenUp" in next) {
        reportAlertGivenUp(deps, { alert: "jobs.orphaned", about: `intake sheet ${orphaned.intakeSheetId}`, ...next.givenUp });
    } else if (failure) {
        deps.log.error(
            `reaper: the alert about intake sheet ${orphaned.intakeSheetId} did not go through (${failure.reason}); ` +
                `a reaper run tries again${next && "retryAt" in next ? ` after ${next.retryAt}` : ""}`,
        );
    }
    return failure ? "failed" : "sent";
}
