import { createServer, type Server, type ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { chatSafeText, WebhookAlertChannel, type ParkAlert } from "../../src/shared/alerts/AlertChannel";

const alert: ParkAlert = {
    event: "job.parked",
    site: "acme",
    jobKey: "4583173393803140-1042",
    productCode: "IND-1042",
    productName: "Pump <!channel> @here *now* [click](https://evil.example) <@U123|boss>",
    stage: "copy",
    reason: "Smartsheet refused the name: `x` & <y>",
    recoveries: 0,
    parkedAt: "2026-12-01T10:00:00.000Z",
};

describe("the park alert webhook", () => {
    const servers: Server[] = [];
    afterEach(async () => {
        for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
    });
    async function receiver(answer: (response: ServerResponse, body: string) => void): Promise<{ url: string; bodies: string[] }> {
        const bodies: string[] = [];
        const server = createServer((request, response) => {
            let body = "";
            request.on("data", (chunk: Buffer) => (body += chunk.toString()));
            request.on("end", () => {
                bodies.push(body);
                answer(response, body);
            });
        });
        servers.push(server);
        await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
        return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, bodies };
    }

    it("refuses to follow a redirect: the alert goes only where it was configured to go", async () => {
        const elsewhere = await receiver((response) => response.writeHead(204).end());
        const redirecting = await receiver((response) => response.writeHead(307, { location: elsewhere.url }).end());
        await expect(new WebhookAlertChannel(redirecting.url).send(alert)).rejects.toThrow(/answered 307; redirects are not followed/);
        expect(elsewhere.bodies).toEqual([]);
    });

    it("does not read or wait for the answer's body, however large or slow it is", async () => {
        const endless = await receiver((response) => {
            response.writeHead(200, { "content-type": "text/plain" });
            response.write("x".repeat(1_000_000));
            // Never ends: a body that would hold a reader forever.
        });
        await expect(new WebhookAlertChannel(endless.url).send(alert)).resolves.toBeUndefined();
    });

    it("sends customer text as inert data: no mentions, links or markup a chat tool would act on", async () => {
        const inbox = await receiver((response) => response.writeHead(204).end());
        await new WebhookAlertChannel(inbox.url).send(alert);
        const sent = JSON.parse(inbox.bodies[0]!) as Record<string, string>;
        for (const field of [sent.productName!, sent.reason!]) expect(field).not.toMatch(/[@<>&*_`[\]]/);
        expect(sent.productName).toBe("Pump ＜!channel＞ ＠here ＊now＊ ［click］(https://evil.example) ＜＠U123｜boss＞");
        expect(sent.jobKey).toBe("4583173393803140-1042");
        expect(sent).toMatchObject({ event: "job.parked", site: "acme" });
    });

    it("sends a site failure as its own event, naming the site and the run, its reason inert", async () => {
        const inbox = await receiver((response) => response.writeHead(204).end());
        await new WebhookAlertChannel(inbox.url).send({
            event: "site.failed",
            site: "globex",
            run: "intake sweep",
            reason: "Smartsheet refused the token in SMARTSHEET_TOKEN_GLOBEX: <@U123> revoked",
            failedAt: "2026-12-01T10:00:00.000Z",
        });
        expect(JSON.parse(inbox.bodies[0]!)).toEqual({
            event: "site.failed",
            site: "globex",
            run: "intake sweep",
            reason: "Smartsheet refused the token in SMARTSHEET＿TOKEN＿GLOBEX: ＜＠U123＞ revoked",
            failedAt: "2026-12-01T10:00:00.000Z",
        });
    });

    it("keeps plain text readable and drops invisible formatting characters", () => {
        expect(chatSafeText("Hydraulic Pump Assembly")).toBe("Hydraulic Pump Assembly");
        expect(chatSafeText("Pump\u202Eexe")).toBe("Pumpexe");
    });
});
