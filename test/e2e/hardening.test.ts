import { describe, expect, it } from "vitest";
import { startE2E, useE2E } from "../helpers/e2e";

describe("the app's endpoints under hostile input", { timeout: 60_000 }, () => {
    const stack = useE2E(startE2E);

    it("prints no secret anywhere in the host's output: not the token, the storage key, nor a webhook's credentials, path or query", async () => {
        const secrets = ["hookuser", "hookpass5678", "T0SECRET/B0SECRET/xyzSecretPathKey", "code=QuerySecret42"];
        const e2e = await stack.start({
            settings: { ALERT_WEBHOOK_URL: `https://hookuser:hookpass5678@hooks.example.com/services/T0SECRET/B0SECRET/xyzSecretPathKey?code=QuerySecret42` },
        });
        await e2e.fire("intakeSweep");
        const accountKey = /AccountKey=([^;]+)/.exec(e2e.settings.AzureWebJobsStorage!)![1]!;
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        const output = e2e.host.logs.join("\n");
        expect(output).toContain("Sheetwright configuration:");
        for (const secret of [e2e.settings.SMARTSHEET_ACCESS_TOKEN!, accountKey, ...secrets]) expect(output).not.toContain(secret);
    });

    it("refuses an unpark body over 4 KB with 413 without reading it, by Content-Length or as it streams in", async () => {
        const e2e = await stack.start();
        const key = `${e2e.settings.INTAKE_SHEET_ID}-1`;
        const big = JSON.stringify({ note: "x".repeat(10_000) });
        const declared = await e2e.api(`jobs/${key}/unpark`, { method: "POST", body: big, headers: { "content-type": "application/json" } });
        expect(declared.status).toBe(413);
        const chunks = new ReadableStream<Uint8Array>({
            start(controller) {
                for (let i = 0; i < 10; i++) controller.enqueue(new TextEncoder().encode("x".repeat(1_000)));
                controller.close();
            },
        });
        const streamed = await e2e.api(`jobs/${key}/unpark`, { method: "POST", body: chunks, duplex: "half" } as RequestInit);
        expect(streamed.status).toBe(413);
        expect(e2e.host.logs.some((line) => /Error|exception/i.test(line) && /unparkJob/.test(line))).toBe(false);
    });
});
