import { createHmac } from "node:crypto";
import { createServer, type IncomingHttpHeaders } from "node:http";
import { describe, expect, it } from "vitest";
import { useE2E, waitFor } from "../helpers/e2e";
import { intake, jobIn, startRecoveryE2E } from "../helpers/recoveryKit";

/** A webhook that keeps each raw body and its headers, and answers `answer`. */
async function rawInbox() {
    const received: Array<{ raw: string; headers: IncomingHttpHeaders }> = [];
    const server = createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on("data", (chunk: Buffer) => chunks.push(chunk));
        request.on("end", () => {
            received.push({ raw: Buffer.concat(chunks).toString("utf8"), headers: request.headers });
            response.writeHead(202).end();
        });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return {
        url: `http://127.0.0.1:${(server.address() as { port: number }).port}/workflow`,
        received,
        close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
}

describe("the alert settings on the host", { timeout: 180_000 }, () => {
    const stack = useE2E(startRecoveryE2E);

    it("ALERT_WEBHOOK_FORMAT=teams and a signing secret: the park alert arrives as a signed Adaptive Card message", async () => {
        const inbox = await rawInbox();
        stack.defer(inbox.close);
        const secret = "e2e-signing-secret-0123456789abcdef";
        const e2e = await stack.start({ only: [], settings: { ALERT_WEBHOOK_URL: inbox.url, ALERT_WEBHOOK_FORMAT: "teams", ALERT_WEBHOOK_SIGNING_SECRET: secret } });
        const key = await intake(e2e).add("IND-6101", "Coolant Pump", "Industrial");
        // "<code> <name> - Document Register" is 41 characters: the copy stage parks.
        e2e.sim.core.configure({ nameLimit: 40 });
        await e2e.fire("intakeSweep");
        await jobIn(e2e, key, "parked");
        const { raw, headers } = await waitFor(async () => inbox.received[0], "the park alert");

        const body = JSON.parse(raw) as { type: string; attachments: Array<{ contentType: string; content: { type: string; body: Array<{ type: string; facts?: Array<{ title: string; value: string }> }> } }> };
        expect(body.type).toBe("message");
        expect(body.attachments[0]).toMatchObject({ contentType: "application/vnd.microsoft.card.adaptive", content: { type: "AdaptiveCard", version: "1.4" } });
        expect(body.attachments[0]!.content.body.find((element) => element.type === "FactSet")?.facts).toContainEqual({ title: "Job", value: key });
        const expected = createHmac("sha256", secret).update(`${headers["x-sheetwright-timestamp"]}.${raw}`).digest("hex");
        expect(headers["x-sheetwright-signature"]).toBe(`sha256=${expected}`);
        expect(e2e.host.logs.join("\n")).not.toContain(secret);
    });
});
