import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import {
    AmbiguousWriteError,
    PermanentSmartsheetError,
    TransientSmartsheetError,
} from "../../src/shared/smartsheet/errors";
import { RateLimiter } from "../../src/shared/smartsheet/RateLimiter";
import { SdkSmartsheet, type SdkSmartsheetOptions } from "../../src/shared/smartsheet/SdkSmartsheet";
import type { RunningSimulator } from "../../tools/smartsheet-sim";
import { useSimulator } from "../sim/simTestKit";

const TOKEN = "sim-token";

/** The adapter as the app builds it, pointed at the simulator, with test-sized back-offs. */
function adapter(sim: RunningSimulator, options: Partial<SdkSmartsheetOptions> = {}): SdkSmartsheet {
    return new SdkSmartsheet({
        accessToken: TOKEN,
        baseUrl: sim.baseUrl,
        requestsPerMinute: 10_000,
        callTimeoutMs: 5_000,
        rateLimitBackoff: { baseMs: 100, maxMs: 1_000, maxTotalMs: 20_000 },
        idempotentRetries: { attempts: 3, baseMs: 10 },
        ...options,
    });
}

function anchors(sim: RunningSimulator) {
    const state = sim.core.state();
    const byName = (name: string) => state.sheets.find((sheet) => sheet.name === name && sheet.folderId === state.templateFolderId)!;
    return {
        templateFolderId: state.templateFolderId!,
        productsFolderId: state.productsFolderId!,
        intakeSheetId: state.intakeSheetId!,
        industrialFolderId: state.folders.find((folder) => folder.name === "Industrial")!.id,
        template: byName,
    };
}

function sheetsNamed(sim: RunningSimulator, name: string) {
    return sim.core.state().sheets.filter((sheet) => sheet.name === name);
}

