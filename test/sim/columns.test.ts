import { describe, expect, it } from "vitest";
import type { RunningSimulator, SimOperation } from "../../tools/smartsheet-sim";
import { api, templateSheetId, useSimulator, type RawResponse } from "./simTestKit";

const context = useSimulator();

interface Column {
    id: number;
    index: number;
    title: string;
    [attribute: string]: unknown;
}

/** The intake sheet's columns: Product Code (primary), Product Name, Product Line (picklist), Approved, Status, Folder. */
async function intakeColumns(sim: RunningSimulator): Promise<{ sheetId: number; path: string; columns: Column[]; byTitle: (title: string) => Column }> {
    const sheetId = sim.core.anchors.intakeSheetId;
    const columns = (await api(sim, "GET", `sheets/${sheetId}/columns`)).body.data as Column[];
    const byTitle = (title: string) => {
        const column = columns.find((candidate) => candidate.title === title);
        if (!column) throw new Error(`no column ${title}`);
        return column;
    };
    return { sheetId, path: `sheets/${sheetId}/columns`, columns, byTitle };
}

async function columnsOf(sim: RunningSimulator, sheetId: number): Promise<Column[]> {
    return (await api(sim, "GET", `sheets/${sheetId}/columns?includeAll=true`)).body.data;
}

function titles(columns: readonly Column[]): string[] {
    return columns.map((column) => column.title);
}

function expectError(response: RawResponse, status: number, errorCode: number, message?: string): void {
    expect(response.status).toBe(status);
    expect(response.body).toMatchObject({ errorCode, ...(message === undefined ? {} : { message }) });
}

describe("GET /sheets/{id}/columns", () => {
    it("lists the columns in index order as an IndexResult of 100 a page", async () => {
        const { sim } = context;
        const { path } = await intakeColumns(sim);
        const response = await api(sim, "GET", path);
        expect(response.status).toBe(200);
        expect(response.body).toEqual({ pageNumber: 1, pageSize: 100, totalPages: 1, totalCount: 6, data: expect.any(Array) });
        expect(titles(response.body.data)).toEqual(["Product Code", "Product Name", "Product Line", "Approved", "Status", "Folder"]);
        expect(response.body.data.map((column: Column) => column.index)).toEqual([0, 1, 2, 3, 4, 5]);
        expect(response.body.data[0]).toEqual({
            id: expect.any(Number),
            version: 0,
            index: 0,
            title: "Product Code",
            type: "TEXT_NUMBER",
            primary: true,
            validation: false,
            width: 150,
        });
        expect(response.body.data[2]).toEqual({
            id: expect.any(Number),
            version: 0,
            index: 2,
            title: "Product Line",
            type: "PICKLIST",
            options: ["Industrial", "Consumer"],
            validation: false,
            width: 150,
        });
    });

    it("pages with page and pageSize, answers the last page past the end, and lists all without a page size on includeAll", async () => {
        const { sim } = context;
        const { path } = await intakeColumns(sim);
        const second = (await api(sim, "GET", `${path}?pageSize=4&page=2`)).body;
        expect(second).toMatchObject({ pageNumber: 2, pageSize: 4, totalPages: 2, totalCount: 6 });
        expect(titles(second.data)).toEqual(["Status", "Folder"]);
        expect((await api(sim, "GET", `${path}?pageSize=4&page=9`)).body).toMatchObject({ pageNumber: 2, data: second.data });
        const all = (await api(sim, "GET", `${path}?includeAll=true&pageSize=2`)).body;
        expect(Object.keys(all)).toEqual(["pageNumber", "totalPages", "totalCount", "data"]);
        expect(all).toMatchObject({ pageNumber: 1, totalPages: 1, totalCount: 6 });
        expect(all.data).toHaveLength(6);
        expectError(await api(sim, "GET", `${path}?pageSize=0`), 400, 1018);
        expectError(await api(sim, "GET", "sheets/1111111111111111/columns"), 404, 1006, "Not Found.");
    });
});

