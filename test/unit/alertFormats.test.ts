import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { WebhookAlertChannel, type Alert, type WebhookOptions } from "../../src/shared/alerts/AlertChannel";
import { AlertDeliveryError, afterFailure, alertRetryPolicy, isPermanentStatus } from "../../src/shared/alerts/delivery";

/** Customer text that tries every trick a chat tool would act on. */
const HOSTILE = "Pump <!channel> @here *now* _it_ ~x~ `code` [click](https://evil.example) <https://evil.example|boss> & {{DATE(2017-02-14T06:08:39Z,SHORT)}} # head";

const alerts: Alert[] = [
    { event: "job.parked", site: "acme", jobKey: "4583173393803140-1042", productCode: "IND-1042", productName: HOSTILE, stage: "copy", reason: `Smartsheet refused the name: ${HOSTILE}`, recoveries: 2, parkedAt: "2026-12-01T10:00:00.000Z" },
    { event: "site.failed", site: "globex", run: "intake sweep", reason: `Smartsheet refused the token in SMARTSHEET_TOKEN_GLOBEX: ${HOSTILE}`, failedAt: "2026-12-01T10:00:00.000Z" },
    { event: "site.recovered", site: "globex", run: "intake sweep", failedAt: "2026-12-01T10:00:00.000Z", recoveredAt: "2026-12-01T11:00:00.000Z" },
    { event: "intake.rowRefused", site: "acme", jobKey: "1-2", intakeSheetId: "1", intakeRowId: "2", status: "Stalled — x", errorCode: 1004, message: HOSTILE, refusedAt: "2026-12-01T10:00:00.000Z" },
    { event: "convergence.parked", site: "acme", jobKey: "4583173393803140-1042", productCode: "IND-1042", productName: HOSTILE, to: "0123456789abcdef0123", reason: `1 conflict: ${HOSTILE}`, parkedAt: "2026-12-01T10:00:00.000Z" },
    { event: "jobs.orphaned", intakeSheetId: "77", activeJobs: 3, reason: "intake sheet 77 belongs to no site in SITES (acme: 1)", foundAt: "2026-12-01T10:00:00.000Z" },
];

// What Slack's incoming webhooks take (Block Kit): text plus blocks of these kinds, within their limits.
const SlackText = z.strictObject({ type: z.enum(["mrkdwn", "plain_text"]), text: z.string().min(1), emoji: z.boolean().optional(), verbatim: z.boolean().optional() });
const SlackPlainText = SlackText.extend({ type: z.literal("plain_text"), text: z.string().min(1).max(150) });
const SlackBlock = z.discriminatedUnion("type", [
    z.strictObject({ type: z.literal("header"), text: SlackPlainText, block_id: z.string().optional() }),
    z
        .strictObject({
            type: z.literal("section"),
            text: SlackText.extend({ text: z.string().min(1).max(3000) }).optional(),
            fields: z.array(SlackText.extend({ text: z.string().min(1).max(2000) })).min(1).max(10).optional(),
        })
        .refine((section) => section.text !== undefined || section.fields !== undefined, "a section needs text or fields"),
    z.strictObject({ type: z.literal("context"), elements: z.array(SlackText).min(1).max(10) }),
]);
const SlackMessage = z.strictObject({ text: z.string().min(1).max(40_000), blocks: z.array(SlackBlock).min(1).max(50) });

// What a Teams workflow ("When a Teams webhook request is received") posts: an Adaptive Card (1.4+) in a message envelope.
const CardElement = z.discriminatedUnion("type", [
    z.strictObject({
        type: z.literal("TextBlock"),
        text: z.string().min(1),
        wrap: z.boolean().optional(),
        weight: z.enum(["Default", "Lighter", "Bolder"]).optional(),
        size: z.enum(["Default", "Small", "Medium", "Large", "ExtraLarge"]).optional(),
        isSubtle: z.boolean().optional(),
    }),
    z.strictObject({ type: z.literal("FactSet"), facts: z.array(z.strictObject({ title: z.string(), value: z.string() })).min(1) }),
]);
const AdaptiveCard = z.strictObject({
    $schema: z.literal("http://adaptivecards.io/schemas/adaptive-card.json").optional(),
    type: z.literal("AdaptiveCard"),
    version: z.string().regex(/^1\.([4-9]|\d\d)$/),
    msteams: z.strictObject({ width: z.literal("Full") }).optional(),
    body: z.array(CardElement).min(1),
    actions: z.array(z.strictObject({ type: z.literal("Action.OpenUrl"), title: z.string().min(1), url: z.url() })).optional(),
});
const TeamsMessage = z.strictObject({
    type: z.literal("message"),
    attachments: z
        .array(z.strictObject({ contentType: z.literal("application/vnd.microsoft.card.adaptive"), contentUrl: z.null().optional(), content: AdaptiveCard }))
        .length(1),
});

