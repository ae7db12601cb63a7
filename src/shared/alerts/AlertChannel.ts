import { cleanText } from "../naming/productNames";

/** What ops is told of a parked job: enough to act without digging. Customer text in it is data, never markup. */
export interface ParkAlert {
    jobKey: string;
    productCode: string;
    productName: string;
    stage?: string;
    reason?: string;
    recoveries: number;
    parkedAt?: string;
}

/** Where park alerts go (a webhook today; a new channel is one class). `send` throws unless the channel took the alert. */
export interface AlertChannel {
    send(alert: ParkAlert): Promise<void>;
}

/** POSTs the alert as JSON to one configured URL (a chat or incident webhook). */
export class WebhookAlertChannel implements AlertChannel {
    constructor(
        private readonly url: string,
        /** Where the app's jobs API answers (`WEBSITE_HOSTNAME` on Azure), to link the job and its unpark endpoint. */
        private readonly appHost: string | undefined = process.env.WEBSITE_HOSTNAME,
    ) {}

    async send(alert: ParkAlert): Promise<void> {
        const host = this.appHost;
        const jobUrl = host ? `${/^(127\.0\.0\.1|localhost)(:|$)/.test(host) ? "http" : "https"}://${host}/api/jobs/${alert.jobKey}` : undefined;
        const response = await fetch(this.url, {
            method: "POST",
            headers: { "content-type": "application/json" },
            // A redirect could take the alert (and what it says) somewhere nobody configured.
            redirect: "manual",
            body: JSON.stringify({
                event: "job.parked",
                jobKey: alert.jobKey,
                productCode: inertText(alert.productCode),
                productName: inertText(alert.productName),
                stage: alert.stage,
                reason: alert.reason === undefined ? undefined : inertText(alert.reason),
                recoveries: alert.recoveries,
                parkedAt: alert.parkedAt,
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
}

/**
 * Customer text as inert data for a chat tool: no mention (`@channel`, `<@U123>`, `<!here>`), no
 * link or markup (`<url|text>`, `*bold*`, `[x](y)`, `# heading`), no invisible characters. Markup
 * characters become their full-width twins, which read the same and mean nothing.
 */
export function inertText(text: string): string {
    return cleanText(text).replace(/[@<>&*_~`|[\]#]/g, (character) => String.fromCodePoint(character.codePointAt(0)! + 0xfee0));
}
