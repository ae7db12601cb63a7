import { request } from "node:http";
import { networkInterfaces } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { startSimulator } from "../../tools/smartsheet-sim";
import { isLoopbackAddress } from "../../tools/smartsheet-sim/isLoopbackAddress";
import { admin, api, sdk, startTestSimulator, templateSheetId, useSimulator } from "./simTestKit";

const context = useSimulator();

describe("GET /__sim/state", () => {
    it("shows the anchors, also at top level, with folders and sheets in full", async () => {
        const { sim } = context;
        const state = (await admin(sim, "GET", "state")).body;
        expect(state.anchors).toEqual(sim.core.anchors);
        for (const key of ["intakeSheetId", "templateFolderId", "productsFolderId", "filingIndexSheetId"] as const) {
            expect(state[key]).toBe(sim.core.anchors[key]);
        }
        expect(state.folders[0]).toEqual({
            id: sim.core.anchors.productsFolderId,
            name: "Products",
            parentId: sim.core.anchors.workspaceId,
            permalink: expect.any(String),
            createdAt: expect.any(String),
        });
        const register = state.sheets.find((sheet: { name: string }) => sheet.name === "Document Register");
        expect(Object.keys(register)).toEqual([
            "id",
            "name",
            "folderId",
            "permalink",
            "version",
            "createdAt",
            "modifiedAt",
            "columns",
            "rows",
            "crossSheetReferences",
            "summaryFields",
        ]);
        expect(register.rows[0].cells[0]).toMatchObject({ value: "DOC-001" });

        const copy = await api(sim, "POST", `sheets/${register.id}/copy`, {
            destinationType: "folder",
            destinationId: sim.core.anchors.productsFolderId,
            newName: "Copy",
        });
        const copied = sim.core.state().sheets.find((sheet) => sheet.id === copy.body.result.id);
        expect(copied).toMatchObject({ copiedFromSheetId: register.id, folderId: sim.core.anchors.productsFolderId });
    });
});

describe("call log", () => {
    it("counts every call by operation, rejected ones included, and resets to zero", async () => {
        const { sim } = context;
        const client = sdk(sim);
        await client.sheets.getSheet({ sheetId: sim.core.anchors.intakeSheetId });
        await client.folders.getFolderChildren({ folderId: sim.core.anchors.productsFolderId });
        await api(sim, "GET", `sheets/${sim.core.anchors.intakeSheetId}`, undefined, { token: "wrong" });
        await api(sim, "GET", "nowhere");

        const calls = (await admin(sim, "GET", "calls")).body;
        expect(calls.total).toBe(4);
        expect(calls.byOperation).toEqual({ getSheet: 2, getFolderChildren: 1, unknown: 1 });
        expect(calls.log[0]).toEqual({
            op: "getSheet",
            method: "GET",
            path: `/2.0/sheets/${sim.core.anchors.intakeSheetId}`,
            status: 200,
            at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
            token: "sim-token",
        });
        expect(calls.log[2]).toMatchObject({ op: "getSheet", status: 401, errorCode: 1002, token: "(unknown)" });

        expect((await admin(sim, "POST", "calls/reset")).status).toBe(200);
        expect((await admin(sim, "GET", "calls")).body).toEqual({ total: 0, byOperation: {}, byToken: {}, log: [] });
        expect(sim.core.calls().total).toBe(0);
    });

    it("records the query string of a call", async () => {
        const { sim } = context;
        await sdk(sim).folders.getFolderChildren({
            folderId: sim.core.anchors.productsFolderId,
            queryParameters: { childrenResourceTypes: "sheets,folders", maxItems: 100 },
        });
        expect(sim.core.calls().log[0]?.query).toBe("childrenResourceTypes=sheets,folders&maxItems=100");
    });
});

describe("run-time config", () => {
    it("applies a lowered name limit at once, in the message too", async () => {
        const { sim } = context;
        const config = await admin(sim, "POST", "config", { nameLimit: 30 });
        expect(config.body.nameLimit).toBe(30);
        const response = await api(sim, "PUT", `sheets/${templateSheetId(sim, "Suppliers")}`, { name: "x".repeat(31) });
        expect(response.body.message).toBe("The value for sheet.name must be 30 characters in length or less, but was 31.");
        expect((await admin(sim, "GET", "config")).body.nameLimit).toBe(30);
    });

    it("changes the rate limit and per-operation latency of a running simulator", async () => {
        const { sim } = context;
        await admin(sim, "POST", "config", { rateLimit: { requests: 2, windowMs: 60_000 }, latencyMs: { getSummary: 60 } });
        const path = `sheets/${templateSheetId(sim, "Document Register")}/summary`;
        const started = Date.now();
        expect((await api(sim, "GET", path)).status).toBe(200);
        expect(Date.now() - started).toBeGreaterThanOrEqual(55);
        expect((await api(sim, "GET", path)).status).toBe(200);
        expect((await api(sim, "GET", path)).status).toBe(429);
        expect(sim.core.configure({ rateLimit: { requests: 100, windowMs: 60_000 } }).rateLimit.requests).toBe(100);
        expect((await api(sim, "GET", path)).status).toBe(200);
        expect((await admin(sim, "POST", "config", { latencyMs: { renameSheet: 1 } })).status).toBe(400);
    });

    it("starts with Smartsheet's limits and latencies of copySheet 25 ms, other writes 8, reads 3", async () => {
        const defaults = await startSimulator({ port: 0 });
        try {
            expect(defaults.core.config()).toMatchObject({
                nameLimit: 50,
                rateLimit: { requests: 300, windowMs: 60_000 },
                latencyMs: { copySheet: 25, updateSheet: 8, createFolder: 8, getSheet: 3, getFolderChildren: 3 },
            });
        } finally {
            await defaults.close();
        }
    });
});