describe("SdkSmartsheet against the simulator, through the official SDK", () => {
    const context = useSimulator();

    it("copies a sheet under its final name, and the copy is listed in the folder", async () => {
        const { sim } = context;
        const smartsheet = adapter(sim);
        const { template, industrialFolderId } = anchors(sim);
        const copy = await smartsheet.copySheet(template("Approvals").id, {
            destinationFolderId: industrialFolderId,
            newName: "IND-1042 Hydraulic Pump - Approvals",
            include: ["data", "cellLinks"],
        });
        expect(copy).toMatchObject({ name: "IND-1042 Hydraulic Pump - Approvals" });
        expect(copy.id).not.toBe(template("Approvals").id);
        const children = await smartsheet.listFolderChildren(industrialFolderId);
        expect(children).toContainEqual(expect.objectContaining({ id: copy.id, name: copy.name, resourceType: "sheet" }));
    });

    it("keeps the copy's formulas pointing at the template's sheets (single-sheet copies do not remap)", async () => {
        const { sim } = context;
        const smartsheet = adapter(sim);
        const { template, industrialFolderId } = anchors(sim);
        const copy = await smartsheet.copySheet(template("Approvals").id, {
            destinationFolderId: industrialFolderId,
            newName: "IND-1042 - Approvals",
            include: ["data", "cellLinks"],
        });
        const sheet = await smartsheet.getSheet(copy.id, { include: ["crossSheetReferences"] });
        expect(sheet.crossSheetReferences).toEqual([
            expect.objectContaining({ name: "Change Log Document", sourceSheetId: template("Change Log").id }),
        ]);
        const formulas = sheet.rows.flatMap((row) => row.cells.map((cell) => cell.formula).filter(Boolean));
        expect(formulas.length).toBeGreaterThan(0);
        expect(formulas.every((formula) => formula!.includes("{Change Log Document}"))).toBe(true);
    });

    it("refuses a 51-character name as permanent error 1041 and creates nothing", async () => {
        const { sim } = context;
        const smartsheet = adapter(sim);
        const { template, industrialFolderId } = anchors(sim);
        const before = sim.core.state().sheets.length;
        const error = await smartsheet
            .copySheet(template("Approvals").id, { destinationFolderId: industrialFolderId, newName: "N".repeat(51), include: ["data"] })
            .catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(PermanentSmartsheetError);
        expect(error).toMatchObject({ statusCode: 400, errorCode: 1041, operation: "copySheet" });
        expect((error as Error).message).toContain("must be 50 characters in length or less, but was 51");
        expect(sim.core.state().sheets.length).toBe(before);
    });

    it("absorbs a 429 when more requests arrive than the window allows, without failing the caller", async () => {
        const { sim } = context;
        sim.core.configure({ rateLimit: { requests: 300, windowMs: 2_000 } });
        const smartsheet = adapter(sim);
        const { templateFolderId } = anchors(sim);
        const results = await Promise.all(Array.from({ length: 301 }, () => smartsheet.listFolderChildren(templateFolderId)));
        expect(results.every((children) => children.length === 7)).toBe(true);
        const log = sim.core.calls().log;
        expect(log.filter((call) => call.status === 429).length).toBeGreaterThan(0);
        expect(smartsheet.calls().rateLimited).toBe(log.filter((call) => call.status === 429).length);
        expect(log.filter((call) => call.status === 200)).toHaveLength(301);
    });

    it("paces itself to the configured rate instead of running into 429s", async () => {
        const { sim } = context;
        sim.core.configure({ rateLimit: { requests: 20, windowMs: 60_000 } });
        let now = 0;
        // A limiter on a fake clock: 20 requests may go, the 21st has to wait a minute.
        const limiter = new RateLimiter(20, 60_000, { now: () => now, sleep: async (ms) => void (now += ms) });
        const smartsheet = adapter(sim, { limiter });
        for (let i = 0; i < 20; i++) await smartsheet.getSheet(anchors(sim).template("Suppliers").id);
        expect(now).toBe(0);
        expect(sim.core.calls().log.filter((call) => call.status === 429)).toHaveLength(0);
    });

    it("reports a copy that was made although the caller got 4002 as ambiguous, and never sends it twice", async () => {
        const { sim } = context;
        sim.core.setFaults([{ op: "copySheet", kind: "commitThenError4002", times: 1 }]);
        const smartsheet = adapter(sim);
        const { template, industrialFolderId } = anchors(sim);
        const error = await smartsheet
            .copySheet(template("Suppliers").id, { destinationFolderId: industrialFolderId, newName: "TRAP - Suppliers", include: ["data"] })
            .catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(AmbiguousWriteError);
        expect(error).toMatchObject({ kind: "transient", ambiguous: true, errorCode: 4002 });
        expect(sheetsNamed(sim, "TRAP - Suppliers")).toHaveLength(1);
        expect(sim.core.calls().byOperation.copySheet).toBe(1);
    });

    it("times out a copy whose answer never comes, and reports it as ambiguous", async () => {
        const { sim } = context;
        sim.core.setFaults([{ op: "copySheet", kind: "commitThenHang", times: 1 }]);
        const smartsheet = adapter(sim, { callTimeoutMs: 300 });
        const { template, industrialFolderId } = anchors(sim);
        const error = await smartsheet
            .copySheet(template("Suppliers").id, { destinationFolderId: industrialFolderId, newName: "HANG - Suppliers", include: [] })
            .catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(AmbiguousWriteError);
        expect(error).toMatchObject({ causeCode: "ETIMEDOUT" });
        expect(sheetsNamed(sim, "HANG - Suppliers")).toHaveLength(1);
    });

    it("re-sends a copy refused with 429 (rejected before processing), so exactly one copy exists", async () => {
        const { sim } = context;
        sim.core.setFaults([{ op: "copySheet", kind: "rate429", times: 2 }]);
        const smartsheet = adapter(sim);
        const { template, industrialFolderId } = anchors(sim);
        const copy = await smartsheet.copySheet(template("Suppliers").id, {
            destinationFolderId: industrialFolderId,
            newName: "RATE - Suppliers",
            include: [],
        });
        expect(sheetsNamed(sim, "RATE - Suppliers").map((sheet) => sheet.id)).toEqual([copy.id]);
        expect(smartsheet.calls()).toMatchObject({ total: 3, rateLimited: 2, byOperation: { copySheet: 3 } });
    });

    it("gives up on a copy still refused with 429 when its rate-limit time is spent: transient, never sent again, nothing made", async () => {
        const { sim } = context;
        sim.core.setFaults([{ op: "copySheet", kind: "rate429", times: 20 }]);
        // Back-offs of 100, 200, 400, 800 ms: the fifth send would start after the 1 s budget.
        const smartsheet = adapter(sim, { rateLimitBackoff: { baseMs: 100, maxMs: 1_000, maxTotalMs: 1_000 } });
        const { template, industrialFolderId } = anchors(sim);
        const error = await smartsheet
            .copySheet(template("Suppliers").id, { destinationFolderId: industrialFolderId, newName: "SPENT - Suppliers", include: [] })
            .catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(TransientSmartsheetError);
        expect(error).not.toBeInstanceOf(AmbiguousWriteError);
        expect(sheetsNamed(sim, "SPENT - Suppliers")).toEqual([]);
        expect(sim.core.calls().log.filter((call) => call.op === "copySheet").every((call) => call.status === 429)).toBe(true);
        expect(smartsheet.calls().byOperation.copySheet).toBeLessThanOrEqual(4);
    });

    it("re-sends an idempotent read after a 4002, and gives up with a transient error when it persists", async () => {
        const { sim } = context;
        const smartsheet = adapter(sim);
        const sheetId = anchors(sim).template("Suppliers").id;
        sim.core.setFaults([{ op: "getSheet", kind: "error4002", times: 2 }]);
        await expect(smartsheet.getSheet(sheetId)).resolves.toMatchObject({ id: sheetId });
        sim.core.setFaults([{ op: "getSheet", kind: "error4002", times: 10 }]);
        await expect(smartsheet.getSheet(sheetId)).rejects.toBeInstanceOf(TransientSmartsheetError);
    });

    it("classifies a non-JSON 502 as transient for reads and as ambiguous for copies", async () => {
        const { sim } = context;
        const smartsheet = adapter(sim);
        const { template, industrialFolderId } = anchors(sim);
        sim.core.setFaults([{ op: "getFolderChildren", kind: "html502", times: 1 }]);
        const read = await smartsheet.listFolderChildren(industrialFolderId).catch((caught: unknown) => caught);
        expect(read).toBeInstanceOf(TransientSmartsheetError);
        expect(read).not.toBeInstanceOf(AmbiguousWriteError);
        sim.core.setFaults([{ op: "copySheet", kind: "html502", times: 1 }]);
        const copy = await smartsheet
            .copySheet(template("Suppliers").id, { destinationFolderId: industrialFolderId, newName: "X", include: [] })
            .catch((caught: unknown) => caught);
        expect(copy).toBeInstanceOf(AmbiguousWriteError);
        expect(copy).toMatchObject({ statusCode: 502 });
    });

    it("classifies 403/1004, 404/1006 and a bad token as permanent", async () => {
        const { sim } = context;
        const smartsheet = adapter(sim);
        sim.core.setFaults([{ op: "getSheet", kind: "error1004", times: 1 }]);
        await expect(smartsheet.getSheet(anchors(sim).intakeSheetId)).rejects.toMatchObject({
            kind: "permanent",
            statusCode: 403,
            errorCode: 1004,
        });
        await expect(smartsheet.getSheet(1111111111111111)).rejects.toMatchObject({ kind: "permanent", statusCode: 404, errorCode: 1006 });
        const stranger = adapter(sim, { accessToken: "not-a-token-we-know" });
        await expect(stranger.getSheet(anchors(sim).intakeSheetId)).rejects.toMatchObject({
            kind: "permanent",
            statusCode: 401,
            errorCode: 1002,
        });
    });

    it("reports a refused connection as transient, not ambiguous (nothing was sent)", async () => {
        const closedPort = await new Promise<number>((resolve) => {
            const server = createServer().listen(0, "127.0.0.1", () => {
                const port = (server.address() as { port: number }).port;
                server.close(() => resolve(port));
            });
        });
        const smartsheet = new SdkSmartsheet({ accessToken: TOKEN, baseUrl: `http://127.0.0.1:${closedPort}/2.0/`, callTimeoutMs: 2_000 });
        const error = await smartsheet.createFolder(1, "Nowhere").catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(TransientSmartsheetError);
        expect(error).not.toBeInstanceOf(AmbiguousWriteError);
        expect(error).toMatchObject({ causeCode: "ECONNREFUSED" });
    });

    it("never puts the token into an error message or a log line", async () => {
        const { sim } = context;
        const secret = "tok_3c2b1a0f9e8d7c6b5a4f3e2d1c0bSECRET";
        const lines: string[] = [];
        const smartsheet = adapter(sim, { accessToken: secret, log: (line) => lines.push(line) });
        const errors: unknown[] = [];
        await smartsheet.getSheet(anchors(sim).intakeSheetId).catch((error: unknown) => errors.push(error));
        const valid = adapter(sim, { log: (line) => lines.push(line) });
        sim.core.setFaults([{ op: "getSheet", kind: "rate429", times: 1 }]);
        await valid.getSheet(anchors(sim).intakeSheetId);
        expect(errors).toHaveLength(1);
        expect(lines.length).toBeGreaterThan(0);
        for (const text of [...lines, ...errors.map((error) => `${String(error)} ${JSON.stringify(error)}`)]) {
            expect(text).not.toContain(secret);
            expect(text).not.toContain(TOKEN);
        }
    });

    it("does every port operation the app uses, with Smartsheet's answers validated", async () => {
        const { sim } = context;
        const smartsheet = adapter(sim);
        const { template, industrialFolderId, intakeSheetId } = anchors(sim);

        const folder = await smartsheet.createFolder(industrialFolderId, "IND-2000 Port Check");
        const register = await smartsheet.copySheet(template("Document Register").id, {
            destinationFolderId: folder.id,
            newName: "IND-2000 - Document Register",
            include: ["data", "cellLinks"],
        });
        const approvals = await smartsheet.copySheet(template("Approvals").id, {
            destinationFolderId: folder.id,
            newName: "IND-2000 - Approvals",
            include: ["data", "cellLinks"],
        });

        const approvalsSheet = await smartsheet.getSheet(approvals.id);
        const decision = approvalsSheet.columns.find((column) => column.title === "Decision")!;
        const reference = await smartsheet.createCrossSheetReference(register.id, {
            name: "IND-2000 Approvals Decision",
            sourceSheetId: approvals.id,
            startColumnId: decision.id,
            endColumnId: decision.id,
        });
        expect(reference).toMatchObject({ created: true, value: { name: "IND-2000 Approvals Decision", sourceSheetId: approvals.id } });

        const fields = await smartsheet.getSummaryFields(register.id);
        const code = fields.find((field) => field.title === "Product Code")!;
        const approved = fields.find((field) => field.title === "Approved Documents")!;
        expect(approved.formula).toContain("{Approvals Decision}");
        const updated = await smartsheet.updateSummaryFields(register.id, [
            { id: code.id, objectValue: "IND-2000" },
            { id: approved.id, formula: '=COUNTIF({IND-2000 Approvals Decision}, "Approved")' },
        ]);
        expect(updated.find((field) => field.id === code.id)?.objectValue).toBe("IND-2000");
        const added = await smartsheet.addSummaryFields(register.id, [{ title: "Launch", type: "TEXT_NUMBER", objectValue: "Q3" }]);
        expect(added).toEqual({ created: true, value: [expect.objectContaining({ title: "Launch" })] });

        const changeLog = await smartsheet.copySheet(template("Change Log").id, {
            destinationFolderId: folder.id,
            newName: "IND-2000 - Change Log",
            include: ["data", "cellLinks"],
        });
        const changeLogSheet = await smartsheet.getSheet(changeLog.id);
        const approvalStatus = changeLogSheet.columns.find((column) => column.title === "Approval Status")!;
        expect(approvalStatus.formula).toContain("{Approvals Decision}");
        const column = await smartsheet.updateColumn(changeLog.id, approvalStatus.id, { formula: "=1" });
        expect(column.formula).toBe("=1");

        const intake = await smartsheet.getSheet(intakeSheetId, { pageSize: 2 });
        expect(intake.rows.length).toBe(intake.totalRowCount);
        const status = intake.columns.find((candidate) => candidate.title === "Status")!;
        const [firstRow] = intake.rows;
        const rows = await smartsheet.updateRows(intakeSheetId, [{ id: firstRow!.id, cells: [{ columnId: status.id, value: "Queued" }] }]);
        expect(rows[0]?.cells.find((cell) => cell.columnId === status.id)?.value).toBe("Queued");
        const [newRow] = await smartsheet.addRows(intakeSheetId, [{ toBottom: true, cells: [{ columnId: status.id, value: "x" }] }]);
        expect(newRow?.id).toBeGreaterThan(0);

        await smartsheet.deleteSheet(changeLog.id);
        expect(sim.core.state().sheets.some((sheet) => sheet.id === changeLog.id)).toBe(false);

        // The adapter's counts agree with what the simulator saw.
        const seen = sim.core.calls();
        expect(smartsheet.calls().total).toBe(seen.total);
        expect(smartsheet.calls().byOperation).toEqual(seen.byOperation);
    });

    it("answers a delete of a sheet or folder that is gone already (404) as done, in one call each, and still throws a refused delete", async () => {
        const { sim } = context;
        const smartsheet = adapter(sim);
        const { template, industrialFolderId } = anchors(sim);
        const folder = await smartsheet.createFolder(industrialFolderId, "IND-2002 Gone Check");
        const sheet = await smartsheet.copySheet(template("Approvals").id, { destinationFolderId: folder.id, newName: "IND-2002 - Approvals", include: [] });
        await smartsheet.deleteSheet(sheet.id);
        await smartsheet.deleteFolder(folder.id);
        sim.core.resetCalls();

        await expect(smartsheet.deleteSheet(sheet.id)).resolves.toBeUndefined();
        await expect(smartsheet.deleteFolder(folder.id)).resolves.toBeUndefined();

        const answered = sim.core.calls().log.map((call) => [call.op, call.status]);
        expect(answered).toEqual([
            ["deleteSheet", 404],
            ["deleteFolder", 404],
        ]);
        sim.core.setFaults([{ op: "deleteSheet", kind: "error1004", times: 1 }]);
        await expect(smartsheet.deleteSheet(template("Suppliers").id)).rejects.toMatchObject({ statusCode: 403, errorCode: 1004 });
    });

    it("answers a create of what is there already (a reference's name: 1129, a summary field's title: 1193) as there already, in one call, changing nothing", async () => {
        const { sim } = context;
        const smartsheet = adapter(sim);
        const { template, industrialFolderId } = anchors(sim);
        const folder = await smartsheet.createFolder(industrialFolderId, "IND-2001 Exists Check");
        const register = await smartsheet.copySheet(template("Document Register").id, { destinationFolderId: folder.id, newName: "IND-2001 - Document Register", include: ["data"] });
        const approvals = await smartsheet.copySheet(template("Approvals").id, { destinationFolderId: folder.id, newName: "IND-2001 - Approvals", include: ["data"] });
        const decision = (await smartsheet.getSheet(approvals.id)).columns.find((column) => column.title === "Decision")!;
        const reference = { name: "IND-2001 Approvals Decision", sourceSheetId: approvals.id, startColumnId: decision.id, endColumnId: decision.id };
        expect(await smartsheet.createCrossSheetReference(register.id, reference)).toMatchObject({ created: true });
        const launch = { title: "Launch", type: "TEXT_NUMBER", objectValue: "Q3" } as const;
        expect(await smartsheet.addSummaryFields(register.id, [launch])).toMatchObject({ created: true });

        const before = sim.core.calls().byOperation;
        expect(await smartsheet.createCrossSheetReference(register.id, reference)).toEqual({ created: false });
        expect(await smartsheet.addSummaryFields(register.id, [{ ...launch, objectValue: "Q4" }])).toEqual({ created: false });
        const after = sim.core.calls().byOperation;
        expect((after.createCrossSheetReference ?? 0) - (before.createCrossSheetReference ?? 0)).toBe(1);
        expect((after.addSummaryFields ?? 0) - (before.addSummaryFields ?? 0)).toBe(1);
        const state = sim.core.state().sheets.find((sheet) => sheet.id === register.id)!;
        expect(state.crossSheetReferences.filter((made) => made.name === reference.name)).toHaveLength(1);
        expect(state.summaryFields.filter((field) => field.title === "Launch")).toEqual([expect.objectContaining({ objectValue: "Q3" })]);
        // Any other refusal of a create is still a failure.
        await expect(smartsheet.createCrossSheetReference(register.id, { ...reference, name: "IND-2001 Nowhere", sourceSheetId: 1111111111111111 })).rejects.toMatchObject({ kind: "permanent" });
    });

    it("reads, adds, updates and deletes columns, and deletes summary fields, with Smartsheet's answers validated", async () => {
        const { sim } = context;
        const smartsheet = adapter(sim);
        const { intakeSheetId, template } = anchors(sim);

        const columns = await smartsheet.getColumns(intakeSheetId);
        expect(columns.map((column) => column.title)).toEqual(["Product Code", "Product Name", "Product Line", "Approved", "Status", "Folder"]);
        expect(columns.map((column) => column.index)).toEqual([0, 1, 2, 3, 4, 5]);
        expect(columns[0]).toMatchObject({ title: "Product Code", type: "TEXT_NUMBER", primary: true });
        expect(columns[2]).toMatchObject({ title: "Product Line", type: "PICKLIST", options: ["Industrial", "Consumer"] });

        const owner = await smartsheet.addColumn(intakeSheetId, {
            index: 2,
            title: "Owner",
            type: "PICKLIST",
            options: ["Ana", "Ben"],
            description: "Who answers for it",
            validation: true,
            locked: true,
            hidden: true,
        });
        expect(owner).toEqual({
            created: true,
            value: expect.objectContaining({ index: 2, title: "Owner", type: "PICKLIST", options: ["Ana", "Ben"], description: "Who answers for it", validation: true, locked: true, hidden: true }),
        });
        const score = await smartsheet.addColumn(intakeSheetId, { index: 7, title: "Score", type: "TEXT_NUMBER", formula: "=1" });
        const created = await smartsheet.addColumn(intakeSheetId, { index: 8, title: "Created", type: "DATETIME", systemColumnType: "CREATED_DATE" });
        const done = await smartsheet.addColumn(intakeSheetId, { index: 9, title: "Done", type: "CHECKBOX", symbol: "STAR" });
        expect([score, created, done]).toEqual([
            { created: true, value: expect.objectContaining({ index: 7, formula: "=1" }) },
            { created: true, value: expect.objectContaining({ index: 8, systemColumnType: "CREATED_DATE" }) },
            { created: true, value: expect.objectContaining({ index: 9, symbol: "STAR" }) },
        ]);
        if (!owner.created || !score.created || !done.created) throw new Error("not added");

        // formula: "" removes the column formula; options and symbol go with the type.
        expect(await smartsheet.updateColumn(intakeSheetId, score.value.id, { formula: "" })).not.toHaveProperty("formula");
        const moved = await smartsheet.updateColumn(intakeSheetId, owner.value.id, {
            title: "Owner Team",
            type: "PICKLIST",
            options: ["Red", "Blue"],
            description: "",
            validation: false,
            locked: false,
            hidden: false,
            index: 5,
        });
        expect(moved).toMatchObject({ index: 5, title: "Owner Team", options: ["Red", "Blue"], validation: false });
        expect(moved).not.toHaveProperty("description");
        expect(moved).not.toHaveProperty("hidden");
        expect(await smartsheet.updateColumn(intakeSheetId, done.value.id, { type: "TEXT_NUMBER" })).not.toHaveProperty("symbol");

        await smartsheet.deleteColumn(intakeSheetId, score.value.id);
        expect((await smartsheet.getColumns(intakeSheetId)).map((column) => column.title)).toEqual([
            "Product Code",
            "Product Name",
            "Product Line",
            "Approved",
            "Status",
            "Owner Team",
            "Folder",
            "Created",
            "Done",
        ]);

        const register = template("Document Register").id;
        const added = await smartsheet.addSummaryFields(register, [
            { title: "Stage", type: "PICKLIST", objectValue: "Draft" },
            { title: "Signed Off", type: "CHECKBOX", objectValue: true },
        ]);
        expect(added).toEqual({
            created: true,
            value: [expect.objectContaining({ title: "Stage", type: "PICKLIST" }), expect.objectContaining({ title: "Signed Off", type: "CHECKBOX", objectValue: true })],
        });
        if (!added.created) throw new Error("not added");
        await smartsheet.deleteSummaryFields(register, added.value.map((field) => field.id));
        expect((await smartsheet.getSummaryFields(register)).map((field) => field.title)).not.toContain("Stage");
        expect((await smartsheet.getSummaryFields(register)).map((field) => field.title)).not.toContain("Signed Off");

        // The adapter's counts agree with what the simulator saw.
        const seen = sim.core.calls();
        expect(smartsheet.calls().byOperation).toEqual(seen.byOperation);
        expect(seen.byOperation).toMatchObject({ getColumns: 2, addColumn: 4, updateColumn: 3, deleteColumn: 1, deleteSummaryFields: 1 });
    });

    it("answers an added column whose title the sheet has, in any case (1056), as there already, in one call, adding nothing; other refusals throw", async () => {
        const { sim } = context;
        const smartsheet = adapter(sim);
        const { intakeSheetId } = anchors(sim);
        const before = await smartsheet.getColumns(intakeSheetId);

        expect(await smartsheet.addColumn(intakeSheetId, { index: 1, title: "status", type: "TEXT_NUMBER" })).toEqual({ created: false });
        expect(sim.core.calls().log.filter((call) => call.op === "addColumn").map((call) => call.status)).toEqual([400]);
        expect(await smartsheet.getColumns(intakeSheetId)).toEqual(before);

        await expect(smartsheet.addColumn(intakeSheetId, { index: 1, title: "Score", type: "TEXT_NUMBER", formula: "SUM(1)" })).rejects.toMatchObject({
            kind: "permanent",
            statusCode: 400,
            errorCode: 1162,
            operation: "addColumn",
        });
        // A rename onto a taken title is no create: it fails.
        const status = before.find((column) => column.title === "Status")!;
        const renamed = await smartsheet.updateColumn(intakeSheetId, status.id, { title: "Folder" }).catch((caught: unknown) => caught);
        expect(renamed).toBeInstanceOf(PermanentSmartsheetError);
        expect(renamed).toMatchObject({ statusCode: 400, errorCode: 1056, operation: "updateColumn" });
        await expect(smartsheet.updateColumn(intakeSheetId, status.id, { options: ["A"] })).rejects.toMatchObject({ kind: "permanent", errorCode: 1090 });
        expect(await smartsheet.getColumns(intakeSheetId)).toEqual(before);
    });

    it("never sends an added column twice: one made although the caller got 4002 is ambiguous", async () => {
        const { sim } = context;
        sim.core.setFaults([{ op: "addColumn", kind: "commitThenError4002", times: 1 }]);
        const smartsheet = adapter(sim);
        const { intakeSheetId } = anchors(sim);
        const error = await smartsheet.addColumn(intakeSheetId, { index: 6, title: "Owner", type: "TEXT_NUMBER" }).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(AmbiguousWriteError);
        expect(error).toMatchObject({ operation: "addColumn", errorCode: 4002 });
        expect(sim.core.calls().byOperation.addColumn).toBe(1);
        // Sent again, as a caller would after looking: there already.
        expect(await smartsheet.addColumn(intakeSheetId, { index: 6, title: "Owner", type: "TEXT_NUMBER" })).toEqual({ created: false });
        expect((await smartsheet.getColumns(intakeSheetId)).filter((column) => column.title === "Owner")).toHaveLength(1);
    });

    it("answers a delete of a column that is gone already (404) as done, also when its re-send after a 4002 finds it gone, and still throws a refused delete", async () => {
        const { sim } = context;
        const smartsheet = adapter(sim);
        const { intakeSheetId } = anchors(sim);
        const [code, , , , status, folder] = await smartsheet.getColumns(intakeSheetId);
        await smartsheet.deleteColumn(intakeSheetId, folder!.id);
        sim.core.resetCalls();

        await expect(smartsheet.deleteColumn(intakeSheetId, folder!.id)).resolves.toBeUndefined();
        expect(sim.core.calls().log.map((call) => [call.op, call.status])).toEqual([["deleteColumn", 404]]);

        sim.core.setFaults([{ op: "deleteColumn", kind: "commitThenError4002", times: 1 }]);
        sim.core.resetCalls();
        await expect(smartsheet.deleteColumn(intakeSheetId, status!.id)).resolves.toBeUndefined();
        expect(sim.core.calls().log.map((call) => call.status)).toEqual([500, 404]);
        expect((await smartsheet.getColumns(intakeSheetId)).map((column) => column.title)).toEqual(["Product Code", "Product Name", "Product Line", "Approved"]);

        const primary = await smartsheet.deleteColumn(intakeSheetId, code!.id).catch((caught: unknown) => caught);
        expect(primary).toBeInstanceOf(PermanentSmartsheetError);
        expect(primary).toMatchObject({ statusCode: 400, errorCode: 1065, operation: "deleteColumn" });
    });

    it("deletes summary fields ignoring ids that are gone, makes no call for no ids, and throws for a sheet that is not there", async () => {
        const { sim } = context;
        const smartsheet = adapter(sim);
        const register = anchors(sim).template("Document Register").id;
        const [first, ...rest] = await smartsheet.getSummaryFields(register);

        await smartsheet.deleteSummaryFields(register, [first!.id]);
        await expect(smartsheet.deleteSummaryFields(register, [first!.id])).resolves.toBeUndefined();
        await smartsheet.deleteSummaryFields(register, []);
        expect(smartsheet.calls().byOperation).toEqual({ getSummary: 1, deleteSummaryFields: 2 });
        expect((await smartsheet.getSummaryFields(register)).map((field) => field.id)).toEqual(rest.map((field) => field.id));

        await expect(smartsheet.deleteSummaryFields(1111111111111111, [first!.id])).rejects.toMatchObject({ kind: "permanent", statusCode: 404, errorCode: 1006 });
    });

    it("updateRowsEach writes every row Smartsheet accepts and names each one it refuses (a locked row: 403/1050), in one call", async () => {
        const { sim } = context;
        const smartsheet = adapter(sim);
        const { intakeSheetId } = anchors(sim);
        const intake = await smartsheet.getSheet(intakeSheetId);
        const status = intake.columns.find((candidate) => candidate.title === "Status")!;
        const [first, second, third] = intake.rows;
        sim.core.lockRows(intakeSheetId, [second!.id], true);
        const write = (value: string) => [first!, second!, third!].map((row) => ({ id: row.id, cells: [{ columnId: status.id, value }] }));

        const written = await smartsheet.updateRowsEach(intakeSheetId, write("Queued"));

        expect(written.updated.map((row) => row.id)).toEqual([first!.id, third!.id]);
        expect(written.refused).toEqual([{ rowId: second!.id, errorCode: 1050, message: "You cannot edit a locked row." }]);
        expect(smartsheet.calls().byOperation).toEqual({ getSheet: 1, updateRows: 1 });
        // updateRows keeps Smartsheet's default: one refused row fails the call.
        await expect(smartsheet.updateRows(intakeSheetId, write("Done"))).rejects.toMatchObject({ kind: "permanent", statusCode: 403, errorCode: 1050 });
        sim.core.lockRows(intakeSheetId, [second!.id], false);
        expect(await smartsheet.updateRowsEach(intakeSheetId, write("Done"))).toMatchObject({ refused: [] });
    });

    it("reads every page of a folder's children", async () => {
        const { sim } = context;
        sim.core.configure({ rateLimit: { requests: 100_000, windowMs: 60_000 } });
        const smartsheet = adapter(sim);
        const { industrialFolderId } = anchors(sim);
        const parent = await smartsheet.createFolder(industrialFolderId, "Many");
        for (let i = 0; i < 1_005; i++) await smartsheet.createFolder(parent.id, `child ${i}`);
        const before = smartsheet.calls().byOperation.getFolderChildren ?? 0;
        const children = await smartsheet.listFolderChildren(parent.id, ["folders"]);
        expect(children).toHaveLength(1_005);
        expect(new Set(children.map((child) => child.id)).size).toBe(1_005);
        expect((smartsheet.calls().byOperation.getFolderChildren ?? 0) - before).toBe(2);
    });

    it("counts calls per activity while sharing the pacing", async () => {
        const { sim } = context;
        const root = adapter(sim);
        const one = root.withOwnTally();
        const two = root.withOwnTally();
        await one.getSheet(anchors(sim).intakeSheetId);
        await two.listFolderChildren(anchors(sim).templateFolderId);
        await two.listFolderChildren(anchors(sim).templateFolderId);
        expect(one.calls()).toMatchObject({ total: 1, byOperation: { getSheet: 1 } });
        expect(two.calls()).toMatchObject({ total: 2, byOperation: { getFolderChildren: 2 } });
        expect(root.calls().total).toBe(3);
    });
});

