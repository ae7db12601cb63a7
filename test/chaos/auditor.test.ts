import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { TableClient } from "@azure/data-tables";
import { afterEach, describe, expect, inject, it } from "vitest";
import { startSimulator, type RunningSimulator } from "../../tools/smartsheet-sim";
import { audit, foreignFormulas, readWorld, type AuditedWebhooks, type AuditInput, type Finding } from "../../tools/chaos/auditor";

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

describe("the invariants of the faults chaos draws since #18", () => {
    /** A fresh simulator and an empty Jobs table: a world with no jobs, where only the new inputs can make findings. */
    async function emptyWorld(): Promise<AuditInput> {
        sim = await startSimulator({ port: 0, rateLimit: { requests: 1000, windowMs: 15_000 } });
        const connection = inject("azuriteConnectionString");
        const table = `audit${Date.now()}${Math.floor(Math.random() * 1000)}`;
        await TableClient.fromConnectionString(connection, table, { allowInsecureConnection: true }).createTable();
        return { simAdminUrl: sim.adminUrl, storageConnectionString: connection, jobsTable: table, requests: [], alerts: [], permanentFaultsPlanned: false };
    }
    const details = (findings: Finding[]) => findings.map((finding) => `[${finding.category}] ${finding.detail}`);

    it("regression chaos seed 26120303 schedule 397 folder of a job whose status is unreadable counted an orphan: an open job whose status cannot be read owns what it made; a folder no job names is still an orphan", async () => {
        const input = await emptyWorld();
        const { anchors } = sim!.core;
        const consumer = sim!.core.state().folders.find((folder) => folder.parentId === anchors.productsFolderId && folder.name === "Consumer")!;
        for (const name of ["CON-7 Frother", "Someone's folder"]) {
            const response = await fetch(new URL(`folders/${consumer.id}/folders`, sim!.baseUrl), {
                method: "POST",
                headers: { authorization: "Bearer sim-token", "content-type": "application/json" },
                body: JSON.stringify({ name }),
            });
            expect(response.ok).toBe(true);
        }
        const jobs = TableClient.fromConnectionString(input.storageConnectionString, input.jobsTable, { allowInsecureConnection: true });
        await jobs.createEntity({ partitionKey: String(anchors.intakeSheetId), rowKey: "7", kind: "job", productCode: "CON-7", productName: "Frother", productLine: "Consumer", state: "running" });

        const { findings, states } = await audit({ ...input, requests: [{ rowId: 7, code: "CON-7", valid: true, deleted: true, withdrawn: false, statusUnreadable: true }] });

        expect(states.open).toBe(1);
        expect(details(findings)).toEqual([`[orphans] folder "Someone's folder" (${sim!.core.state().folders.find((folder) => folder.name === "Someone's folder")!.id}) belongs to no job`]);
    });

    it("finds two alerts for one parking a duplicate, and one alert each for two parkings of a job fine", async () => {
        const input = await emptyWorld();
        const alert = (parkedAt: string) => ({ event: "job.parked", jobKey: "1-2", parkedAt });
        const twice = await audit({ ...input, alerts: [alert("2026-01-01T00:00:00.000Z"), alert("2026-01-01T00:00:00.000Z")] });
        expect(details(twice.findings)).toEqual([expect.stringMatching(/^\[duplicates\] 2 alerts for one parking$/)]);
        const twoParkings = await audit({ ...input, alerts: [alert("2026-01-01T00:00:00.000Z"), alert("2026-01-01T00:05:00.000Z")] });
        expect(twoParkings.findings).toEqual([]);
    });

    it("finds a rolling window of the app token's calls over the limit, and not one at the limit or another token's", async () => {
        const input = await emptyWorld();
        const call = (token: string) => fetch(new URL(`sheets/${sim!.core.anchors.intakeSheetId}`, sim!.baseUrl), { headers: { authorization: `Bearer ${token}` } });
        for (let i = 0; i < 4; i += 1) await call("sim-token");
        const atLimit = await audit({ ...input, rateLimit: { requests: 4, windowMs: 15_000, tokens: ["sim-token"] } });
        expect(atLimit.findings).toEqual([]);
        await call("sim-token");
        const over = await audit({ ...input, rateLimit: { requests: 4, windowMs: 15_000, tokens: ["sim-token"] } });
        expect(details(over.findings)).toEqual([expect.stringMatching(/^\[invariantFailures\] 5 calls in the 15 s from .*, over the limit of 4$/)]);
        const otherToken = await audit({ ...input, rateLimit: { requests: 4, windowMs: 15_000, tokens: ["another-token"] } });
        expect(otherToken.findings).toEqual([]);
    });

    it("finds raw control, bidi and invisible characters and forged lines in output, and passes escaped text and emoji", async () => {
        const input = await emptyWorld();
        const outputs = [
            { source: "title", text: "IND-1 \u001b]0;pwned\u0007 Pump" },
            { source: "bidi", text: "IND-1 \u202Egnp.exe" },
            { source: "zero width", text: "Zero\u200BWidth" },
            { source: "forged", text: "IND-1 Pump\nFORGED-LINE done IND-0000 forged" },
        ];
        const raw = await audit({ ...input, outputs });
        expect(raw.findings.map((finding) => finding.subject)).toEqual(["title", "bidi", "zero width", "forged"]);
        expect(raw.findings.every((finding) => finding.category === "invariantFailures")).toBe(true);
        const inert = await audit({
            ...input,
            outputs: [{ source: "cli", text: 'IND-1 "\\u001b]0;pwned\\u0007" Field Lab 👩‍🔬 Sensor\t\\u202E\nIND-2 "\\nFORGED-LINE done"' }],
        });
        expect(inert.findings).toEqual([]);
    });

    it("finds a skew beyond the allowance the skewed host did not warn of with its figure, and none when it did", async () => {
        const input = await emptyWorld();
        const warning = (seconds: string, direction: string) =>
            `[2026-12-02T02:52:51.589Z] Warning Functions.copyTemplateSheet [877e] Smartsheet budget of token 104e: this instance's clock is ${seconds} s ${direction} the storage service's (±0.01 s, from its answers). Check this host's time synchronisation.`;
        const skewedHost = { source: "host 2 log", offsetMs: 2440 };
        const quiet = await audit({ ...input, skewedHost, outputs: [{ source: "host 2 log", text: "job 1-2 queued → running" }] });
        expect(details(quiet.findings)).toEqual([expect.stringMatching(/^\[silent\] host 2's clock was 2440 ms off/)]);
        // The other host's warning, the wrong direction or figure, or only the word "skew", is not the skewed host's warning.
        for (const outputs of [
            [{ source: "host 1 log", text: warning("2.44", "ahead of") }],
            [{ source: "host 2 log", text: warning("2.44", "behind") }],
            [{ source: "host 2 log", text: warning("0.32", "ahead of") }],
            [{ source: "host 2 log", text: "Warning: clock skew of 2.5 s with the storage service" }],
        ]) {
            expect(details((await audit({ ...input, skewedHost, outputs })).findings), outputs[0]!.text).toHaveLength(1);
        }
        const warned = await audit({ ...input, skewedHost, outputs: [{ source: "host 2 log", text: `${warning("1.94", "ahead of").replace("0.01", "0.51")}\n${warning("2.44", "ahead of")}` }] });
        expect(warned.findings).toEqual([]);
        const behind = await audit({ ...input, skewedHost: { source: "host 2 log", offsetMs: -3034 }, outputs: [{ source: "host 2 log", text: warning("3.03", "behind") }] });
        expect(behind.findings).toEqual([]);
    });

    it("finds a done product's formula reaching a template sheet or another product's sheet, and passes its own sheets, a shared sheet and unused references", async () => {
        await emptyWorld();
        const { anchors } = sim!.core;
        const rest = async <T>(method: string, route: string, body: unknown): Promise<T> => {
            const response = await fetch(new URL(route, sim!.baseUrl), { method, headers: { authorization: "Bearer sim-token", "content-type": "application/json" }, body: JSON.stringify(body) });
            expect(response.ok, await response.clone().text()).toBe(true);
            return ((await response.json()) as { result: T }).result;
        };
        const state = sim!.core.state();
        const industrial = state.folders.find((folder) => folder.parentId === anchors.productsFolderId && folder.name === "Industrial")!;
        const template = (name: string) => state.sheets.find((sheet) => sheet.folderId === anchors.templateFolderId && sheet.name === name)!;
        const product = async (name: string) => (await rest<{ id: number }>("POST", `folders/${industrial.id}/folders`, { name })).id;
        const copy = async (templateName: string, folderId: number, newName: string) =>
            (await rest<{ id: number }>("POST", `sheets/${template(templateName).id}/copy?include=data`, { destinationType: "folder", destinationId: folderId, newName })).id;
        const ours = await product("IND-1 Pump");
        const risk = await copy("Risk Register", ours, "IND-1 Pump - Risk Register");
        const specifications = await copy("Specifications", ours, "IND-1 Pump - Specifications");
        const theirs = await copy("Specifications", await product("IND-0999 Legacy Pump"), "IND-0999 Legacy Pump - Specifications");
        const refer = (name: string, sourceSheetId: number) => rest("POST", `sheets/${risk}/crosssheetreferences`, { name, sourceSheetId, startColumnId: columnOf(sourceSheetId), endColumnId: columnOf(sourceSheetId) });
        const columnOf = (sheetId: number) => sim!.core.state().sheets.find((sheet) => sheet.id === sheetId)!.columns[0]!.id;
        await refer("Own", specifications);
        await refer("Shared", anchors.filingIndexSheetId);
        await refer("Template", template("Specifications").id);
        await refer("Theirs", theirs);
        const riskSheet = () => sim!.core.state().sheets.find((sheet) => sheet.id === risk)!;
        const mitigation = riskSheet().columns.find((column) => column.title === "Mitigation")!.id;
        const rows = riskSheet().rows.map((row) => row.id);
        const formulas = async (...texts: string[]) => rest("PUT", `sheets/${risk}/rows`, texts.map((formula, index) => ({ id: rows[index]!, cells: [{ columnId: mitigation, formula }] })));
        const problems = async () => {
            const world = await readWorld(sim!.adminUrl);
            return foreignFormulas(world.sheet(risk)!, new Set([risk, specifications]), world);
        };

        // Own sheets and a shared sheet (outside the template and the products): no finding, and the unused Template and Theirs neither.
        await formulas("=COUNT({Own})", "=COUNT({Shared})");
        expect(await problems()).toEqual([]);
        await formulas("=COUNT({Template})", "=COUNT({Theirs})");
        expect(await problems()).toEqual([
            expect.stringMatching(/\{Template\}, which points at "Specifications" \(\d+\), a template sheet,/),
            expect.stringMatching(/\{Theirs\}, which points at "IND-0999 Legacy Pump - Specifications" \(\d+\), a sheet of another product,/),
        ]);
    });

    it("finds a locked row that needed a status with no intake.rowRefused alert, or two; one alert, or an alert the host could not deliver, is fine", async () => {
        const input = await emptyWorld();
        const intake = sim!.core.state().sheets.find((sheet) => sheet.id === sim!.core.anchors.intakeSheetId)!;
        const rowId = intake.rows[0]!.id;
        const requests = [{ rowId, code: "IND-1", valid: true, deleted: false, withdrawn: false, locked: true }];
        const refused = `[2026-12-02T02:52:51Z] Error Functions.intakeSweep [1] job 1-${rowId}: intake row ${rowId} of site demo refused "Queued" (Smartsheet said 1050: You cannot edit a locked row.); every other row was written.`;
        const alert = { event: "intake.rowRefused", site: "demo", jobKey: `1-${rowId}`, intakeSheetId: "1", intakeRowId: String(rowId), status: "Queued", message: "locked", refusedAt: "2026-12-02T02:52:51Z" };
        const log = (text: string) => [{ source: "host 1 log", text }];
        const categories = async (alerts: unknown[], text: string) => (await audit({ ...input, requests, alerts, outputs: log(text) })).findings.filter((finding) => finding.subject === "IND-1" && finding.category !== "lost").map((finding) => finding.category);
        expect(await categories([], refused)).toEqual(["silent"]);
        expect(await categories([alert, alert], refused)).toEqual(["duplicates"]);
        expect(await categories([alert], refused)).toEqual([]);
        expect(await categories([], `${refused}\nthe alert that intake row ${rowId} refused its status did not go through (the webhook answered 503)`)).toEqual([]);
        // Never refused, nothing owed (no job at rest): nothing to name.
        expect(await categories([], "job 1-2 queued → running")).toEqual([]);
    });

    it("finds an approval with no job, or a queued job but a blank status, one sweep interval after a sweep; a rejection, a status or a started job answers it", async () => {
        const input = await emptyWorld();
        const intake = sim!.core.state().sheets.find((sheet) => sheet.id === sim!.core.anchors.intakeSheetId)!;
        const status = intake.columns.find((column) => column.title === "Status")!;
        const [first, second, third] = intake.rows.map((row) => row.id);
        const withStatus = (texts: Record<number, string>) => ({
            ...intake,
            rows: intake.rows.map((row) => ({ ...row, cells: [...row.cells.filter((cell) => cell.columnId !== status.id), { columnId: status.id, value: texts[row.id] ?? "" }] })),
        });
        const request = (rowId: number, code: string) => ({ rowId, code, valid: true, deleted: false, withdrawn: false });
        const requests = [request(first!, "A"), request(second!, "B"), request(third!, "C")];
        const wedged = await audit({ ...input, requests, approvals: { intake: withStatus({}), jobRowIds: [first!] } });
        // The Jobs table is empty, so each request is also "lost" at rest; the snapshot's findings are the invariant failures.
        const snapshotFindings = (findings: Finding[]) => findings.filter((finding) => finding.category === "invariantFailures").map((finding) => finding.subject);
        expect(snapshotFindings(wedged.findings)).toEqual(["A", "B", "C"]);
        const answered = await audit({
            ...input,
            requests,
            approvals: { intake: withStatus({ [first!]: "Queued", [second!]: "Rejected — Product Line is missing", [third!]: "Done" }), jobRowIds: [first!, third!] },
        });
        expect(snapshotFindings(answered.findings)).toEqual([]);
        // A job that started (its sweep died before writing Queued) answers the approval; its steps own the cell until Done.
        const started = await audit({ ...input, requests, approvals: { intake: withStatus({ [second!]: "Rejected — Product Line is missing" }), jobRowIds: [first!, third!], queuedRowIds: [third!] } });
        expect(snapshotFindings(started.findings)).toEqual(["C"]);
    });
});

describe("the invariants of the webhook faults chaos draws since #21", () => {
    const APP_TOKEN = "sim-token";
    let receiver: Server | undefined;
    afterEach(async () => {
        receiver?.closeAllConnections();
        await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
        receiver = undefined;
    });

    /** A simulator with webhooks a receiver that answers every challenge can enable, an empty Jobs table, and the webhook inputs of a quiet schedule. */
    async function webhookWorld(): Promise<{ input: AuditInput; webhooks: AuditedWebhooks; makeWebhook(name: string, token?: string): Promise<number> }> {
        sim = await startSimulator({ port: 0, tokens: [APP_TOKEN, "people-token"], webhooks: { debounceMs: 50 } });
        const callbackHost = await answerEveryChallenge();
        const connection = inject("azuriteConnectionString");
        const table = `audit${Date.now()}${Math.floor(Math.random() * 1000)}`;
        await TableClient.fromConnectionString(connection, table, { allowInsecureConnection: true }).createTable();
        const input: AuditInput = { simAdminUrl: sim.adminUrl, storageConnectionString: connection, jobsTable: table, requests: [], alerts: [], permanentFaultsPlanned: false };
        const intakeSheetId = sim.core.anchors.intakeSheetId;
        const webhooks: AuditedWebhooks = { intakeSheetId, appToken: APP_TOKEN, callbackHost, forged: [], approvedAtRest: [], safetyNetIntervalMs: 10_000 };
        const makeWebhook = async (name: string, token = APP_TOKEN) => {
            const call = (method: string, path: string, body: unknown) =>
                fetch(new URL(path, sim!.baseUrl), { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) }).then(
                    (response) => response.json() as Promise<{ result: { id: number; status: string } }>,
                );
            const made = await call("POST", "webhooks", { name, callbackUrl: `http://${callbackHost}/api/intake/webhook`, scope: "sheet", scopeObjectId: intakeSheetId, events: ["*.*"], version: 1 });
            const enabled = await call("PUT", `webhooks/${made.result.id}`, { enabled: true });
            expect(enabled.result.status).toBe("ENABLED");
            return made.result.id;
        };
        return { input, webhooks, makeWebhook };
    }

    async function answerEveryChallenge(): Promise<string> {
        const server = createServer((request, response) => {
            const challenge = request.headers["smartsheet-hook-challenge"];
            request.resume();
            request.on("end", () => response.writeHead(200, typeof challenge === "string" ? { "smartsheet-hook-response": challenge } : {}).end());
        });
        receiver = server;
        await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
        return `127.0.0.1:${(server.address() as AddressInfo).port}`;
    }

    const webhookFindings = (findings: Finding[]) => findings.map((finding) => `[${finding.category}] ${finding.subject}: ${finding.detail}`);

    it("passes one enabled webhook of the app named for its site and callback host, beside another token's webhook", async () => {
        const { input, webhooks, makeWebhook } = await webhookWorld();
        await makeWebhook(`Sheetwright intake default @ ${webhooks.callbackHost}`);
        await makeWebhook("Someone else's integration", "people-token");
        expect(webhookFindings((await audit({ ...input, webhooks })).findings)).toEqual([]);
    });

    it("finds a second webhook of the app on the intake sheet a duplicate, a disabled one or one under another name an invariant failure", async () => {
        const { input, webhooks, makeWebhook } = await webhookWorld();
        const name = `Sheetwright intake default @ ${webhooks.callbackHost}`;
        expect(webhookFindings((await audit({ ...input, webhooks })).findings)).toEqual([expect.stringMatching(/^\[invariantFailures\] intake webhook: no webhook named/)]);
        const first = await makeWebhook(name);
        await makeWebhook(name);
        expect(webhookFindings((await audit({ ...input, webhooks })).findings)).toEqual([expect.stringMatching(/^\[duplicates\] intake webhook: 2 webhooks of the app/)]);
        await fetch(new URL(`webhooks/${first}`, sim!.baseUrl), { method: "DELETE", headers: { authorization: `Bearer ${APP_TOKEN}` } });
        sim!.core.setWebhookStatus(sim!.core.webhookList()[0]!.id, "DISABLED_CALLBACK_FAILED");
        expect(webhookFindings((await audit({ ...input, webhooks })).findings)).toEqual([expect.stringMatching(/^\[invariantFailures\] intake webhook: the intake webhook is DISABLED_CALLBACK_FAILED at rest/)]);
    });

    it("finds a forged callback answered anything but a refusal its webhook id allows, or a sweep asked for under a forged id; refusals (403 for the app's id too, regression chaos seed 26120404 schedule 142) and a host that was down or stopping (regression chaos seed 26120405 schedule 22) pass", async () => {
        const { input, webhooks, makeWebhook } = await webhookWorld();
        const own = await makeWebhook(`Sheetwright intake default @ ${webhooks.callbackHost}`);
        const foreign = 900_000_123;
        const refused = [
            { webhookId: own, appsOwnId: true, status: 401 },
            { webhookId: foreign, appsOwnId: false, status: 403 },
            { webhookId: own, appsOwnId: true, status: null },
            // Regression chaos seed 26120404 schedule 142: just after a restart, or while Smartsheet has the webhook disabled, the receiver does not hold the app's id.
            { webhookId: own, appsOwnId: true, status: 403 },
            // Regression chaos seed 26120405 schedule 22: forged while the host was being killed, the host itself answered 503.
            { webhookId: own, appsOwnId: true, status: 503 },
            { webhookId: foreign, appsOwnId: false, status: 503 },
        ];
        const askedBy = (id: number) => [{ source: "host 1 log", text: `webhook ${id}: site default's intake sheet changed; its sweep is asked for` }];
        // A genuine callback of the app's own webhook may ask for a sweep; the forgery with its id was refused.
        expect(webhookFindings((await audit({ ...input, webhooks: { ...webhooks, forged: refused }, outputs: askedBy(own) })).findings)).toEqual([]);

        const wrongAnswers = [
            { webhookId: own, appsOwnId: true, status: 200 },
            { webhookId: foreign, appsOwnId: false, status: 400 },
            { webhookId: foreign, appsOwnId: false, status: 401 },
        ];
        const accepted = await audit({ ...input, webhooks: { ...webhooks, forged: [...refused, ...wrongAnswers] }, outputs: askedBy(foreign) });
        expect(webhookFindings(accepted.findings)).toEqual([
            `[invariantFailures] forged callback: a callback forged for the app's webhook ${own} was answered 200, not 401 or 403 or 503: a sweep may have started from it`,
            `[invariantFailures] forged callback: a callback forged for a foreign webhook ${foreign} was answered 400, not 403 or 503: a sweep may have started from it`,
            `[invariantFailures] forged callback: a callback forged for a foreign webhook ${foreign} was answered 401, not 403 or 503: a sweep may have started from it`,
            `[invariantFailures] forged callback: host 1 log: a sweep was asked for by a forged callback: webhook ${foreign}: site default's intake sheet changed; its sweep is asked for`,
        ]);
    });

    it("finds an approval typed at rest that had no job one safety-net interval later, and leaves it out of the approvals snapshot", async () => {
        const { input, webhooks, makeWebhook } = await webhookWorld();
        await makeWebhook(`Sheetwright intake default @ ${webhooks.callbackHost}`);
        const intake = sim!.core.state().sheets.find((sheet) => sheet.id === webhooks.intakeSheetId)!;
        const approvedAtRest = [
            { rowId: 7, jobAfterMs: 2_400 },
            { rowId: 8, jobAfterMs: null },
        ];
        const requests = [
            { rowId: 7, code: "IND-7", valid: true, deleted: false, withdrawn: false, typedAtRest: true },
            { rowId: 8, code: "IND-8", valid: true, deleted: false, withdrawn: false, typedAtRest: true },
        ];
        const { findings } = await audit({ ...input, requests, approvals: { intake, jobRowIds: [] }, webhooks: { ...webhooks, approvedAtRest } });
        expect(findings.filter((finding) => finding.category === "invariantFailures").map((finding) => `${finding.subject}: ${finding.detail}`)).toEqual([
            "row 8: approved at rest with the webhook on, it had no job one safety-net interval (10000 ms) later, and no sweep was fired",
        ]);
    });
});
