import { formatJobKey, type JobRow } from "../jobs/JobRow";
import type { ProvisioningDeps } from "./ProvisioningDeps";

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
        body: JSON.stringify({
            event: "job.parked",
            jobKey,
            productCode: row.productCode,
            productName: row.productName,
            stage: row.stage,
            reason: row.parkReason,
            recoveries: row.recoveries,
            parkedAt: row.parkedAt,
            jobUrl,
            unpark: jobUrl ? `POST ${jobUrl}/unpark` : undefined,
        }),
        signal: AbortSignal.timeout(10_000),
    });
    if (!response.ok) throw new Error(`the webhook answered ${response.status}`);
}