describe("POST /__sim/reset", () => {
    it("restores the seeded workspace with the same ids and clears faults, calls and config", async () => {
        const { sim } = context;
        const before = sim.core.state();
        await api(sim, "POST", `folders/${sim.core.anchors.productsFolderId}/folders`, { name: "Extra" });
        await api(sim, "DELETE", `sheets/${templateSheetId(sim, "Approvals")}`);
        sim.core.setFaults([{ op: "getSheet", kind: "error4004" }]);
        sim.core.configure({ nameLimit: 10 });

        const reset = await admin(sim, "POST", "reset");
        expect(reset.body.anchors).toEqual(before.anchors);
        const after = sim.core.state();
        const ids = (state: typeof before) => ({
            folders: state.folders.map((folder) => folder.id),
            sheets: state.sheets.map((sheet) => [sheet.id, sheet.columns.map((column) => column.id)]),
        });
        expect(ids(after)).toEqual(ids(before));
        expect(sim.core.faults()).toEqual([]);
        expect(sim.core.calls().total).toBe(0);
        expect(sim.core.config().nameLimit).toBe(50);
    });

    it("gives every simulator the same seed ids", async () => {
        const other = await startTestSimulator();
        try {
            expect(other.core.anchors).toEqual(context.sim.core.anchors);
        } finally {
            await other.close();
        }
    });
});

describe("admin access", () => {
    it("accepts only loopback callers", () => {
        for (const address of ["127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1"]) expect(isLoopbackAddress(address)).toBe(true);
        for (const address of ["10.0.0.7", "192.168.1.20", "::ffff:10.0.0.7", "fe80::1", "2001:db8::1", "", undefined, "localhost"]) {
            expect(isLoopbackAddress(address)).toBe(false);
        }
    });

    it("answers 403/1004 to a caller on a non-loopback address", async (test) => {
        const external = Object.values(networkInterfaces())
            .flat()
            .find((entry) => entry?.family === "IPv4" && !entry.internal)?.address;
        if (!external) test.skip();
        const sim = await startTestSimulator({ host: "0.0.0.0" });
        try {
            const response = await fetch(`http://${external}:${sim.port}/__sim/state`);
            expect(response.status).toBe(403);
            expect(await response.json()).toMatchObject({ errorCode: 1004 });
            expect((await fetch(`http://127.0.0.1:${sim.port}/__sim/state`)).status).toBe(200);
        } finally {
            await sim.close();
        }
    });

    it("refuses a web page in the developer's browser: a request with an Origin, or a Host that names another machine", async () => {
        const { sim } = context;
        const fromPage = await fetch(new URL("reset", sim.adminUrl), { method: "POST", headers: { origin: "https://attacker.example" } });
        expect(fromPage.status).toBe(403);
        expect(await fromPage.json()).toMatchObject({ errorCode: 1004 });
        const rebound = await new Promise<number>((resolve, reject) => {
            const url = new URL("state", sim.adminUrl);
            const req = request({ host: url.hostname, port: url.port, path: url.pathname, headers: { host: `rebound.attacker.example:${url.port}` } }, (res) => {
                res.resume();
                resolve(res.statusCode ?? 0);
            });
            req.on("error", reject);
            req.end();
        });
        expect(rebound).toBe(403);
        expect((await fetch(new URL("state", sim.adminUrl))).status).toBe(200);
    });

    it("refuses a body over 4 MiB with 413 and still answers", async () => {
        const { sim } = context;
        const response = await fetch(new URL("faults", sim.adminUrl), { method: "POST", body: "x".repeat(5 * 1024 * 1024) });
        expect(response.status).toBe(413);
    });

    it("needs no token", async () => {
        const { sim } = context;
        expect((await fetch(new URL("calls", sim.adminUrl))).status).toBe(200);
        expect((await admin(sim, "GET", "nothing")).status).toBe(404);
    });
});

describe("close()", () => {
    it("stops accepting connections", async () => {
        const sim = await startTestSimulator();
        await sim.close();
        await sleep(10);
        await expect(fetch(new URL("state", sim.adminUrl))).rejects.toThrow();
    });
});