describe("POST /sheets/{id}/columns", () => {
    it("adds a column at index 2 and shifts the columns after it", async () => {
        const { sim } = context;
        const { path, sheetId, byTitle } = await intakeColumns(sim);
        const version = (await api(sim, "GET", `sheets/${sheetId}`)).body.version;
        const response = await api(sim, "POST", path, { title: "Region", type: "TEXT_NUMBER", index: 2 });
        expect(response.status).toBe(200);
        expect(response.body).toEqual({
            message: "SUCCESS",
            resultCode: 0,
            result: [{ id: expect.any(Number), version: 0, index: 2, title: "Region", type: "TEXT_NUMBER", validation: false, width: 150 }],
        });
        const after = await columnsOf(sim, sheetId);
        expect(titles(after)).toEqual(["Product Code", "Product Name", "Region", "Product Line", "Approved", "Status", "Folder"]);
        expect(after.map((column) => column.index)).toEqual([0, 1, 2, 3, 4, 5, 6]);
        expect(after[3]).toMatchObject({ id: byTitle("Product Line").id, index: 3 });
        expect(after[2]!.id).toBe(response.body.result[0].id);
        expect((await api(sim, "GET", `sheets/${sheetId}`)).body.version).toBe(version + 1);
    });

    it("adds an array of columns at one index in the order given, and appends at index columnCount", async () => {
        const { sim } = context;
        const { path, sheetId } = await intakeColumns(sim);
        const added = await api(sim, "POST", path, [
            { title: "Market", type: "TEXT_NUMBER", index: 1 },
            { title: "Launch", type: "DATE", index: 1 },
        ]);
        expect(added.body.result.map((column: Column) => [column.title, column.index, column.type])).toEqual([
            ["Market", 1, "TEXT_NUMBER"],
            ["Launch", 2, "DATE"],
        ]);
        const last = await api(sim, "POST", path, { title: "Notes", type: "TEXT_NUMBER", index: 8 });
        expect(last.body.result[0].index).toBe(8);
        expect(titles(await columnsOf(sim, sheetId))).toEqual([
            "Product Code",
            "Market",
            "Launch",
            "Product Name",
            "Product Line",
            "Approved",
            "Status",
            "Folder",
            "Notes",
        ]);
    });

    it("refuses an index past the column count, and one request's columns at different indexes (1135), adding nothing", async () => {
        const { sim } = context;
        const { path, sheetId } = await intakeColumns(sim);
        expectError(await api(sim, "POST", path, { title: "Far", type: "TEXT_NUMBER", index: 7 }), 400, 1018, "The value 7 was not valid for the parameter index.");
        expectError(
            await api(sim, "POST", path, [
                { title: "A", type: "TEXT_NUMBER", index: 1 },
                { title: "B", type: "TEXT_NUMBER", index: 3 },
            ]),
            400,
            1135,
            "Input column index 3 is different from the first input column index 1.",
        );
        expect(await columnsOf(sim, sheetId)).toHaveLength(6);
    });

    it("requires title, type and index (1012)", async () => {
        const { sim } = context;
        const { path } = await intakeColumns(sim);
        expectError(await api(sim, "POST", path, { title: "T", type: "TEXT_NUMBER" }), 400, 1012, "A required object attribute is missing from your request: index.");
        expectError(await api(sim, "POST", path, { title: "T", index: 1 }), 400, 1012, "A required object attribute is missing from your request: type.");
        expectError(await api(sim, "POST", path, { type: "TEXT_NUMBER", index: 1 }), 400, 1012, "A required object attribute is missing from your request: title.");
        expectError(await api(sim, "POST", path), 400, 1024);
    });

    it("adds a picklist with options, a checkbox with a symbol, and a described, locked, hidden, narrow column with validation", async () => {
        const { sim } = context;
        const { path } = await intakeColumns(sim);
        const response = await api(sim, "POST", path, [
            { title: "Priority", type: "PICKLIST", options: ["Low", "High"], index: 6 },
            { title: "Flagged", type: "CHECKBOX", symbol: "FLAG", index: 6 },
            { title: "Internal", type: "TEXT_NUMBER", description: "Ops only", locked: true, hidden: true, width: 80, validation: true, index: 6 },
        ]);
        expect(response.status).toBe(200);
        const [priority, flagged, internal] = response.body.result;
        expect(priority).toEqual({ id: expect.any(Number), version: 0, index: 6, title: "Priority", type: "PICKLIST", options: ["Low", "High"], validation: false, width: 150 });
        expect(flagged).toEqual({ id: expect.any(Number), version: 0, index: 7, title: "Flagged", type: "CHECKBOX", symbol: "FLAG", validation: false, width: 150 });
        expect(internal).toEqual({
            id: expect.any(Number),
            version: 0,
            index: 8,
            title: "Internal",
            type: "TEXT_NUMBER",
            validation: true,
            width: 80,
            locked: true,
            lockedForUser: false,
            hidden: true,
            description: "Ops only",
        });
        const multi = await api(sim, "POST", path, { title: "Markets", type: "MULTI_PICKLIST", options: ["EU", "US"], index: 0 });
        expect(multi.body.result[0]).toMatchObject({ version: 2, index: 0, type: "MULTI_PICKLIST", options: ["EU", "US"] });
    });

    it("adds a column formula that every existing row's cell carries, and rows added later too", async () => {
        const { sim } = context;
        const sheetId = templateSheetId(sim, "Document Register");
        const formula = '=[Document Number]@row + " " + Revision@row';
        const added = await api(sim, "POST", `sheets/${sheetId}/columns`, { title: "Label", type: "TEXT_NUMBER", formula, index: 4 });
        expect(added.body.result[0]).toMatchObject({ index: 4, title: "Label", formula });
        const columnId = added.body.result[0].id;
        const primary = (await columnsOf(sim, sheetId))[0]!.id;
        await api(sim, "POST", `sheets/${sheetId}/rows`, { toBottom: true, cells: [{ columnId: primary, value: "DOC-006" }] });
        const sheet = (await api(sim, "GET", `sheets/${sheetId}`)).body;
        expect(sheet.rows).toHaveLength(6);
        for (const row of sheet.rows) expect(row.cells[4]).toEqual({ columnId, formula });
    });

    it("adds system columns with the types Smartsheet requires, one of each per sheet", async () => {
        const { sim } = context;
        const { path, sheetId } = await intakeColumns(sim);
        const added = await api(sim, "POST", path, [
            { title: "Number", type: "TEXT_NUMBER", systemColumnType: "AUTO_NUMBER", index: 6 },
            { title: "Created", type: "DATETIME", systemColumnType: "CREATED_DATE", index: 6 },
            { title: "Modified By", type: "CONTACT_LIST", systemColumnType: "MODIFIED_BY", index: 6 },
        ]);
        expect(added.body.result.map((column: Column) => [column.title, column.type, column.systemColumnType])).toEqual([
            ["Number", "TEXT_NUMBER", "AUTO_NUMBER"],
            ["Created", "DATETIME", "CREATED_DATE"],
            ["Modified By", "CONTACT_LIST", "MODIFIED_BY"],
        ]);
        expectError(
            await api(sim, "POST", path, { title: "Creator", type: "TEXT_NUMBER", systemColumnType: "CREATED_BY", index: 0 }),
            400,
            1079,
            "Column type TEXT_NUMBER is not supported for system column type CREATED_BY.",
        );
        expectError(
            await api(sim, "POST", path, { title: "Again", type: "TEXT_NUMBER", systemColumnType: "AUTO_NUMBER", index: 0 }),
            400,
            1077,
            "Duplicate system column type: AUTO_NUMBER.",
        );
        expectError(await api(sim, "POST", path, { title: "When", type: "DATETIME", index: 0 }), 400, 1089, "The type specified is only used with System Columns.");
        expectError(
            await api(sim, "POST", path, [
                { title: "By 1", type: "CONTACT_LIST", systemColumnType: "CREATED_BY", index: 0 },
                { title: "By 2", type: "CONTACT_LIST", systemColumnType: "CREATED_BY", index: 0 },
            ]),
            400,
            1134,
            "Duplicate system column type among input columns.",
        );
        expect(await columnsOf(sim, sheetId)).toHaveLength(9);
    });

    it("refuses a title the sheet has, in any case, with 400/1056, and one twice in a request with 1133", async () => {
        const { sim } = context;
        const { path, sheetId } = await intakeColumns(sim);
        expectError(await api(sim, "POST", path, { title: "product name", type: "TEXT_NUMBER", index: 1 }), 400, 1056, "Column titles must be unique.");
        expectError(
            await api(sim, "POST", path, [
                { title: "Owner", type: "TEXT_NUMBER", index: 1 },
                { title: "OWNER", type: "TEXT_NUMBER", index: 1 },
            ]),
            400,
            1133,
            "Column titles are not unique among input columns.",
        );
        expect(titles(await columnsOf(sim, sheetId))).not.toContain("Owner");
    });

    it("refuses a second primary column (1055), an unknown type (1018) and a project-sheet type (1142)", async () => {
        const { sim } = context;
        const { path, sheetId } = await intakeColumns(sim);
        expectError(await api(sim, "POST", path, { title: "Key", type: "TEXT_NUMBER", primary: true, index: 0 }), 400, 1055, "One and only one column must be primary.");
        expectError(await api(sim, "POST", path, { title: "Key", type: "TEXT", index: 0 }), 400, 1018, "The value TEXT was not valid for the parameter type.");
        expectError(
            await api(sim, "POST", path, { title: "Days", type: "DURATION", index: 0 }),
            400,
            1142,
            "Column type DURATION is reserved for project sheets and may not be manually set on a column.",
        );
        expect(await columnsOf(sim, sheetId)).toHaveLength(6);
    });

    it("refuses options off a picklist (1060), a symbol the type does not take (1058) or with options (1059), and a formula without = (1162)", async () => {
        const { sim } = context;
        const { path } = await intakeColumns(sim);
        expectError(
            await api(sim, "POST", path, { title: "X", type: "TEXT_NUMBER", options: ["a"], index: 0 }),
            400,
            1060,
            "Column options are not allowed for column type TEXT_NUMBER.",
        );
        expectError(
            await api(sim, "POST", path, { title: "X", type: "DATE", symbol: "STAR", index: 0 }),
            400,
            1058,
            "Column type of DATE does not support symbol of type STAR.",
        );
        expectError(
            await api(sim, "POST", path, { title: "X", type: "PICKLIST", symbol: "RYG", options: ["Red"], index: 0 }),
            400,
            1059,
            "Column options are not allowed when a symbol is specified.",
        );
        expectError(
            await api(sim, "POST", path, { title: "X", type: "TEXT_NUMBER", formula: "SUM(1)", index: 0 }),
            400,
            1162,
            "A formula must always start with an equal sign (=).",
        );
    });
});

