import type { Alert, IntakeRowRefusedAlert, ParkAlert, SiteFailureAlert } from "./Alert";
import { chatSafeText } from "./chatSafeText";
import type { ALERT_FORMATS } from "../config";

/** How alerts are written for the webhook: today's JSON, a Slack incoming-webhook message, or a Teams workflow's Adaptive Card. */
export type AlertFormat = (typeof ALERT_FORMATS)[number];

/** The body of one alert in `format`. `appHost` (WEBSITE_HOSTNAME) links a parked job and its unpark endpoint. */
export function alertBody(alert: Alert, format: AlertFormat, appHost: string | undefined): object {
    if (format === "json") return jsonBody(alert, appHost);
    const message = chatMessage(alert, appHost);
    return format === "slack" ? slackBody(message) : teamsBody(message);
}

/** An alert as a chat tool shows it, every text in it already inert (customer text and all). */
interface ChatMessage {
    title: string;
    summary: string;
    facts: Array<[label: string, value: string]>;
    link?: { title: string; url: string };
    event: string;
}

function jsonBody(alert: Alert, appHost: string | undefined): object {
    switch (alert.event) {
        case "job.parked":
            return parkJson(alert, appHost);
        case "site.failed":
            return siteFailureJson(alert);
        case "intake.rowRefused":
            return rowRefusedJson(alert);
        case "convergence.parked": {
            const jobUrl = jobUrlOf(alert.jobKey, appHost);
            return {
                ...alert,
                productCode: chatSafeText(alert.productCode),
                productName: chatSafeText(alert.productName),
                reason: chatSafeText(alert.reason),
                jobUrl,
                unpark: jobUrl ? `POST ${jobUrl}/unpark {"decision":"keep-product"|"take-template"}` : undefined,
            };
        }
        default:
            return alert;
    }
}

function jobUrlOf(jobKey: string, appHost: string | undefined): string | undefined {
    if (!appHost) return undefined;
    return `${/^(127\.0\.0\.1|localhost)(:|$)/.test(appHost) ? "http" : "https"}://${appHost}/api/jobs/${jobKey}`;
}

function parkJson(alert: ParkAlert, appHost: string | undefined): object {
    const jobUrl = jobUrlOf(alert.jobKey, appHost);
    return {
        event: alert.event,
        site: alert.site,
        jobKey: alert.jobKey,
        productCode: chatSafeText(alert.productCode),
        productName: chatSafeText(alert.productName),
        stage: alert.stage,
        reason: alert.reason === undefined ? undefined : chatSafeText(alert.reason),
        recoveries: alert.recoveries,
        parkedAt: alert.parkedAt,
        jobUrl,
        unpark: jobUrl ? `POST ${jobUrl}/unpark` : undefined,
    };
}

function rowRefusedJson(alert: IntakeRowRefusedAlert): object {
    return { ...alert, status: chatSafeText(alert.status), message: chatSafeText(alert.message) };
}

function siteFailureJson(alert: SiteFailureAlert): object {
    return { event: alert.event, site: alert.site, run: alert.run, reason: chatSafeText(alert.reason), failedAt: alert.failedAt };
}

