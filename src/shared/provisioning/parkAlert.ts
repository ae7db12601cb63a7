import { formatJobKey, type JobKey, type JobRow } from "../jobs/JobRow";
import { JobConcurrencyError, JobStateConflictError } from "../jobs/JobStore";
import { JobLife } from "../jobs/jobLife";
import { cleanText } from "../naming/productNames";
import type { ProvisioningDeps } from "./ProvisioningDeps";

/**
 * Tells ops that a job is parked, before anything else that can fail (the intake row may be
 * deleted or locked): an error line in the log every time, then the webhook if one is
 * configured. `parkAlerted` is set only once the webhook answered 2xx (or when there is no
 * webhook: the log line is then the alert); otherwise the failure is counted on the row and the
 * reaper tries again. Returns whether ops was reached. `line` is the transition line to log.
 */
export async function tellOpsOfParking(
    deps: Pick<ProvisioningDeps, "config" | "log" | "jobs">,
    key: JobKey,
    line: string,
): Promise<boolean> {
    const stored = await deps.jobs.get(key);
    if (!stored || stored.row.state !== "parked") return false;
    const row = stored.row;
    deps.log.error(line);
    let failure: string | undefined;
    try {
        await sendParkAlert(deps, row);
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

/** POSTs a parked job to `ALERT_WEBHOOK_URL` (if set): enough for ops to act without digging. */
export async function sendParkAlert(deps: Pick<ProvisioningDeps, "config">, row: JobRow): Promise<void> {
    const url = deps.config.ALERT_WEBHOOK_URL;
    if (!url) return;
    const jobKey = formatJobKey({ pk: row.intakeSheetId, rk: row.intakeRowId });
    const host = process.env.WEBSITE_HOSTNAME;
    const jobUrl = host ? `${/^(127\.0\.0\.1|localhost)(:|$)/.test(host) ? "http" : "https"}://${host}/api/jobs/${jobKey}` : undefined;
    const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        // A redirect could take the alert (and what it says) somewhere nobody configured.
        redirect: "manual",
        body: JSON.stringify({
            event: "job.parked",
            jobKey,
            productCode: inertText(row.productCode),
            productName: inertText(row.productName),
            stage: row.stage,
            reason: row.parkReason === undefined ? undefined : inertText(row.parkReason),
            recoveries: row.recoveries,
            parkedAt: row.parkedAt,
            jobUrl,
            unpark: jobUrl ? `POST ${jobUrl}/unpark` : undefined,
        }),
        signal: AbortSignal.timeout(10_000),
    });
    // Nothing of the answer is needed but its status: never read (or wait for) a body of any size.
    await response.body?.cancel();
    if (response.status >= 300 && response.status < 400) throw new Error(`the webhook answered ${response.status}; redirects are not followed`);
    if (!response.ok) throw new Error(`the webhook answered ${response.status}`);
}

/**
 * Customer text as inert data for a chat tool: no mention (`@channel`, `<@U123>`, `<!here>`), no
 * link or markup (`<url|text>`, `*bold*`, `[x](y)`, `# heading`), no invisible characters. Markup
 * characters become their full-width twins, which read the same and mean nothing.
 */
export function inertText(text: string): string {
    return cleanText(text).replace(/[@<>&*_~`|[\]#]/g, (character) => String.fromCodePoint(character.codePointAt(0)! + 0xfee0));
}