describe("PUT /sheets/{id}/columns/{columnId}", () => {
    it("renames a column; another column's title in any case is 400/1056, its own in another case is not", async () => {
        const { sim } = context;
        const { path, byTitle } = await intakeColumns(sim);
        const status = `${path}/${byTitle("Status").id}`;
        expectError(await api(sim, "PUT", status, { title: "FOLDER" }), 400, 1056, "Column titles must be unique.");
        const renamed = await api(sim, "PUT", status, { title: "STATUS" });
        expect(renamed.body).toEqual({
            message: "SUCCESS",
            resultCode: 0,
            result: { id: byTitle("Status").id, version: 0, index: 4, title: "STATUS", type: "TEXT_NUMBER", validation: false, width: 150 },
        });
    });

    it("moves a column to a new index and shifts the others", async () => {
        const { sim } = context;
        const { path, sheetId, byTitle } = await intakeColumns(sim);
        const moved = await api(sim, "PUT", `${path}/${byTitle("Folder").id}`, { index: 1 });
        expect(moved.body.result).toMatchObject({ id: byTitle("Folder").id, index: 1 });
        const after = await columnsOf(sim, sheetId);
        expect(titles(after)).toEqual(["Product Code", "Folder", "Product Name", "Product Line", "Approved", "Status"]);
        expect(after.map((column) => column.index)).toEqual([0, 1, 2, 3, 4, 5]);
        expectError(await api(sim, "PUT", `${path}/${byTitle("Folder").id}`, { index: 6 }), 400, 1018);
    });

    it("changes a type with its options; options, a symbol or a system type need the type (1090); a type off the picklists drops the options", async () => {
        const { sim } = context;
        const { path, byTitle } = await intakeColumns(sim);
        const status = `${path}/${byTitle("Status").id}`;
        const picklist = await api(sim, "PUT", status, { type: "PICKLIST", options: ["Open", "Done"] });
        expect(picklist.body.result).toMatchObject({ type: "PICKLIST", options: ["Open", "Done"] });
        expectError(
            await api(sim, "PUT", status, { options: ["Open"] }),
            400,
            1090,
            "Column.type is required when changing symbol, systemColumnType or options.",
        );
        const text = await api(sim, "PUT", `${path}/${byTitle("Product Line").id}`, { type: "TEXT_NUMBER" });
        expect(text.body.result.type).toBe("TEXT_NUMBER");
        expect(text.body.result).not.toHaveProperty("options");
        expectError(await api(sim, "PUT", status, { type: "DATETIME" }), 400, 1089);
    });

    it("keeps the primary column TEXT_NUMBER (1057) and the one primary column (1055)", async () => {
        const { sim } = context;
        const { path, byTitle } = await intakeColumns(sim);
        expectError(
            await api(sim, "PUT", `${path}/${byTitle("Product Code").id}`, { type: "DATE" }),
            400,
            1057,
            "Primary columns must be of type TEXT_NUMBER.",
        );
        expectError(await api(sim, "PUT", `${path}/${byTitle("Status").id}`, { primary: true }), 400, 1055);
        const columns = await columnsOf(sim, sim.core.anchors.intakeSheetId);
        expect(columns[0]).toMatchObject({ type: "TEXT_NUMBER", primary: true });
        expect(columns.filter((column) => column.primary)).toHaveLength(1);
    });

    it("sets a column formula over the values every row held, and removes it with formula: \"\"", async () => {
        const { sim } = context;
        const sheetId = templateSheetId(sim, "Change Log");
        const change = (await columnsOf(sim, sheetId))[1]!;
        expect((await api(sim, "GET", `sheets/${sheetId}`)).body.rows[0].cells[1]).toMatchObject({ value: "Bore diameter tolerance tightened" });
        const formula = "=Document@row";
        const set = await api(sim, "PUT", `sheets/${sheetId}/columns/${change.id}`, { formula });
        expect(set.body.result).toMatchObject({ id: change.id, title: "Change", formula });
        let rows = (await api(sim, "GET", `sheets/${sheetId}`)).body.rows;
        expect(rows.map((row: { cells: unknown[] }) => row.cells[1])).toEqual(rows.map(() => ({ columnId: change.id, formula })));
        const removed = await api(sim, "PUT", `sheets/${sheetId}/columns/${change.id}`, { formula: "" });
        expect(removed.body.result).not.toHaveProperty("formula");
        rows = (await api(sim, "GET", `sheets/${sheetId}`)).body.rows;
        expect(rows.map((row: { cells: unknown[] }) => row.cells[1])).toEqual(rows.map(() => ({ columnId: change.id })));
        expectError(await api(sim, "PUT", `sheets/${sheetId}/columns/${change.id}`, { formula: "Document@row" }), 400, 1162);
    });

    it("refuses writing a cell of a column-formula column (400/1302), in a new row or an existing one, and writes nothing", async () => {
        const { sim } = context;
        const { path, sheetId, byTitle } = await intakeColumns(sim);
        const folder = byTitle("Folder").id;
        await api(sim, "PUT", `${path}/${folder}`, { formula: "=[Product Code]@row" });
        const rows = (await api(sim, "GET", `sheets/${sheetId}`)).body.rows;
        const update = await api(sim, "PUT", `sheets/${sheetId}/rows`, [{ id: rows[0].id, cells: [{ columnId: folder, value: "x" }] }]);
        expectError(update, 400, 1302, "Cannot edit column formula cells.");
        expect(update.body.detail).toEqual({ index: 0, rowId: rows[0].id });
        const add = await api(sim, "POST", `sheets/${sheetId}/rows`, [{ cells: [{ columnId: byTitle("Product Code").id, value: "IND-9" }, { columnId: folder, formula: "=1" }] }]);
        expectError(add, 400, 1302);
        const after = (await api(sim, "GET", `sheets/${sheetId}`)).body.rows;
        expect(after).toHaveLength(rows.length);
        expect(after[0].cells[5]).toEqual({ columnId: folder, formula: "=[Product Code]@row" });
    });

    it("locks, describes and hides a column, and the owner's token still edits it", async () => {
        const { sim } = context;
        const { path, byTitle } = await intakeColumns(sim);
        const folder = `${path}/${byTitle("Folder").id}`;
        const locked = await api(sim, "PUT", folder, { locked: true, description: "Set by Sheetwright", hidden: true });
        expect(locked.body.result).toMatchObject({ locked: true, lockedForUser: false, description: "Set by Sheetwright", hidden: true });
        const retitled = await api(sim, "PUT", folder, { title: "Product Folder", description: "", hidden: false });
        expect(retitled.status).toBe(200);
        expect(retitled.body.result).toMatchObject({ title: "Product Folder", locked: true });
        expect(retitled.body.result).not.toHaveProperty("description");
        expect(retitled.body.result).not.toHaveProperty("hidden");
        const unlocked = await api(sim, "PUT", folder, { locked: false });
        expect(unlocked.body.result).not.toHaveProperty("locked");
        expect(unlocked.body.result).not.toHaveProperty("lockedForUser");
    });
});

