import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { api, sdk, startTestSimulator, templateSheetId, useSimulator } from "./simTestKit";

const context = useSimulator({ tokens: ["sim-token", "other-token"] });

describe("authentication", () => {
    it("answers 401/1001 without a token and 401/1002 for an unknown one", async () => {
        const { sim } = context;
        const path = `sheets/${sim.core.anchors.intakeSheetId}`;
        expect(await api(sim, "GET", path, undefined, { token: null })).toMatchObject({
            status: 401,
            body: { errorCode: 1001, message: "An Access Token is required." },
        });
        expect(await api(sim, "GET", path, undefined, { token: "stolen" })).toMatchObject({
            status: 401,
            body: { errorCode: 1002, message: "Your Access Token is invalid." },
        });
        expect((await api(sim, "GET", path, undefined, { token: "other-token" })).status).toBe(200);
    });

    it("lets the SDK reject with {statusCode, errorCode, message, refId}", async () => {
        const { sim } = context;
        const error = await sdk(sim, { token: "stolen" })
            .sheets.getSheet({ sheetId: sim.core.anchors.intakeSheetId })
            .catch((rejection: unknown) => rejection);
        expect(error).toEqual({ statusCode: 401, errorCode: 1002, message: "Your Access Token is invalid.", refId: expect.any(String) });
    });
});

describe("not found and bad requests", () => {
    it("answers 404/1006 for unknown ids and unknown routes", async () => {
        const { sim } = context;
        for (const path of ["sheets/1111111111111111", "sheets/1111111111111111/summary", "folders/1111111111111111/children", "reports/1", "sheets/abc"]) {
            expect(await api(sim, "GET", path)).toMatchObject({ status: 404, body: { errorCode: 1006, message: "Not Found." } });
        }
        const sheetId = sim.core.anchors.intakeSheetId;
        const rowUpdate = await api(sim, "PUT", `sheets/${sheetId}/rows`, [{ id: 1111111111111111, cells: [] }]);
        expect(rowUpdate.body.errorCode).toBe(1006);
    });

    it("answers 400/1008 for a body that is not JSON", async () => {
        const { sim } = context;
        const response = await api(sim, "POST", `folders/${sim.core.anchors.productsFolderId}/folders`, undefined, { rawBody: "{name:" });
        expect(response.status).toBe(400);
        expect(response.body.errorCode).toBe(1008);
        expect(response.body.message).toMatch(/^Unable to parse request\. The following error occurred: /);
    });

    it("answers 400/1012 for a missing attribute and 400/1018 for an unusable value", async () => {
        const { sim } = context;
        const path = `folders/${sim.core.anchors.productsFolderId}/folders`;
        expect((await api(sim, "POST", path, {})).body).toMatchObject({
            errorCode: 1012,
            message: "A required object attribute is missing from your request: name.",
        });
        expect((await api(sim, "POST", path, { name: 42 })).body).toMatchObject({
            errorCode: 1018,
            message: "The value 42 was not valid for the parameter name.",
        });
    });

    it("answers 405/1122 for methods Smartsheet does not offer on a path", async () => {
        const { sim } = context;
        const sheetId = templateSheetId(sim, "Approvals");
        const [reference] = (await api(sim, "GET", `sheets/${sheetId}/crosssheetreferences`)).body.data;
        for (const method of ["PUT", "DELETE"]) {
            const response = await api(sim, method, `sheets/${sheetId}/crosssheetreferences/${reference.id}`, method === "PUT" ? { name: "x" } : undefined);
            expect(response.status).toBe(405);
            expect(response.body).toMatchObject({ errorCode: 1122, message: `Requested URL does not support this method: ${method}.` });
        }
    });
});

describe("rate limit", () => {
    it("refuses with 429/4003 past the limit in the window, without doing the work, then recovers", async () => {
        const sim = await startTestSimulator({ rateLimit: { requests: 4, windowMs: 200 }, tokens: ["sim-token", "other-token"] });
        try {
            const folderId = sim.core.anchors.productsFolderId;
            const path = `folders/${folderId}/folders`;
            for (let i = 0; i < 4; i++) expect((await api(sim, "POST", path, { name: `Ok ${i}` })).status).toBe(200);
            const refused = await api(sim, "POST", path, { name: "Refused" });
            expect(refused).toMatchObject({ status: 429, body: { errorCode: 4003, message: "Rate limit exceeded." } });
            expect(sim.core.state().folders.some((folder) => folder.name === "Refused")).toBe(false);
            expect((await api(sim, "GET", `sheets/${sim.core.anchors.intakeSheetId}`, undefined, { token: "other-token" })).status).toBe(200);

            await sleep(250);
            expect((await api(sim, "POST", path, { name: "After" })).status).toBe(200);
            expect(sim.core.calls().log.filter((call) => call.status === 429)).toHaveLength(1);
        } finally {
            await sim.close();
        }
    });

    it("is retried by the SDK, which re-sends on 4003", async () => {
        const sim = await startTestSimulator({ rateLimit: { requests: 2, windowMs: 300 } });
        try {
            const client = sdk(sim, { retries: 100 });
            const sheetId = sim.core.anchors.intakeSheetId;
            await client.sheets.getSheet({ sheetId });
            await client.sheets.getSheet({ sheetId });
            const third = await client.sheets.getSheet({ sheetId });
            expect(third.id).toBe(sheetId);
            expect(sim.core.calls().log.filter((call) => call.status === 429).length).toBeGreaterThan(0);
        } finally {
            await sim.close();
        }
    });
});
