import { describe, expect, it } from "vitest";
import type { FaultRuleInput, RunningSimulator } from "../../tools/smartsheet-sim";
import { admin, api, sdk, sheetsNamed, startTestSimulator, templateSheetId, useSimulator, type SdkClient } from "./simTestKit";

const context = useSimulator();

function copyTemplate(client: SdkClient, sim: RunningSimulator, newName: string, template = "Document Register"): Promise<any> {
    return client.sheets.copySheet({
        sheetId: templateSheetId(sim, template),
        body: { destinationType: "folder", destinationId: sim.core.anchors.productsFolderId, newName },
        queryParameters: { include: "data,cellLinks" },
    });
}

async function rejectionOf(promise: Promise<unknown>): Promise<any> {
    return promise.then(
        () => {
            throw new Error("expected the call to fail");
        },
        (error: unknown) => error,
    );
}

async function setFaults(sim: RunningSimulator, rules: FaultRuleInput[]): Promise<void> {
    expect((await admin(sim, "POST", "faults", { rules })).status).toBe(200);
}

describe("fault kinds", () => {
    it.each([
        ["rate429", 429, 4003, "Rate limit exceeded."],
        ["error4002", 500, 4002, "Server timeout exceeded. Request has failed."],
        ["error4004", 500, 4004, expect.stringContaining("Please retry your request")],
        ["error1004", 403, 1004, "You are not authorized to perform this action."],
    ] as const)("%s answers %i/%i and copies nothing", async (kind, statusCode, errorCode, message) => {
        const { sim } = context;
        await setFaults(sim, [{ op: "copySheet", kind }]);
        const error = await rejectionOf(copyTemplate(sdk(sim), sim, "Faulted"));
        expect(error).toMatchObject({ statusCode, errorCode, message });
        expect(sheetsNamed(sim, "Faulted")).toHaveLength(0);
        expect(sim.core.calls().log.at(-1)).toMatchObject({ op: "copySheet", status: statusCode, fault: kind });
    });

    it("commitThenError4002 makes the copy, then answers 500/4002: exactly one copy exists with SDK retries off", async () => {
        const { sim } = context;
        await setFaults(sim, [{ op: "copySheet", kind: "commitThenError4002" }]);
        const error = await rejectionOf(copyTemplate(sdk(sim), sim, "IND-1042 Document Register"));
        expect(error).toMatchObject({ statusCode: 500, errorCode: 4002 });
        expect(sheetsNamed(sim, "IND-1042 Document Register")).toHaveLength(1);
    });

    it("commitThenError4002 becomes a duplicate copy when the SDK re-sends on 4002", async () => {
        const { sim } = context;
        await setFaults(sim, [{ op: "copySheet", kind: "commitThenError4002" }]);
        const response = await copyTemplate(sdk(sim, { retries: 5 }), sim, "Twice");
        expect(response.message).toBe("SUCCESS");
        expect(sheetsNamed(sim, "Twice")).toHaveLength(2);
        expect(sim.core.calls().byOperation.copySheet).toBe(2);
    });

    it("commitThenHang makes the copy and never answers; the client times out", async () => {
        const { sim } = context;
        await setFaults(sim, [{ op: "copySheet", kind: "commitThenHang" }]);
        const started = Date.now();
        const error = await rejectionOf(
            fetch(new URL(`sheets/${templateSheetId(sim, "Approvals")}/copy`, sim.baseUrl), {
                method: "POST",
                headers: { Authorization: "Bearer sim-token", "Content-Type": "application/json" },
                body: JSON.stringify({ destinationType: "folder", destinationId: sim.core.anchors.productsFolderId, newName: "Hung" }),
                signal: AbortSignal.timeout(150),
            }),
        );
        expect(error).toMatchObject({ name: "TimeoutError" });
        expect(Date.now() - started).toBeGreaterThanOrEqual(140);
        expect(sheetsNamed(sim, "Hung")).toHaveLength(1);
        expect(sim.core.calls().log.at(-1)).toMatchObject({ op: "copySheet", status: null, fault: "commitThenHang" });
    });

    it("commitThenHang leaves the SDK waiting until the server closes, and close() does not wait for it", async () => {
        const sim = await startTestSimulator();
        await sim.core.setFaults([{ op: "copySheet", kind: "commitThenHang" }]);
        const pending = copyTemplate(sdk(sim), sim, "Hung by SDK").then(
            () => "answered",
            () => "failed",
        );
        const raced = await Promise.race([pending, new Promise((resolve) => setTimeout(resolve, 150, "timed out"))]);
        expect(raced).toBe("timed out");
        expect(sheetsNamed(sim, "Hung by SDK")).toHaveLength(1);
        const closing = Date.now();
        await sim.close();
        expect(Date.now() - closing).toBeLessThan(1_000);
        expect(await pending).toBe("failed");
    });

    it("delay waits delayMs, then answers normally", async () => {
        const { sim } = context;
        await setFaults(sim, [{ op: "getSheet", kind: "delay", delayMs: 120 }]);
        const started = Date.now();
        const sheet = await sdk(sim).sheets.getSheet({ sheetId: sim.core.anchors.intakeSheetId });
        expect(Date.now() - started).toBeGreaterThanOrEqual(115);
        expect(sheet.name).toBe("Product Intake");
    });

    it("html502 answers a text/html 502 the SDK does not retry, and copies nothing", async () => {
        const { sim } = context;
        await setFaults(sim, [{ op: "copySheet", kind: "html502", times: 3 }]);
        const raw = await api(sim, "POST", `sheets/${templateSheetId(sim, "Suppliers")}/copy`, {
            destinationType: "folder",
            destinationId: sim.core.anchors.productsFolderId,
            newName: "Gateway",
        });
        expect(raw.status).toBe(502);
        expect(raw.contentType).toBe("text/html");
        expect(raw.body).toContain("502 Bad Gateway");

        const error = await rejectionOf(copyTemplate(sdk(sim, { retries: 5 }), sim, "Gateway"));
        expect(error.statusCode).toBe(502);
        expect(error.errorCode).toBeUndefined();
        expect(error.message).toContain("502 Bad Gateway");
        expect(sim.core.calls().byOperation.copySheet).toBe(2);
        expect(sheetsNamed(sim, "Gateway")).toHaveLength(0);
    });
});