describe("DELETE /sheets/{id}/columns/{columnId}", () => {
    it("removes the column and its cells from every row and shifts the columns after it", async () => {
        const { sim } = context;
        const { path, sheetId, byTitle } = await intakeColumns(sim);
        const line = byTitle("Product Line").id;
        const version = (await api(sim, "GET", `sheets/${sheetId}`)).body.version;
        const response = await api(sim, "DELETE", `${path}/${line}`);
        expect(response.status).toBe(200);
        expect(response.body).toEqual({ message: "SUCCESS", resultCode: 0 });
        const after = await columnsOf(sim, sheetId);
        expect(titles(after)).toEqual(["Product Code", "Product Name", "Approved", "Status", "Folder"]);
        expect(after.map((column) => column.index)).toEqual([0, 1, 2, 3, 4]);
        const sheet = (await api(sim, "GET", `sheets/${sheetId}`)).body;
        expect(sheet.version).toBe(version + 1);
        for (const row of sheet.rows) {
            expect(row.cells.map((cell: { columnId: number }) => cell.columnId)).toEqual(after.map((column) => column.id));
        }
        expect(sheet.rows[0].cells[2]).toEqual({ columnId: byTitle("Approved").id, value: true });
    });

    it("refuses to delete the primary column with 400/1065 and keeps it", async () => {
        const { sim } = context;
        const { path, sheetId, byTitle } = await intakeColumns(sim);
        expectError(await api(sim, "DELETE", `${path}/${byTitle("Product Code").id}`), 400, 1065, "The column specified cannot be deleted.");
        expect((await columnsOf(sim, sheetId))[0]).toMatchObject({ title: "Product Code", primary: true });
    });

    it("answers 404/1006 for a column not in the sheet, the second delete included", async () => {
        const { sim } = context;
        const { path, byTitle } = await intakeColumns(sim);
        expect((await api(sim, "DELETE", `${path}/${byTitle("Folder").id}`)).status).toBe(200);
        expectError(await api(sim, "DELETE", `${path}/${byTitle("Folder").id}`), 404, 1006, "Not Found.");
        const otherSheetColumn = (await columnsOf(sim, sim.core.anchors.filingIndexSheetId))[1]!.id;
        expectError(await api(sim, "DELETE", `${path}/${otherSheetColumn}`), 404, 1006);
    });

    it("leaves cross-sheet references to the deleted column in place, as they were", async () => {
        const { sim } = context;
        const approvals = templateSheetId(sim, "Approvals");
        const changeLog = templateSheetId(sim, "Change Log");
        const decision = (await columnsOf(sim, approvals)).find((column) => column.title === "Decision")!.id;
        const before = (await api(sim, "GET", `sheets/${changeLog}/crosssheetreferences`)).body.data;
        expect(before).toEqual([expect.objectContaining({ name: "Approvals Decision", startColumnId: decision, endColumnId: decision })]);
        expect((await api(sim, "DELETE", `sheets/${approvals}/columns/${decision}`)).status).toBe(200);
        const after = (await api(sim, "GET", `sheets/${changeLog}/crosssheetreferences`)).body.data;
        expect(after.map(({ status: _, ...reference }: { status: string }) => reference)).toEqual(before.map(({ status: _, ...reference }: { status: string }) => reference));
    });
});