/** Every string in a JSON value. */
function strings(value: unknown): string[] {
    if (typeof value === "string") return [value];
    if (Array.isArray(value)) return value.flatMap(strings);
    if (value !== null && typeof value === "object") return Object.values(value).flatMap(strings);
    return [];
}

describe("alert bodies per ALERT_WEBHOOK_FORMAT", () => {
    const servers: Server[] = [];
    afterEach(async () => {
        for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
    });
    async function receiver(answer: (response: ServerResponse) => void = (response) => response.writeHead(204).end()) {
        const received: Array<{ body: string; headers: IncomingHttpHeaders }> = [];
        const server = createServer((request, response) => {
            const chunks: Buffer[] = [];
            request.on("data", (chunk: Buffer) => chunks.push(chunk));
            request.on("end", () => {
                received.push({ body: Buffer.concat(chunks).toString("utf8"), headers: request.headers });
                answer(response);
            });
        });
        servers.push(server);
        await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
        return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, received };
    }
    async function bodiesIn(options: WebhookOptions): Promise<unknown[]> {
        const inbox = await receiver();
        const channel = new WebhookAlertChannel(inbox.url, { appHost: "sheetwright.example.net", ...options });
        for (const alert of alerts) await channel.send(alert);
        return inbox.received.map(({ body }) => JSON.parse(body) as unknown);
    }

    it("json: today's body, unchanged (the park alert links the job and its unpark)", async () => {
        const [park, failed, recovered] = await bodiesIn({ format: "json" });
        expect(park).toMatchObject({ event: "job.parked", jobKey: "4583173393803140-1042", jobUrl: "https://sheetwright.example.net/api/jobs/4583173393803140-1042", unpark: "POST https://sheetwright.example.net/api/jobs/4583173393803140-1042/unpark" });
        expect((park as { productName: string }).productName).not.toMatch(/[@<>&*_`[\]]/);
        expect(failed).toMatchObject({ event: "site.failed", site: "globex", run: "intake sweep", failedAt: "2026-12-01T10:00:00.000Z" });
        expect(recovered).toEqual(alerts[2]);
    });

    it("slack: every alert is a message Slack's incoming webhook accepts, text and blocks, with no mention, link or markup from customer text", async () => {
        const bodies = await bodiesIn({ format: "slack" });
        expect(bodies).toHaveLength(alerts.length);
        for (const body of bodies) {
            const message = SlackMessage.parse(body);
            for (const text of strings(message)) {
                // The only link is the app's own (the job's page); nothing else may open a mention or a link.
                const withoutOwnLink = text.replace(/<https:\/\/sheetwright\.example\.net\/api\/jobs\/[\d-]+\|Open the job>/, "");
                expect(withoutOwnLink).not.toMatch(/[<>]|&(?!amp;|lt;|gt;)|@here|\*now\*|\[click\]/);
            }
        }
        const park = SlackMessage.parse(bodies[0]);
        expect(park.blocks[0]).toMatchObject({ type: "header", text: { type: "plain_text", text: expect.stringContaining("IND-1042") } });
        expect(JSON.stringify(park)).toContain("<https://sheetwright.example.net/api/jobs/4583173393803140-1042|Open the job>");
        expect(park.text).toContain("4583173393803140-1042");
    });

    it("teams: every alert is one Adaptive Card 1.4 in the message envelope a Teams workflow accepts, with no markdown or card function from customer text", async () => {
        const bodies = await bodiesIn({ format: "teams" });
        expect(bodies).toHaveLength(alerts.length);
        for (const body of bodies) {
            const message = TeamsMessage.parse(body);
            const card = message.attachments[0]!.content;
            for (const element of card.body) {
                const texts = element.type === "TextBlock" ? [element.text] : element.facts.flatMap((fact) => [fact.title, fact.value]);
                for (const text of texts) expect(text).not.toMatch(/\*\*|\[click\]|\]\(|\{\{|`|_it_|<!channel>/);
            }
        }
        const park = TeamsMessage.parse(bodies[0]).attachments[0]!.content;
        expect(park.actions).toEqual([{ type: "Action.OpenUrl", title: "Open the job", url: "https://sheetwright.example.net/api/jobs/4583173393803140-1042" }]);
        expect(park.body[2]).toMatchObject({ type: "FactSet", facts: expect.arrayContaining([{ title: "Job", value: "4583173393803140-1042" }]) });
    });

    it("signs each alert when a secret is set: an independent HMAC-SHA256 of \"<timestamp>.<raw body>\" matches the header", async () => {
        const inbox = await receiver();
        const secret = "a-test-secret-of-at-least-32-characters!";
        const sentAt = new Date("2026-12-01T10:00:00.000Z");
        await new WebhookAlertChannel(inbox.url, { format: "slack", signingSecret: secret, now: () => sentAt }).send(alerts[0]!);
        const { body, headers } = inbox.received[0]!;
        expect(headers["x-sheetwright-timestamp"]).toBe(String(sentAt.getTime() / 1000));
        // Verified with WebCrypto, not the module that signed it.
        const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
        const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${headers["x-sheetwright-timestamp"]}.${body}`));
        expect(headers["x-sheetwright-signature"]).toBe(`sha256=${Buffer.from(mac).toString("hex")}`);
        // A body changed on the way no longer matches.
        const forged = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${headers["x-sheetwright-timestamp"]}.${body.replace("IND-1042", "IND-1043")}`));
        expect(headers["x-sheetwright-signature"]).not.toBe(`sha256=${Buffer.from(forged).toString("hex")}`);
    });

    it("sends no signature headers without a secret", async () => {
        const inbox = await receiver();
        await new WebhookAlertChannel(inbox.url).send(alerts[1]!);
        expect(inbox.received[0]!.headers["x-sheetwright-signature"]).toBeUndefined();
        expect(inbox.received[0]!.headers["x-sheetwright-timestamp"]).toBeUndefined();
    });
});

