import { describe, expect, it } from "vitest";
import type { RunningSimulator } from "../../tools/smartsheet-sim";
import { api, sdk, useSimulator } from "./simTestKit";

let now = Date.parse("2026-03-02T09:00:00Z");
const context = useSimulator({ clock: () => now });

interface IntakeColumns {
    sheetId: number;
    code: number;
    name: number;
    line: number;
    approved: number;
    status: number;
    folder: number;
}

async function intake(sim: RunningSimulator): Promise<IntakeColumns & { sheet: Record<string, any> }> {
    const sheet = (await api(sim, "GET", `sheets/${sim.core.anchors.intakeSheetId}`)).body;
    const id = (title: string) => sheet.columns.find((column: { title: string }) => column.title === title).id as number;
    return {
        sheet,
        sheetId: sheet.id,
        code: id("Product Code"),
        name: id("Product Name"),
        line: id("Product Line"),
        approved: id("Approved"),
        status: id("Status"),
        folder: id("Folder"),
    };
}

describe("POST /sheets/{id}/rows", () => {
    it("adds rows at the bottom by default and at the top with toTop, bumping the sheet version", async () => {
        const { sim } = context;
        const columns = await intake(sim);
        const bottom = await api(sim, "POST", `sheets/${columns.sheetId}/rows`, { cells: [{ columnId: columns.code, value: "IND-3000" }] });
        expect(bottom.body.result[0].rowNumber).toBe(5);
        expect(bottom.body.version).toBe(columns.sheet.version + 1);
        const top = await api(sim, "POST", `sheets/${columns.sheetId}/rows`, [
            { toTop: true, cells: [{ columnId: columns.code, value: "TOP-1" }] },
            { toTop: true, cells: [{ columnId: columns.code, value: "TOP-2" }] },
        ]);
        expect(top.body.result.map((row: { rowNumber: number }) => row.rowNumber)).toEqual([1, 2]);
        const sheet = (await api(sim, "GET", `sheets/${columns.sheetId}`)).body;
        expect(sheet.rows.map((row: { cells: Array<{ value?: string }> }) => row.cells[0]?.value)).toEqual([
            "TOP-1",
            "TOP-2",
            "IND-1042",
            "CON-2201",
            "IND-1043",
            "CON-2202",
            "IND-3000",
        ]);
        expect(sheet.totalRowCount).toBe(7);
        expect(sheet.version).toBe(columns.sheet.version + 2);
    });

    it("nests rows under a parentId and places them by siblingId", async () => {
        const { sim } = context;
        const columns = await intake(sim);
        const parent = columns.sheet.rows[0].id;
        const child = await api(sim, "POST", `sheets/${columns.sheetId}/rows`, [{ parentId: parent, cells: [{ columnId: columns.code, value: "child" }] }]);
        expect(child.body.result[0]).toMatchObject({ parentId: parent, rowNumber: 2 });
        const sibling = await api(sim, "POST", `sheets/${columns.sheetId}/rows`, [
            { siblingId: columns.sheet.rows[1].id, above: true, cells: [{ columnId: columns.code, value: "above" }] },
        ]);
        expect(sibling.body.result[0].rowNumber).toBe(3);
        expect((await api(sim, "POST", `sheets/${columns.sheetId}/rows`, [{ parentId: 1111111111111111, cells: [] }])).body.errorCode).toBe(1063);
    });

    it("refuses rows of one request at different locations with 1123", async () => {
        const { sim } = context;
        const columns = await intake(sim);
        const response = await api(sim, "POST", `sheets/${columns.sheetId}/rows`, [
            { toTop: true, cells: [{ columnId: columns.code, value: "a" }] },
            { toBottom: true, cells: [{ columnId: columns.code, value: "b" }] },
        ]);
        expect(response).toMatchObject({ status: 400, body: { errorCode: 1123 } });
    });

    it("refuses a cell with both formula and value with 1163 and detail {index, rowId}, writing nothing", async () => {
        const { sim } = context;
        const columns = await intake(sim);
        const rowId = columns.sheet.rows[2].id;
        const response = await api(sim, "PUT", `sheets/${columns.sheetId}/rows`, [
            { id: columns.sheet.rows[0].id, cells: [{ columnId: columns.status, value: "fine" }] },
            { id: rowId, cells: [{ columnId: columns.status, formula: "=1+1", value: 2 }] },
        ]);
        expect(response.status).toBe(400);
        expect(response.body).toMatchObject({
            errorCode: 1163,
            message: "If cell.formula is specified, then value, objectValue, image, hyperlink, and linkInFromCell must not be specified.",
            detail: { index: 1, rowId },
        });
        const after = (await api(sim, "GET", `sheets/${columns.sheetId}`)).body;
        expect(after.version).toBe(columns.sheet.version);
        expect(after.rows[0].cells[4]).toEqual({ columnId: columns.status });

        const added = await api(sim, "POST", `sheets/${columns.sheetId}/rows`, [{ cells: [{ columnId: columns.status, formula: "=1", value: 1 }] }]);
        expect(added.body).toMatchObject({ errorCode: 1163, detail: { index: 0 } });
    });

    it("refuses an unknown column with 1036 and more than 500 rows", async () => {
        const { sim } = context;
        const columns = await intake(sim);
        const unknown = await api(sim, "POST", `sheets/${columns.sheetId}/rows`, [{ cells: [{ columnId: 42, value: "x" }] }]);
        expect(unknown).toMatchObject({ status: 400, body: { errorCode: 1036, message: "The columnId 42 is invalid." } });
        const many = Array.from({ length: 501 }, () => ({ cells: [{ columnId: columns.code, value: "x" }] }));
        expect((await api(sim, "POST", `sheets/${columns.sheetId}/rows`, many)).status).toBe(400);
        expect((await api(sim, "POST", `sheets/${columns.sheetId}/rows`, many.slice(1))).status).toBe(200);
    });
});