/** What every alert says, for the chat formats: a title, one sentence of what to do, the facts. */
function chatMessage(alert: Alert, appHost: string | undefined): ChatMessage {
    const fact = (label: string, value: string | number | undefined): Array<[string, string]> => (value === undefined ? [] : [[label, chatSafeText(String(value))]]);
    switch (alert.event) {
        case "job.parked": {
            const jobUrl = jobUrlOf(alert.jobKey, appHost);
            return {
                event: alert.event,
                title: `Job parked: ${chatSafeText(alert.productCode)} ${chatSafeText(alert.productName)}`,
                summary:
                    `Job ${alert.jobKey} is parked and waits for a person: ${chatSafeText(alert.reason ?? "no reason recorded")}. ` +
                    `Fix the cause, then unpark it (POST /api/jobs/${alert.jobKey}/unpark, or sheetwright-jobs unpark ${alert.jobKey} --by <you>).`,
                facts: [
                    ...fact("Site", alert.site),
                    ...fact("Job", alert.jobKey),
                    ...fact("Stage", alert.stage),
                    ...fact("Recoveries", alert.recoveries),
                    ...fact("Parked at", alert.parkedAt),
                ],
                ...(jobUrl ? { link: { title: "Open the job", url: jobUrl } } : {}),
            };
        }
        case "convergence.parked": {
            const jobUrl = jobUrlOf(alert.jobKey, appHost);
            return {
                event: alert.event,
                title: `Convergence parked: ${chatSafeText(alert.productCode)} ${chatSafeText(alert.productName)}`,
                summary:
                    `Product ${chatSafeText(alert.productCode)} (job ${alert.jobKey}) stopped on its way to template version ${alert.to}: ${chatSafeText(alert.reason)}. ` +
                    `Look at its plan (sheetwright-jobs converge --dry-run --product ${chatSafeText(alert.productCode)}), then unpark it with a decision ` +
                    `(sheetwright-jobs unpark ${alert.jobKey} --decision keep-product|take-template --by <you>).`,
                facts: [...fact("Site", alert.site), ...fact("Job", alert.jobKey), ...fact("Template version", alert.to), ...fact("Parked at", alert.parkedAt)],
                ...(jobUrl ? { link: { title: "Open the job", url: jobUrl } } : {}),
            };
        }
        case "site.failed":
            return {
                event: alert.event,
                title: `Site ${chatSafeText(alert.site)} failed`,
                summary: `The ${chatSafeText(alert.run)} could not run for site ${chatSafeText(alert.site)}, and none of its work moves until this is fixed: ${chatSafeText(alert.reason)}. A message follows when it runs again.`,
                facts: [...fact("Site", alert.site), ...fact("Run", alert.run), ...fact("Failing since", alert.failedAt)],
            };
        case "site.recovered":
            return {
                event: alert.event,
                title: `Site ${chatSafeText(alert.site)} recovered`,
                summary: `The ${chatSafeText(alert.run)} ran again for site ${chatSafeText(alert.site)}; its work moves again. Nothing to do.`,
                facts: [...fact("Site", alert.site), ...fact("Run", alert.run), ...fact("Failing since", alert.failedAt), ...fact("Recovered at", alert.recoveredAt)],
            };
        case "intake.rowRefused":
            return {
                event: alert.event,
                title: `Intake row refused its status (site ${chatSafeText(alert.site)})`,
                summary:
                    `Smartsheet refused to write "${chatSafeText(alert.status)}" onto intake row ${alert.intakeRowId} (job ${alert.jobKey}): ${chatSafeText(alert.message)}. ` +
                    `Unlock the row or give the token's user edit rights to it; the sweep tries again.`,
                facts: [
                    ...fact("Site", alert.site),
                    ...fact("Job", alert.jobKey),
                    ...fact("Intake sheet", alert.intakeSheetId),
                    ...fact("Intake row", alert.intakeRowId),
                    ...fact("Smartsheet error", alert.errorCode),
                    ...fact("Refused at", alert.refusedAt),
                ],
            };
        case "webhook.disabled":
            return {
                event: alert.event,
                title: `Intake webhook of site ${chatSafeText(alert.site)} is off`,
                summary: chatSafeText(alert.reason),
                facts: [...fact("Site", alert.site), ...fact("Webhook", alert.webhookId), ...fact("Status", alert.status), ...fact("Found at", alert.foundAt)],
            };
        case "jobs.orphaned":
            return {
                event: alert.event,
                title: `Jobs of intake sheet ${alert.intakeSheetId} belong to no site`,
                summary: chatSafeText(alert.reason),
                facts: [...fact("Intake sheet", alert.intakeSheetId), ...fact("Active jobs", alert.activeJobs), ...fact("Found at", alert.foundAt)],
            };
    }
}