describe("fault rule targeting", () => {
    it("applies to the next `times` calls of the op, then stops", async () => {
        const { sim } = context;
        await setFaults(sim, [{ op: "getSheet", kind: "error4004", times: 2 }]);
        const path = `sheets/${sim.core.anchors.intakeSheetId}`;
        expect((await api(sim, "GET", `folders/${sim.core.anchors.productsFolderId}/children`)).status).toBe(200);
        expect((await api(sim, "GET", path)).status).toBe(500);
        expect((await api(sim, "GET", path)).status).toBe(500);
        expect((await api(sim, "GET", path)).status).toBe(200);
    });

    it("lets `skip` matching calls pass first", async () => {
        const { sim } = context;
        await setFaults(sim, [{ op: "copySheet", kind: "error4002", skip: 2 }]);
        const client = sdk(sim);
        await copyTemplate(client, sim, "First");
        await copyTemplate(client, sim, "Second");
        expect(await rejectionOf(copyTemplate(client, sim, "Third"))).toMatchObject({ errorCode: 4002 });
        expect((await copyTemplate(client, sim, "Fourth")).message).toBe("SUCCESS");
    });

    it("applies only to calls whose path, query or body contains `match`", async () => {
        const { sim } = context;
        await setFaults(sim, [{ op: "copySheet", kind: "commitThenError4002", match: "Document Register" }]);
        const client = sdk(sim);
        expect((await copyTemplate(client, sim, "P-1 Approvals", "Approvals")).message).toBe("SUCCESS");
        expect(await rejectionOf(copyTemplate(client, sim, "P-1 Document Register"))).toMatchObject({ errorCode: 4002 });
        expect(sheetsNamed(sim, "P-1 Document Register")).toHaveLength(1);

        const sheetId = sim.core.anchors.intakeSheetId;
        await setFaults(sim, [{ op: "getSheet", kind: "error4004", match: "rowsModifiedSince" }]);
        expect((await api(sim, "GET", `sheets/${sheetId}`)).status).toBe(200);
        expect((await api(sim, "GET", `sheets/${sheetId}?rowsModifiedSince=2024-01-01T00:00:00Z`)).status).toBe(500);
    });

    it("applies a '*' rule to any operation", async () => {
        const { sim } = context;
        await setFaults(sim, [{ op: "*", kind: "rate429", times: 2 }]);
        expect((await api(sim, "GET", `folders/${sim.core.anchors.productsFolderId}/children`)).status).toBe(429);
        expect((await api(sim, "GET", `sheets/${sim.core.anchors.intakeSheetId}/summary`)).status).toBe(429);
        expect((await api(sim, "GET", `sheets/${sim.core.anchors.intakeSheetId}/summary`)).status).toBe(200);
    });

    it("lists active rules with remaining counts, replaces them on POST and clears them with an empty list", async () => {
        const { sim } = context;
        await setFaults(sim, [
            { op: "copySheet", kind: "error4002", times: 3, skip: 1 },
            { op: "getSheet", kind: "delay", delayMs: 5 },
        ]);
        await api(sim, "GET", `sheets/${sim.core.anchors.intakeSheetId}`);
        const listed = (await admin(sim, "GET", "faults")).body.rules;
        expect(listed).toEqual([{ op: "copySheet", kind: "error4002", times: 3, delayMs: 0, skip: 1, remaining: 3, skipRemaining: 1 }]);

        await setFaults(sim, [{ op: "addRows", kind: "error4004" }]);
        expect((await admin(sim, "GET", "faults")).body.rules.map((rule: { op: string }) => rule.op)).toEqual(["addRows"]);
        await setFaults(sim, []);
        expect((await admin(sim, "GET", "faults")).body.rules).toEqual([]);
        expect((await admin(sim, "POST", "faults", { rules: [{ op: "copySheet", kind: "explode" }] })).status).toBe(400);
        expect((await admin(sim, "POST", "faults", { rules: [{ op: "renameSheet", kind: "rate429" }] })).status).toBe(400);
    });
});