describe("PUT /sheets/{id}/rows", () => {
    it("writes values and formulas, bumps only the written row's modifiedAt and the sheet version; rowsModifiedSince finds it", async () => {
        const { sim } = context;
        const columns = await intake(sim);
        const [first, second] = columns.sheet.rows;
        now += 60_000;
        const since = new Date(now).toISOString();
        const response = await sdk(sim).sheets.updateRow({
            sheetId: columns.sheetId,
            body: [{ id: second.id, cells: [{ columnId: columns.status, value: "Done" }, { columnId: columns.folder, formula: "=[Product Code]@row" }] }],
        });
        expect(response.version).toBe(columns.sheet.version + 1);
        const after = (await api(sim, "GET", `sheets/${columns.sheetId}`)).body;
        expect(after.rows[1].cells[4]).toEqual({ columnId: columns.status, value: "Done", displayValue: "Done" });
        expect(after.rows[1].cells[5]).toEqual({ columnId: columns.folder, formula: "=[Product Code]@row" });
        expect(after.rows[1].modifiedAt > second.modifiedAt).toBe(true);
        expect(after.rows[0].modifiedAt).toBe(first.modifiedAt);
        expect(after.modifiedAt > columns.sheet.modifiedAt).toBe(true);

        const changed = (await sdk(sim).sheets.getSheet({ sheetId: columns.sheetId, queryParameters: { rowsModifiedSince: since } })).rows;
        expect(changed.map((row: { id: number }) => row.id)).toEqual([second.id]);
    });

    it("keeps checkbox values boolean and clears a checkbox to false", async () => {
        const { sim } = context;
        const columns = await intake(sim);
        const rowId = columns.sheet.rows[3].id;
        expect(columns.sheet.rows[3].cells[3]).toEqual({ columnId: columns.approved, value: false });
        const path = `sheets/${columns.sheetId}/rows`;
        const set = await api(sim, "PUT", path, [{ id: rowId, cells: [{ columnId: columns.approved, value: true }] }]);
        expect(set.body.result[0].cells[3]).toEqual({ columnId: columns.approved, value: true });
        const cleared = await api(sim, "PUT", path, [{ id: rowId, cells: [{ columnId: columns.approved, value: "" }] }]);
        expect(cleared.body.result[0].cells[3]).toEqual({ columnId: columns.approved, value: false });
        expect((await api(sim, "PUT", path, [{ id: rowId, cells: [{ columnId: columns.approved, value: "yes" }] }])).body.errorCode).toBe(1042);
        const text = await api(sim, "PUT", path, [{ id: rowId, cells: [{ columnId: columns.status, value: "x" }] }]);
        expect(text.body.result[0].cells[4]).toMatchObject({ value: "x" });
        const emptied = await api(sim, "PUT", path, [{ id: rowId, cells: [{ columnId: columns.status, value: "" }] }]);
        expect(emptied.body.result[0].cells[4]).toEqual({ columnId: columns.status });
    });
});