describe("a webhook's answer, classed", () => {
    const servers: Server[] = [];
    afterEach(async () => {
        for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
    });
    async function answering(status: number | "never"): Promise<string> {
        const server = createServer((request, response) => {
            request.resume();
            if (status !== "never") request.on("end", () => response.writeHead(status).end());
        });
        servers.push(server);
        await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
        return `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
    }
    async function failureOf(status: number | "never"): Promise<AlertDeliveryError> {
        const error = await new WebhookAlertChannel(await answering(status), { timeoutMs: 300 }).send(alerts[1]!).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(AlertDeliveryError);
        return error as AlertDeliveryError;
    }

    it.each([400, 401, 403, 404, 410, 413, 422, 307])("%i will never succeed: permanent, with what to fix", async (status) => {
        const failure = await failureOf(status);
        expect(failure).toMatchObject({ permanent: true, status });
        expect(failure.message).toMatch(/ALERT_WEBHOOK_URL|ALERT_WEBHOOK_FORMAT/);
    });

    it.each([408, 429, 500, 502, 503])("%i may pass later: transient", async (status) => {
        expect(await failureOf(status)).toMatchObject({ permanent: false, status });
    });

    it("no answer within the timeout is transient", async () => {
        const failure = await failureOf("never");
        expect(failure).toMatchObject({ permanent: false, status: undefined });
        expect(failure.message).toMatch(/did not answer/);
    });

    it("a refused connection is transient", async () => {
        const url = await answering(204);
        await new Promise((resolve) => servers.pop()!.close(resolve));
        await expect(new WebhookAlertChannel(url).send(alerts[1]!)).rejects.toMatchObject({ permanent: false });
    });

    it("isPermanentStatus agrees with the channel for every 4xx and 5xx", () => {
        for (let status = 400; status < 600; status++) expect(isPermanentStatus(status)).toBe(status < 500 && ![408, 425, 429].includes(status));
    });
});

describe("the retry schedule of a failed alert", () => {
    const azure = alertRetryPolicy(15);
    const at = new Date("2026-12-01T10:00:00.000Z");
    const transient = { permanent: false, status: 503, reason: "the webhook answered 503" };

    it("waits 1 min after the first failed try, doubling to at most 1 h, on Azure's windows", () => {
        const waits = [1, 2, 3, 4, 5, 6, 7, 8, 9].map((tries) => {
            const next = afterFailure(transient, tries, at, azure);
            return "retryAt" in next ? (Date.parse(next.retryAt) - at.getTime()) / 60_000 : undefined;
        });
        expect(waits).toEqual([1, 2, 4, 8, 16, 32, 60, 60, 60]);
    });

    it("gives up on the tenth failed try, or on the first permanent one", () => {
        expect(afterFailure(transient, 10, at, azure)).toEqual({ givenUp: { status: 503, reason: "the webhook answered 503", tries: 10, at: at.toISOString() } });
        expect(afterFailure({ permanent: true, status: 404, reason: "gone" }, 1, at, azure)).toEqual({ givenUp: { status: 404, reason: "gone", tries: 1, at: at.toISOString() } });
    });
});