describe("the column operations in the call log, the rate limit and fault injection", () => {
    async function calls(sim: RunningSimulator): Promise<Array<{ op: SimOperation; call: () => Promise<RawResponse>; unchanged: () => Promise<void> }>> {
        const { path, sheetId, byTitle } = await intakeColumns(sim);
        const status = byTitle("Status");
        return [
            { op: "getColumns", call: () => api(sim, "GET", path), unchanged: async () => {} },
            {
                op: "addColumn",
                call: () => api(sim, "POST", path, { title: "Added", type: "TEXT_NUMBER", index: 1 }),
                unchanged: async () => expect(titles(await columnsOf(sim, sheetId))).not.toContain("Added"),
            },
            {
                op: "updateColumn",
                call: () => api(sim, "PUT", `${path}/${status.id}`, { title: "State" }),
                unchanged: async () => expect(titles(await columnsOf(sim, sheetId))).toContain("Status"),
            },
            {
                op: "deleteColumn",
                call: () => api(sim, "DELETE", `${path}/${status.id}`),
                unchanged: async () => expect(titles(await columnsOf(sim, sheetId))).toContain("Status"),
            },
        ];
    }

    it("logs each under its own operation name", async () => {
        const { sim } = context;
        const list = await calls(sim);
        sim.core.resetCalls();
        for (const { call } of list) expect((await call()).status).toBe(200);
        expect(sim.core.calls().byOperation).toEqual({ getColumns: 1, addColumn: 1, updateColumn: 1, deleteColumn: 1 });
        expect(sim.core.calls().log.map((entry) => `${entry.method} ${entry.op}`)).toEqual([
            "GET getColumns",
            "POST addColumn",
            "PUT updateColumn",
            "DELETE deleteColumn",
        ]);
    });

    it("lets a fault aimed at each answer for it and change nothing", async () => {
        const { sim } = context;
        for (const { op, call, unchanged } of await calls(sim)) {
            sim.core.setFaults([{ op, kind: "error4004" }]);
            expectError(await call(), 500, 4004);
            expect(sim.core.calls().log.at(-1)).toMatchObject({ op, status: 500, errorCode: 4004, fault: "error4004" });
            await unchanged();
        }
    });

    it("counts each against the token's rate limit", async () => {
        const { sim } = context;
        const list = await calls(sim);
        // One call more: calls() read the columns.
        sim.core.configure({ rateLimit: { requests: list.length + 1, windowMs: 60_000 } });
        for (const { call } of list) expect((await call()).status).toBe(200);
        expectError(await list[0]!.call(), 429, 4003, "Rate limit exceeded.");
    });
});
