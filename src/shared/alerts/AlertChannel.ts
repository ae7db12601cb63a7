import type { Alert } from "./Alert";
import { alertBody, type AlertFormat } from "./alertBodies";
import { AlertDeliveryError, isPermanentStatus } from "./delivery";
import { chatSafeText } from "./chatSafeText";
import { signatureHeaders } from "./signature";

export { chatSafeText };

export type { Alert, IntakeRowRefusedAlert, OrphanedJobsAlert, ParkAlert, SiteFailureAlert, SiteRecoveredAlert, WebhookAlert } from "./Alert";

/**
 * Where alerts go (a webhook today; a new channel is one class). `send` resolves once the channel
 * took the alert, and otherwise throws, an `AlertDeliveryError` saying whether a later try may pass.
 */
export interface AlertChannel {
    send(alert: Alert): Promise<void>;
}

export interface WebhookOptions {
    /** ALERT_WEBHOOK_FORMAT: how the body is written (json by default). */
    format?: AlertFormat;
    /** ALERT_WEBHOOK_SIGNING_SECRET: when set, each alert is signed (see `signatureHeaders`). */
    signingSecret?: string;
    /** Where the app's jobs API answers (`WEBSITE_HOSTNAME` on Azure), to link the job and its unpark endpoint. */
    appHost?: string;
    now?: () => Date;
    /** How long one alert may take before it counts as unanswered (default `WEBHOOK_TIMEOUT_MS`). */
    timeoutMs?: number;
}

/** How long one alert may take before it counts as unanswered (and is tried again later). */
const WEBHOOK_TIMEOUT_MS = 10_000;

/** POSTs each alert to one configured URL (a chat or incident webhook), in the configured format, signed when a secret is set. */
export class WebhookAlertChannel implements AlertChannel {
    private readonly format: AlertFormat;
    private readonly appHost: string | undefined;
    private readonly now: () => Date;

    constructor(
        private readonly url: string,
        private readonly options: WebhookOptions = {},
    ) {
        this.format = options.format ?? "json";
        this.appHost = "appHost" in options ? options.appHost : process.env.WEBSITE_HOSTNAME;
        this.now = options.now ?? (() => new Date());
    }

    async send(alert: Alert): Promise<void> {
        const body = JSON.stringify(alertBody(alert, this.format, this.appHost));
        let response: Response;
        try {
            response = await fetch(this.url, {
                method: "POST",
                headers: {
                    "content-type": "application/json",
                    ...(this.options.signingSecret ? signatureHeaders(this.options.signingSecret, body, this.now()) : {}),
                },
                // A redirect could take the alert (and what it says) somewhere nobody configured.
                redirect: "manual",
                body,
                signal: AbortSignal.timeout(this.options.timeoutMs ?? WEBHOOK_TIMEOUT_MS),
            });
        } catch (error) {
            // No answer (refused, reset, timed out): the webhook may take the next try.
            throw new AlertDeliveryError(`the webhook did not answer (${error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error)})`, false);
        }
        // Nothing of the answer is needed but its status: never read (or wait for) a body of any size.
        await response.body?.cancel().catch(() => undefined);
        const status = response.status;
        if (status >= 300 && status < 400) {
            throw new AlertDeliveryError(`the webhook answered ${status}; redirects are not followed: set ALERT_WEBHOOK_URL to where it redirects`, true, status);
        }
        if (!response.ok) {
            throw new AlertDeliveryError(`the webhook answered ${status}${isPermanentStatus(status) ? whatToFix(status) : ""}`, isPermanentStatus(status), status);
        }
    }
}

/** What a person fixes after a permanent answer. */
function whatToFix(status: number): string {
    if (status === 401 || status === 403) return ": it refuses this URL; create a new webhook and put its URL into ALERT_WEBHOOK_URL";
    if (status === 404 || status === 410) return ": its channel or flow is gone; put a live webhook's URL into ALERT_WEBHOOK_URL";
    return ": it refuses the body; check that ALERT_WEBHOOK_FORMAT matches the webhook (json, slack or teams)";
}
