import { createHmac } from "node:crypto";

const TIMESTAMP_HEADER = "X-Sheetwright-Timestamp";
const SIGNATURE_HEADER = "X-Sheetwright-Signature";

/**
 * The headers that let a receiver check an alert came from this app and was not replayed:
 * the send's time in unix seconds, and `sha256=` + the hex HMAC-SHA256, keyed with
 * ALERT_WEBHOOK_SIGNING_SECRET, of `<timestamp>.<raw body>`.
 */
export function signatureHeaders(secret: string, body: string, now: Date): Record<string, string> {
    const timestamp = String(Math.floor(now.getTime() / 1000));
    const signature = createHmac("sha256", secret).update(`${timestamp}.${body}`, "utf8").digest("hex");
    return { [TIMESTAMP_HEADER]: timestamp, [SIGNATURE_HEADER]: `sha256=${signature}` };
}