/** Slack's limits on what its incoming webhooks take (Block Kit). */
const SLACK_LIMITS = { headerText: 150, sectionText: 3000, fieldText: 2000, fields: 10, blocks: 50, fallbackText: 3000 } as const;

/** Slack's control characters in text, as the entities Slack asks for (`&amp;`, `&lt;`, `&gt;`): nothing is parsed as a mention or a link. */
function slackEscaped(text: string): string {
    return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** Slack's incoming-webhook message: `text` for notifications and clients without blocks, `blocks` for the layout. */
function slackBody(message: ChatMessage): object {
    const mrkdwn = (text: string, room: number) => ({ type: "mrkdwn", text: fitted(slackEscaped(text), room) });
    const blocks: object[] = [
        { type: "header", text: { type: "plain_text", text: fitted(message.title, SLACK_LIMITS.headerText), emoji: true } },
        { type: "section", text: mrkdwn(message.summary, SLACK_LIMITS.sectionText) },
    ];
    if (message.facts.length > 0) {
        blocks.push({
            type: "section",
            fields: message.facts.slice(0, SLACK_LIMITS.fields).map(([label, value]) => ({ type: "mrkdwn", text: fitted(`*${slackEscaped(label)}*\n${slackEscaped(value)}`, SLACK_LIMITS.fieldText) })),
        });
    }
    if (message.link) {
        blocks.push({ type: "section", text: { type: "mrkdwn", text: `<${message.link.url}|${slackEscaped(message.link.title)}>` } });
    }
    blocks.push({ type: "context", elements: [{ type: "mrkdwn", text: `Sheetwright · ${message.event}` }] });
    return { text: fitted(slackEscaped(`${message.title}: ${message.summary}`), SLACK_LIMITS.fallbackText), blocks };
}

/**
 * Text for an Adaptive Card's TextBlock or fact: the markdown Teams renders there (`**`, `_`,
 * `[x](y)`, a leading `- ` or `1. ` list) and the `{{DATE()}}` functions made plain characters.
 * Markup characters become their full-width twins, as `chatSafeText` does for chat tools.
 */
function cardText(text: string): string {
    return text
        .replace(/[*_[\]`~#{}\\]/g, (character) => String.fromCodePoint(character.codePointAt(0)! + 0xfee0))
        .replace(/^(\s*)([-+]|\d+\.)(?=\s)/, (_, space: string, marker: string) => space + marker.replace(/[-+.]/g, (character) => String.fromCodePoint(character.codePointAt(0)! + 0xfee0)));
}

/** The message a Teams workflow ("When a Teams webhook request is received") posts: one Adaptive Card 1.4 in a message envelope. */
function teamsBody(message: ChatMessage): object {
    return {
        type: "message",
        attachments: [
            {
                contentType: "application/vnd.microsoft.card.adaptive",
                contentUrl: null,
                content: {
                    $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
                    type: "AdaptiveCard",
                    version: "1.4",
                    msteams: { width: "Full" },
                    body: [
                        { type: "TextBlock", text: cardText(message.title), weight: "Bolder", size: "Medium", wrap: true },
                        { type: "TextBlock", text: cardText(message.summary), wrap: true },
                        ...(message.facts.length > 0 ? [{ type: "FactSet", facts: message.facts.map(([title, value]) => ({ title: cardText(title), value: cardText(value) })) }] : []),
                        { type: "TextBlock", text: `Sheetwright · ${message.event}`, isSubtle: true, size: "Small", wrap: true },
                    ],
                    ...(message.link ? { actions: [{ type: "Action.OpenUrl", title: cardText(message.link.title), url: message.link.url }] } : {}),
                },
            },
        ],
    };
}

/** `text` within `room` UTF-16 units, cut with an ellipsis (on a code point boundary) when longer. */
function fitted(text: string, room: number): string {
    if (text.length <= room) return text;
    let cut = room - 1;
    if (/[\uDC00-\uDFFF]/.test(text[cut] ?? "")) cut -= 1;
    return `${text.slice(0, cut)}…`;
}