describe("GET /sheets/{id} query parameters", () => {
    it("limits columns and cells with columnIds but counts every row in totalRowCount", async () => {
        const { sim } = context;
        const columns = await intake(sim);
        const sheet = (await api(sim, "GET", `sheets/${columns.sheetId}?columnIds=${columns.code},${columns.approved}`)).body;
        expect(sheet.columns.map((column: { title: string; index: number }) => [column.title, column.index])).toEqual([
            ["Product Code", 0],
            ["Approved", 3],
        ]);
        expect(sheet.rows[0].cells.map((cell: { columnId: number }) => cell.columnId)).toEqual([columns.code, columns.approved]);
        expect(sheet.totalRowCount).toBe(4);
    });

    it("filters rows by rowIds and rowNumbers and refuses a rowsModifiedSince that is not a time", async () => {
        const { sim } = context;
        const columns = await intake(sim);
        const [first, , third] = columns.sheet.rows;
        const byIds = (await api(sim, "GET", `sheets/${columns.sheetId}?rowIds=${third.id},${first.id}`)).body;
        expect(byIds.rows.map((row: { id: number }) => row.id)).toEqual([first.id, third.id]);
        const byNumbers = (await api(sim, "GET", `sheets/${columns.sheetId}?rowNumbers=2,4,99`)).body;
        expect(byNumbers.rows.map((row: { rowNumber: number }) => row.rowNumber)).toEqual([2, 4]);
        expect((await api(sim, "GET", `sheets/${columns.sheetId}?rowsModifiedSince=2020-01-30T13:25:32-07:00`)).body.rows).toHaveLength(4);
        expect((await api(sim, "GET", `sheets/${columns.sheetId}?rowsModifiedSince=yesterday`)).body.errorCode).toBe(1018);
    });

    it("pages with page and pageSize, answering the last page past the end, and returns all rows without them", async () => {
        const { sim } = context;
        const columns = await intake(sim);
        const rows = Array.from({ length: 250 }, (_, i) => ({ cells: [{ columnId: columns.code, value: `R${i}` }] }));
        await api(sim, "POST", `sheets/${columns.sheetId}/rows`, rows);
        const path = `sheets/${columns.sheetId}`;
        expect((await api(sim, "GET", path)).body.rows).toHaveLength(254);
        expect((await api(sim, "GET", `${path}?page=1`)).body.rows).toHaveLength(100);
        const second = (await api(sim, "GET", `${path}?page=2&pageSize=100`)).body;
        expect(second.rows[0].rowNumber).toBe(101);
        expect(second.totalRowCount).toBe(254);
        expect((await api(sim, "GET", `${path}?page=3&pageSize=100`)).body.rows).toHaveLength(54);
        expect((await api(sim, "GET", `${path}?page=9&pageSize=100`)).body.rows[0].rowNumber).toBe(201);
        expect((await api(sim, "GET", `${path}?pageSize=10`)).body.rows).toHaveLength(10);
        expect((await api(sim, "GET", `${path}?page=0`)).body.errorCode).toBe(1018);
    });

    it("drops empty cells with exclude=nonexistentCells and adds objectValue with include=objectValue", async () => {
        const { sim } = context;
        const columns = await intake(sim);
        const sparse = (await api(sim, "GET", `sheets/${columns.sheetId}?exclude=nonexistentCells&include=objectValue`)).body;
        expect(sparse.rows[0].cells).toHaveLength(4);
        expect(sparse.rows[0].cells[0]).toEqual({ columnId: columns.code, value: "IND-1042", objectValue: "IND-1042", displayValue: "IND-1042" });
        expect((await api(sim, "GET", `sheets/${columns.sheetId}?include=everything`)).body.errorCode).toBe(1018);
    });

    it("answers only the version with ifVersionAfter when nothing changed", async () => {
        const { sim } = context;
        const columns = await intake(sim);
        const version = columns.sheet.version;
        expect((await api(sim, "GET", `sheets/${columns.sheetId}?ifVersionAfter=${version}`)).body).toEqual({ version });
        expect((await api(sim, "GET", `sheets/${columns.sheetId}?ifVersionAfter=${version - 1}`)).body.rows).toHaveLength(4);
    });
});

describe("PUT /sheets/{id}/columns/{columnId}", () => {
    it("sets and clears a column formula, renames, and refuses a duplicate title", async () => {
        const { sim } = context;
        const columns = await intake(sim);
        const path = `sheets/${columns.sheetId}/columns/${columns.folder}`;
        await api(sim, "PUT", path, { formula: "=[Product Code]@row" });
        let sheet = (await api(sim, "GET", `sheets/${columns.sheetId}`)).body;
        expect(sheet.columns[5].formula).toBe("=[Product Code]@row");
        expect(sheet.rows[0].cells[5]).toEqual({ columnId: columns.folder, formula: "=[Product Code]@row" });
        await api(sim, "PUT", path, { formula: "", title: "Folder Link" });
        sheet = (await api(sim, "GET", `sheets/${columns.sheetId}`)).body;
        expect(sheet.columns[5]).not.toHaveProperty("formula");
        expect(sheet.columns[5].title).toBe("Folder Link");
        expect(sheet.rows[0].cells[5]).toEqual({ columnId: columns.folder });
        expect((await api(sim, "PUT", path, { title: "Status" })).body.errorCode).toBe(1056);
        expect((await api(sim, "PUT", `sheets/${columns.sheetId}/columns/42`, { title: "x" })).status).toBe(404);
    });
});

describe("the Date of every answer", () => {
    it("is Smartsheet's clock, the one its modifiedAt is stamped by, in whole seconds; a 4xx carries it too", async () => {
        const { sim } = context;
        now = Date.parse("2026-03-02T11:22:33.750Z");
        const read = await fetch(new URL(`sheets/${sim.core.anchors.intakeSheetId}`, sim.baseUrl), { headers: { Authorization: "Bearer sim-token" } });
        await read.body?.cancel();
        expect(read.headers.get("date")).toBe("Mon, 02 Mar 2026 11:22:33 GMT");
        const refused = await fetch(new URL("sheets/1", sim.baseUrl), { headers: { Authorization: "Bearer sim-token" } });
        await refused.body?.cancel();
        expect(refused.status).toBe(404);
        expect(refused.headers.get("date")).toBe("Mon, 02 Mar 2026 11:22:33 GMT");
    });
});