describe("SdkSmartsheet reading a big sheet in pages", () => {
    const clock = { at: Date.parse("2026-03-02T10:00:00.400Z") };
    const context = useSimulator({ clock: () => clock.at });

    it("reads every row past the first 500, one call a page, and only the rows modified since an instant in one call", async () => {
        const { sim } = context;
        sim.core.configure({ rateLimit: { requests: 100_000, windowMs: 60_000 } });
        const smartsheet = adapter(sim);
        const { intakeSheetId } = anchors(sim);
        const code = (await smartsheet.getSheet(intakeSheetId)).columns.find((column) => column.title === "Product Code")!;
        for (let start = 0; start < 1_200; start += 500) {
            const count = Math.min(500, 1_200 - start);
            await smartsheet.addRows(intakeSheetId, Array.from({ length: count }, (_, i) => ({ toBottom: true as const, cells: [{ columnId: code.id, value: `OLD-${start + i}` }] })));
        }
        const reads = () => smartsheet.calls().byOperation.getSheet ?? 0;

        const before = reads();
        const whole = await smartsheet.getSheet(intakeSheetId, { pageSize: 500 });
        expect(whole.rows).toHaveLength(whole.totalRowCount!);
        expect(whole.rows.length).toBeGreaterThan(1_200);
        expect(new Set(whole.rows.map((row) => row.id)).size).toBe(whole.rows.length);
        expect(reads() - before).toBe(Math.ceil(whole.rows.length / 500));
        // When Smartsheet answered the first page, by its clock (the Date header, whole seconds).
        expect(whole.answeredAt).toBe("2026-03-02T10:00:00.000Z");

        clock.at += 2_000;
        const edited = whole.rows.slice(600, 602);
        await smartsheet.updateRows(intakeSheetId, edited.map((row) => ({ id: row.id, cells: [{ columnId: code.id, value: "EDITED" }] })));
        const beforeFiltered = reads();
        const changed = await smartsheet.getSheet(intakeSheetId, { pageSize: 500, rowsModifiedSince: new Date(clock.at - 500) });
        expect(changed.rows.map((row) => row.id)).toEqual(edited.map((row) => row.id));
        expect(reads() - beforeFiltered).toBe(1);
    });
});
