import { TableClient } from "@azure/data-tables";
import { afterEach, expect, inject, it } from "vitest";
import { startSimulator, type RunningSimulator } from "../../tools/smartsheet-sim";
import { audit, type AuditInput } from "../../tools/chaos/auditor";

let sim: RunningSimulator | undefined;
afterEach(async () => {
    await sim?.close();
    sim = undefined;
});

/** The auditor sorts what it sees into the failure counts; a wrong world must not pass. */
it("counts duplicates, lost and silent jobs, orphans and broken invariants", async () => {
    sim = await startSimulator({ port: 0 });
    const { anchors } = sim.core;
    const state = sim.core.state();
    const industrial = state.folders.find((folder) => folder.parentId === anchors.productsFolderId && folder.name === "Industrial")!;
    const createFolder = async (name: string) => {
        const response = await fetch(new URL(`folders/${industrial.id}/folders`, sim!.baseUrl), {
            method: "POST",
            headers: { authorization: "Bearer sim-token", "content-type": "application/json" },
            body: JSON.stringify({ name }),
        });
        expect(response.ok).toBe(true);
    };
    await createFolder("IND-1 Pump");
    await createFolder("IND-1 Pump");
    await createFolder("Someone's folder");

    const connection = inject("azuriteConnectionString");
    const table = `audit${Date.now()}`;
    const jobs = TableClient.fromConnectionString(connection, table, { allowInsecureConnection: true });
    await jobs.createTable();
    const pk = String(anchors.intakeSheetId);
    const job = (rowKey: string, fields: Record<string, unknown>) =>
        jobs.createEntity({ partitionKey: pk, rowKey, kind: "job", productName: "Pump", productLine: "Industrial", ...fields });
    await job("1", { productCode: "IND-1", state: "done" });
    await job("2", { productCode: "IND-2", state: "parked", parkReason: "template broken", parkedAt: "2026-01-01T00:00:00.000Z" });
    await job("3", { productCode: "IND-3", state: "running" });
    await jobs.createEntity({ partitionKey: pk, rowKey: "active-3", kind: "index", state: "running" });

    const input: AuditInput = {
        simAdminUrl: sim.adminUrl,
        storageConnectionString: connection,
        jobsTable: table,
        requests: [{ rowId: 4, code: "IND-4", valid: true, deleted: false, withdrawn: false }],
        alerts: [{ event: "job.parked", jobKey: `${pk}-9` }],
        permanentFaultsPlanned: false,
    };
    const { findings, states } = await audit(input);
    const count = (category: string) => findings.filter((finding) => finding.category === category).length;
    expect(states).toEqual({ done: 1, parked: 1, rejected: 0, open: 1 });
    expect(count("duplicates")).toBe(1);
    expect(count("lost")).toBe(2);
    expect(count("orphans")).toBe(1);
    expect(count("silent")).toBe(1);
    // Done with no sheets and no Filing Index row: seven missing sheets and the missing row.
    expect(count("invariantFailures")).toBe(8);
});
