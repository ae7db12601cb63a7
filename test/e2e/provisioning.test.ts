import { describe, expect, it } from "vitest";
import { MAX_NAME_LENGTH } from "../../src/shared/naming/productNames";
import type { SimState } from "../../tools/smartsheet-sim";
import { startE2E, useE2E, waitFor, type E2E } from "../helpers/e2e";
import { inspectProduct, intakeRow } from "../helpers/inspectProduct";

const TEMPLATES = ["Document Register", "Translations", "Specifications", "Approvals", "Suppliers", "Change Log", "Risk Register"];

interface JobJson {
    jobKey: string;
    state: string;
    stage?: string;
    productCode: string;
    instanceId: string;
    smartsheetCalls: number;
    folderLink?: string;
    parkReason?: string;
    rejectReason?: string;
    duplicatesRemoved: unknown[];
    orchestration: { runtimeStatus: string; customStatus?: Record<string, unknown> } | null;
}

async function job(e2e: E2E, key: string): Promise<JobJson | undefined> {
    const response = await e2e.api(`jobs/${key}`);
    return response.ok ? ((await response.json()) as JobJson) : undefined;
}

async function jobsInState(e2e: E2E, state: string): Promise<JobJson[]> {
    const response = await e2e.api(`jobs?state=${state}`);
    return ((await response.json()) as { jobs: JobJson[] }).jobs;
}

function intakeKeys(state: SimState): Record<string, string> {
    const intake = state.sheets.find((sheet) => sheet.id === state.intakeSheetId)!;
    const codeColumn = intake.columns.find((column) => column.title === "Product Code")!.id;
    return Object.fromEntries(
        intake.rows.map((row) => [String(row.cells.find((cell) => cell.columnId === codeColumn)?.value ?? `row ${row.rowNumber}`), `${intake.id}-${row.id}`]),
    );
}

async function addIntakeRow(e2e: E2E, values: Record<string, string | boolean>): Promise<string> {
    const state = e2e.sim.core.state();
    const intake = state.sheets.find((sheet) => sheet.id === state.intakeSheetId)!;
    const response = await fetch(new URL(`sheets/${intake.id}/rows`, e2e.sim.baseUrl), {
        method: "POST",
        headers: { authorization: "Bearer sim-token", "content-type": "application/json" },
        body: JSON.stringify([
            {
                toBottom: true,
                cells: Object.entries(values).map(([title, value]) => ({
                    columnId: intake.columns.find((column) => column.title === title)!.id,
                    value,
                })),
            },
        ]),
    });
    const body = (await response.json()) as { result: Array<{ id: number }> };
    return `${intake.id}-${body.result[0]!.id}`;
}

async function instancesOf(e2e: E2E, prefix: string): Promise<unknown[]> {
    const response = await e2e.durable(`instances/?instanceIdPrefix=${prefix}`);
    return (await response.json()) as unknown[];
}

function waitUntilDone(e2e: E2E, count: number, timeoutMs = 60_000): Promise<JobJson[]> {
    return waitFor(async () => {
        const done = await jobsInState(e2e, "done");
        return done.length >= count ? done : undefined;
    }, `${count} jobs done`, timeoutMs);
}

