import type { Logger } from "../logger";
import type { Telemetry } from "../telemetry/Telemetry";
/**
 * What an alert's failed delivery means for the next try. The classes are the same for every
 * alert the app sends (park, orphaned jobs, refused intake row, site failure and recovery).
 */

/** How a failed alert is tried again: after `firstMs`, doubling up to `maxMs`, at most `maxTries` tries in all. */
export interface AlertRetryPolicy {
    firstMs: number;
    maxMs: number;
    maxTries: number;
}

/** Tries of one alert before it is given up (and marked failed where it is stored). */
export const ALERT_MAX_TRIES = 10;

/**
 * 1 min doubling to 1 h, 10 tries (waits of about 4 h in all). The first wait is at most a fifth of the
 * reaper's window and the longest 60 times the first: on Azure, where STALE_AFTER_MINUTES must
 * outlast functionTimeout, that is always 1 min to 1 h; a test host with a window of seconds retries in seconds.
 */
export function alertRetryPolicy(staleAfterMinutes: number): AlertRetryPolicy {
    const firstMs = Math.min(60_000, Math.round((staleAfterMinutes * 60_000) / 5));
    return { firstMs, maxMs: firstMs * 60, maxTries: ALERT_MAX_TRIES };
}

/**
 * Answers that the same request to the same URL can never turn into a success: the webhook's URL
 * (which carries its credentials) or the body is wrong, and only a person changing the setting
 * fixes that. 401 and 403 belong here: the request has no credentials but the URL, so a refusal
 * is the URL's (Slack: 403 `invalid_token`/`action_prohibited`; a Teams workflow whose signature
 * no longer matches, or whose owner left), not a passing state. 404 and 410: the channel or flow
 * is gone (Slack: `channel_not_found`, `channel_is_archived`). 400, 413, 415, 422: the body is
 * refused as it is, and it would be sent again as it is. 3xx: redirects are not followed, so the
 * same answer comes back every time. Everything else (408, 425, 429, 5xx, no answer) may pass.
 */
export function isPermanentStatus(status: number): boolean {
    if (status >= 300 && status < 400) return true;
    return status >= 400 && status < 500 && ![408, 425, 429].includes(status);
}

/** The channel did not take an alert: `permanent` when no later try of the same alert can succeed. */
export class AlertDeliveryError extends Error {
    constructor(
        message: string,
        readonly permanent: boolean,
        /** The webhook's HTTP status, when it answered. */
        readonly status?: number,
    ) {
        super(message);
        this.name = "AlertDeliveryError";
    }
}

/** A failed try, as it is stored and logged. */
export interface AlertFailure {
    permanent: boolean;
    status?: number;
    reason: string;
}

/** Any error a send threw, classed: only an `AlertDeliveryError` may be permanent; a timeout, a reset or a bug is worth another try. */
export function alertFailureOf(error: unknown): AlertFailure {
    const reason = (error instanceof Error ? error.message : String(error)).slice(0, 300);
    if (error instanceof AlertDeliveryError) return { permanent: error.permanent, ...(error.status === undefined ? {} : { status: error.status }), reason };
    return { permanent: false, reason };
}

/** Why an alert was given up, as stored where the alert is recorded. */
interface AlertGivenUp {
    status?: number;
    reason: string;
    tries: number;
    at: string;
}

/** What a failed try leads to: another try no sooner than `retryAt`, or the alert given up. */
export type AfterFailure = { retryAt: string; tries: number } | { givenUp: AlertGivenUp };

/**
 * After the `tries`-th failed try (counting it): a permanent failure, or the last allowed try,
 * gives the alert up; otherwise the next try waits its turn of the policy's back-off.
 */
export function afterFailure(failure: AlertFailure, tries: number, now: Date, policy: AlertRetryPolicy): AfterFailure {
    if (failure.permanent || tries >= policy.maxTries) {
        return { givenUp: { ...(failure.status === undefined ? {} : { status: failure.status }), reason: failure.reason, tries, at: now.toISOString() } };
    }
    return { retryAt: new Date(now.getTime() + alertRetryDelayMs(tries, policy)).toISOString(), tries };
}

/** The wait after the `tries`-th failed try. */
function alertRetryDelayMs(tries: number, policy: AlertRetryPolicy): number {
    return Math.min(policy.firstMs * 2 ** Math.max(0, tries - 1), policy.maxMs);
}

/** The attributes of the `alert.failed` event (the telemetry event's shape, logged as its line until telemetry emits it). */
interface AlertFailedEvent {
    event: "alert.failed";
    /** Which alert: `job.parked`, `jobs.orphaned`, `intake.rowRefused`, `site.failed`, `site.recovered`. */
    alert: string;
    /** Who it is about: a job key, an intake sheet, a site. */
    about: string;
    status?: number;
    reason: string;
    tries: number;
}

/** An alert given up: one error line for the log, one `alert.failed` event for telemetry. */
export function reportAlertGivenUp(deps: { log: Logger; telemetry?: Telemetry }, event: Omit<AlertFailedEvent, "event">): void {
    deps.log.error(alertFailedLine(event));
    deps.telemetry?.event("alert.failed", { alert: event.alert, about: event.about, status: event.status, reason: event.reason, tries: event.tries });
}

/**
 * The one line that tells ops an alert was given up, logged once per alert (by the run that
 * recorded it): the event's attributes as JSON, after what to do about it.
 */
function alertFailedLine(event: Omit<AlertFailedEvent, "event">): string {
    const payload: AlertFailedEvent = { event: "alert.failed", ...event };
    const answered = event.status === undefined ? "no answer" : `the webhook answered ${event.status}`;
    return (
        `${event.about}: the ${event.alert} alert was given up after ${event.tries} tr${event.tries === 1 ? "y" : "ies"} (${answered}: ${event.reason}); ` +
        `it is not sent again. Check ALERT_WEBHOOK_URL and ALERT_WEBHOOK_FORMAT, and look at what it was about yourself ${JSON.stringify(payload)}`
    );
}
