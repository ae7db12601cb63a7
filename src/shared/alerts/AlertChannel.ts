import { cleanText } from "../naming/productNames";

/** What ops is told of a parked job: enough to act without digging. Customer text in it is data, never markup. */
export interface ParkAlert {
    event: "job.parked";
    /** The customer's site the job belongs to (absent when its intake sheet belongs to none). */
    site?: string;
    jobKey: string;
    productCode: string;
    productName: string;
    stage?: string;
    reason?: string;
    recoveries: number;
    parkedAt?: string;
}

/** A whole site failed a run (its token refused, its template folder gone…): none of its work moves until a person acts. */
export interface SiteFailureAlert {
    event: "site.failed";
    site: string;
    /** Which run failed for it: the intake sweep, the reaper, the reconciliation. */
    run: string;
    reason: string;
    failedAt: string;
}

/** Smartsheet refused to write one intake row's status (locked, no permission to it): the sweep goes on and retries it with back-off. */
export interface IntakeRowRefusedAlert {
    event: "intake.rowRefused";
    site: string;
    jobKey: string;
    intakeSheetId: string;
    intakeRowId: string;
    /** The status the row is owed. */
    status: string;
    errorCode?: number;
    /** What Smartsheet said. */
    message: string;
    refusedAt: string;
}

/** An intake sheet has open or parked jobs but belongs to no site in SITES: nothing moves them until a person acts. */
export interface OrphanedJobsAlert {
    event: "jobs.orphaned";
    intakeSheetId: string;
    activeJobs: number;
    reason: string;
    foundAt: string;
}

export type Alert = ParkAlert | SiteFailureAlert | IntakeRowRefusedAlert | OrphanedJobsAlert;

/** Where alerts go (a webhook today; a new channel is one class). `send` throws unless the channel took the alert. */
export interface AlertChannel {
    send(alert: Alert): Promise<void>;
}

/** POSTs the alert as JSON to one configured URL (a chat or incident webhook). */
export class WebhookAlertChannel implements AlertChannel {
    constructor(
        private readonly url: string,
        /** Where the app's jobs API answers (`WEBSITE_HOSTNAME` on Azure), to link the job and its unpark endpoint. */
        private readonly appHost: string | undefined = process.env.WEBSITE_HOSTNAME,
    ) {}

    async send(alert: Alert): Promise<void> {
        const response = await fetch(this.url, {
            method: "POST",
            headers: { "content-type": "application/json" },
            // A redirect could take the alert (and what it says) somewhere nobody configured.
            redirect: "manual",
            body: JSON.stringify(
                alert.event === "job.parked" ? this.parkBody(alert) : alert.event === "site.failed" ? siteFailureBody(alert) : alert.event === "intake.rowRefused" ? rowRefusedBody(alert) : alert,
            ),
            signal: AbortSignal.timeout(10_000),
        });
        // Nothing of the answer is needed but its status: never read (or wait for) a body of any size.
        await response.body?.cancel();
        if (response.status >= 300 && response.status < 400) throw new Error(`the webhook answered ${response.status}; redirects are not followed`);
        if (!response.ok) throw new Error(`the webhook answered ${response.status}`);
    }

    private parkBody(alert: ParkAlert): object {
        const host = this.appHost;
        const jobUrl = host ? `${/^(127\.0\.0\.1|localhost)(:|$)/.test(host) ? "http" : "https"}://${host}/api/jobs/${alert.jobKey}` : undefined;
        return {
            event: alert.event,
            site: alert.site,
            jobKey: alert.jobKey,
            productCode: inertText(alert.productCode),
            productName: inertText(alert.productName),
            stage: alert.stage,
            reason: alert.reason === undefined ? undefined : inertText(alert.reason),
            recoveries: alert.recoveries,
            parkedAt: alert.parkedAt,
            jobUrl,
            unpark: jobUrl ? `POST ${jobUrl}/unpark` : undefined,
        };
    }
}


function rowRefusedBody(alert: IntakeRowRefusedAlert): object {
    return { ...alert, status: inertText(alert.status), message: inertText(alert.message) };
}

function siteFailureBody(alert: SiteFailureAlert): object {
    return { event: alert.event, site: alert.site, run: alert.run, reason: inertText(alert.reason), failedAt: alert.failedAt };
}

/**
 * Customer text as inert data for a chat tool: no mention (`@channel`, `<@U123>`, `<!here>`), no
 * link or markup (`<url|text>`, `*bold*`, `[x](y)`, `# heading`), no invisible characters. Markup
 * characters become their full-width twins, which read the same and mean nothing.
 */
export function inertText(text: string): string {
    return cleanText(text).replace(/[@<>&*_~`|[\]#]/g, (character) => String.fromCodePoint(character.codePointAt(0)! + 0xfee0));
}