// The tests run side by side, each on its own host and simulator.
describe.concurrent("provisioning end to end: local Functions host, Azurite, Smartsheet simulator", { timeout: 120_000 }, () => {
    const stack = useE2E(startE2E);

    it("provisions every approved intake row: folder, seven named sheets, own references, code, filing row, Done", async ({ expect, onTestFinished }) => {
        const e2e = await stack.start(undefined, { onTestFinished });
        await e2e.fire("intakeSweep");
        const done = await waitUntilDone(e2e, 3);
        const state = e2e.sim.core.state();
        for (const finished of done) {
            const product = inspectProduct(state, finished.productCode);
            expect(product.folders).toHaveLength(1);
            const parent = state.folders.find((folder) => folder.id === product.folder!.parentId)!;
            expect(["Industrial", "Consumer"]).toContain(parent.name);
            expect(product.sheets).toHaveLength(7);
            for (const template of TEMPLATES) {
                expect(product.sheets.filter((sheet) => sheet.name.endsWith(` - ${template}`))).toHaveLength(1);
            }
            for (const sheet of product.sheets) {
                expect(sheet.name.startsWith(`${finished.productCode} `)).toBe(true);
                expect(sheet.name.length).toBeLessThanOrEqual(MAX_NAME_LENGTH);
            }
            expect(product.formulaCount).toBeGreaterThanOrEqual(3);
            expect(product.foreignFormulas).toEqual([]);
            expect(product.brokenFormulas).toEqual([]);
            expect(product.productCodeValues).toEqual([finished.productCode]);
            expect(product.filingRows).toHaveLength(1);
            expect(intakeRow(state, finished.productCode)).toMatchObject({ Status: "Done", Folder: finished.folderLink });
            expect(finished.smartsheetCalls).toBeGreaterThan(0);
            expect(finished.smartsheetCalls).toBeLessThanOrEqual(23);
            const completed = await waitFor(async () => {
                const found = await job(e2e, finished.jobKey);
                return found?.orchestration?.runtimeStatus === "Completed" ? found : undefined;
            }, `${finished.jobKey}'s orchestration to complete`);
            expect(completed.orchestration?.customStatus).toEqual({
                state: "done",
                stage: "register",
                sheetsDone: 7,
                sheetsTotal: 7,
                attempt: 1,
                recoveries: 0,
                jobKey: finished.jobKey,
            });
        }
        expect(e2e.sim.core.calls().byOperation.copySheet).toBe(21);
        // The configuration is logged at start, the token never is.
        expect(e2e.host.logs.some((line) => line.includes('Sheetwright configuration: {"SMARTSHEET_ACCESS_TOKEN":"(set)"'))).toBe(true);
        expect(e2e.host.logs.filter((line) => line.includes(e2e.settings.SMARTSHEET_ACCESS_TOKEN!))).toEqual([]);
    });

    it("changes nothing when swept twice, every message is delivered three times and every activity runs twice", async ({ expect, onTestFinished }) => {
        const e2e = await stack.start({ duplicateActivities: "sequential" }, { onTestFinished });
        await e2e.fire("intakeSweep");
        await e2e.fire("intakeSweep");
        const keys = Object.values(intakeKeys(e2e.sim.core.state()));
        for (const key of keys) {
            const [pk, rk] = key.split("-");
            for (let delivery = 0; delivery < 2; delivery++) await e2e.sendRaw(JSON.stringify({ v: 1, jobKey: { pk, rk } }));
        }
        const done = await waitUntilDone(e2e, 3, 90_000);
        await e2e.fire("intakeSweep");

        expectEachWriteOnce(e2e, done);
        expect(e2e.sim.core.calls().byOperation.createCrossSheetReference).toBe(9);
        for (const finished of done) expect(finished.duplicatesRemoved).toEqual([]);
        expect(await instancesOf(e2e, "provision-")).toHaveLength(3);
        expect(await jobsInState(e2e, "done")).toHaveLength(3);
    });

    it("makes every write once when every activity runs twice at the same time (concurrent duplicates)", async ({ expect, onTestFinished }) => {
        const e2e = await stack.start({ duplicateActivities: "concurrent" }, { onTestFinished });
        e2e.sim.core.configure({ latencyMs: { copySheet: 100, createFolder: 100, addRows: 100, updateRows: 50 } });
        await e2e.fire("intakeSweep");
        expectEachWriteOnce(e2e, await waitUntilDone(e2e, 3, 90_000));
    });

    it("fits a long, emoji-laden product name into 50-character names and still provisions it", async ({ expect, onTestFinished }) => {
        const e2e = await stack.start(undefined, { onTestFinished });
        const name = "Ultra 🚀 Präzisions-Drehmomentschlüssel   Kalibrier-Set 👩‍🔬 mit erweiterter Garantie und Koffer";
        const key = await addIntakeRow(e2e, {
            "Product Code": "IND-7777",
            "Product Name": name,
            "Product Line": "Industrial",
            Approved: true,
        });
        await e2e.fire("intakeSweep");
        await waitFor(async () => (await job(e2e, key))?.state === "done", "the long-named product to be done");
        const product = inspectProduct(e2e.sim.core.state(), "IND-7777");
        expect(product.sheets).toHaveLength(7);
        for (const sheet of product.sheets) {
            expect(sheet.name.length).toBeLessThanOrEqual(MAX_NAME_LENGTH);
            expect(sheet.name).toMatch(/^IND-7777 Ultra 🚀 .*… - /u);
        }
        expect(product.foreignFormulas).toEqual([]);
    });

    it("rejects an intake row without a product code, says why on the row, and creates nothing", async ({ expect, onTestFinished }) => {
        const e2e = await stack.start(undefined, { onTestFinished });
        const key = await addIntakeRow(e2e, { "Product Name": "Nameless Pump", "Product Line": "Industrial", Approved: true });
        const foldersBefore = e2e.sim.core.state().folders.length;
        await e2e.fire("intakeSweep");
        const rejected = await waitFor(async () => {
            const found = await job(e2e, key);
            return found?.state === "rejected" ? found : undefined;
        }, "the row to be rejected");
        expect(rejected.rejectReason).toBe("Product Code is missing");
        const state = e2e.sim.core.state();
        const intake = state.sheets.find((sheet) => sheet.id === state.intakeSheetId)!;
        const status = intake.columns.find((column) => column.title === "Status")!.id;
        const statusOfRow = () =>
            e2e.sim.core
                .state()
                .sheets.find((sheet) => sheet.id === state.intakeSheetId)!
                .rows.find((candidate) => `${intake.id}-${candidate.id}` === key)!
                .cells.find((cell) => cell.columnId === status)?.value;
        expect(await waitFor(async () => statusOfRow(), "the intake row's status")).toBe("Rejected — Product Code is missing");
        await waitUntilDone(e2e, 3);
        expect(e2e.sim.core.state().folders.length).toBe(foldersBefore + 3);
        expect(await instancesOf(e2e, `provision-${key}`)).toHaveLength(0);
    });

    it("parks a job on a permanent error, tells the customer, and resumes at the same stage when unpark is raised", async ({ expect, onTestFinished }) => {
        const e2e = await stack.start(undefined, { onTestFinished });
        // The name rules tighten: the longest sheet names no longer fit.
        e2e.sim.core.configure({ nameLimit: 33 });
        const key = intakeKeys(e2e.sim.core.state())["CON-2201"]!;
        await e2e.fire("intakeSweep");
        const parked = await waitFor(async () => {
            const found = await job(e2e, key);
            return found?.state === "parked" && found.orchestration?.customStatus?.state === "parked" ? found : undefined;
        }, "CON-2201 to be parked");
        expect(parked.stage).toBe("copy");
        expect(parked.parkReason).toMatch(/1041/);
        await waitFor(async () => /^Stalled — .*1041/.test(String(intakeRow(e2e.sim.core.state(), "CON-2201")?.Status)) || undefined, "the intake row to say Stalled");
        expect(parked.orchestration?.runtimeStatus).toBe("Running");
        const copiedBefore = inspectProduct(e2e.sim.core.state(), "CON-2201").sheets.length;
        expect(copiedBefore).toBeLessThan(7);

        e2e.sim.core.configure({ nameLimit: 50 });
        const raised = await e2e.durable(`instances/${parked.instanceId}/raiseEvent/unpark`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ by: "test" }),
        });
        expect(raised.status).toBe(202);
        await waitFor(async () => (await job(e2e, key))?.state === "done", "CON-2201 to finish after unpark");
        const product = inspectProduct(e2e.sim.core.state(), "CON-2201");
        expect(product.folders).toHaveLength(1);
        expect(product.sheets).toHaveLength(7);
        expect(product.filingRows).toHaveLength(1);
    });

    it("starts one orchestration for ten deliveries of one message", async ({ expect, onTestFinished }) => {
        const e2e = await stack.start(undefined, { onTestFinished });
        await e2e.fire("intakeSweep");
        const key = intakeKeys(e2e.sim.core.state())["IND-1042"]!;
        const [pk, rk] = key.split("-");
        await Promise.all(Array.from({ length: 10 }, () => e2e.sendRaw(JSON.stringify({ v: 1, jobKey: { pk, rk } }))));
        await waitUntilDone(e2e, 3);
        expect(await instancesOf(e2e, `provision-${key}`)).toHaveLength(1);
        expect(e2e.host.logs.filter((line) => line.includes(`Executing 'Functions.beginAttempt'`) && line.includes(key))).toHaveLength(1);
        expect(e2e.sim.core.calls().byOperation.copySheet).toBe(21);
    });

    it("moves a malformed message to the poison queue, logs it, and changes nothing", async ({ expect, onTestFinished }) => {
        const e2e = await stack.start(undefined, { onTestFinished });
        await e2e.sendRaw('{"v":1,"jobKey":{"pk":"123"}}');
        await e2e.sendRaw("definitely not json");
        const poisoned = await waitFor(async () => {
            const messages = await e2e.peekPoison();
            return messages.length >= 2 ? messages : undefined;
        }, "two poisoned messages");
        expect(poisoned).toEqual(expect.arrayContaining(['{"v":1,"jobKey":{"pk":"123"}}', "definitely not json"]));
        expect(e2e.host.logs.some((line) => /provision message rejected/.test(line))).toBe(true);
        expect(await instancesOf(e2e, "provision-")).toHaveLength(0);
        expect(e2e.sim.core.calls().total).toBe(0);
    });

    it("serves jobs over HTTP with function keys: 401, 400, 404 and 200", async ({ expect, onTestFinished }) => {
        const e2e = await stack.start(undefined, { onTestFinished });
        await e2e.fire("intakeSweep");
        const key = intakeKeys(e2e.sim.core.state())["IND-1042"]!;
        expect((await fetch(`${e2e.host.url}/api/jobs/${key}`)).status).toBe(401);
        const malformed = await e2e.api("jobs/not-a-key");
        expect(malformed.status).toBe(400);
        expect(await malformed.json()).toMatchObject({ error: expect.stringContaining("expected <intakeSheetId>-<intakeRowId>") });
        expect((await e2e.api("jobs/123-456")).status).toBe(404);
        expect((await e2e.api("jobs?state=exploded")).status).toBe(400);
        const found = await waitFor(() => job(e2e, key), "the sweep to create the job");
        expect(found).toMatchObject({ jobKey: key, productCode: "IND-1042", intakeSheetId: key.split("-")[0] });
        const active = (await (await e2e.api("jobs")).json()) as { jobs: JobJson[] };
        expect(active.jobs.length + (await jobsInState(e2e, "done")).length).toBeGreaterThanOrEqual(3);
    });
});

/** The three seeded products made once each: 21 copies, 3 folders, 3 filing rows, nothing deleted. */
function expectEachWriteOnce(e2e: E2E, done: Array<{ productCode: string }>): void {
    const calls = e2e.sim.core.calls().byOperation;
    expect(calls.copySheet).toBe(21);
    expect(calls.createFolder).toBe(3);
    expect(calls.addRows).toBe(3);
    expect(calls.deleteSheet ?? 0).toBe(0);
    const state = e2e.sim.core.state();
    for (const finished of done) {
        const product = inspectProduct(state, finished.productCode);
        expect(product.folders).toHaveLength(1);
        expect(product.sheets).toHaveLength(7);
        expect(product.filingRows).toHaveLength(1);
    }
}
