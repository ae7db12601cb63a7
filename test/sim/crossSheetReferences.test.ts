import { describe, expect, it } from "vitest";
import { api, sdk, templateSheetId, useSimulator } from "./simTestKit";

const context = useSimulator();

async function sourceColumns(sheetId: number): Promise<{ columns: Array<{ id: number; title: string }>; rows: Array<{ id: number }> }> {
    return (await api(context.sim, "GET", `sheets/${sheetId}`)).body;
}

describe("cross-sheet references", () => {
    it("creates a named reference over a column range and lists and reads it back with status OK", async () => {
        const { sim } = context;
        const client = sdk(sim);
        const sheetId = templateSheetId(sim, "Translations");
        const sourceId = templateSheetId(sim, "Document Register");
        const source = await sourceColumns(sourceId);
        const created = await client.sheets.createCrossSheetReference({
            sheetId,
            body: { name: "Register Numbers", sourceSheetId: sourceId, startColumnId: source.columns[0]?.id, endColumnId: source.columns[1]?.id },
        });
        const list = await client.sheets.listCrossSheetReferences({ sheetId });
        expect(list.totalCount).toBe(1);
        expect(list.data).toEqual([created.result]);
        expect(await client.sheets.getCrossSheetReference({ sheetId, crossSheetReferenceId: created.result.id })).toEqual(created.result);
        const sheet = await client.sheets.getSheet({ sheetId, queryParameters: { include: "crossSheetReferences" } });
        expect(sheet.crossSheetReferences).toEqual([created.result]);
        expect((await client.sheets.getSheet({ sheetId })).crossSheetReferences).toBeUndefined();
    });

    it("accepts a row range, or rows and columns together", async () => {
        const { sim } = context;
        const sheetId = templateSheetId(sim, "Translations");
        const sourceId = templateSheetId(sim, "Suppliers");
        const source = await sourceColumns(sourceId);
        const rows = await api(sim, "POST", `sheets/${sheetId}/crosssheetreferences`, {
            name: "Rows",
            sourceSheetId: sourceId,
            startRowId: source.rows[0]?.id,
            endRowId: source.rows[2]?.id,
        });
        expect(rows.body.result).toMatchObject({ startRowId: source.rows[0]?.id, endRowId: source.rows[2]?.id, status: "OK" });
        expect(rows.body.result).not.toHaveProperty("startColumnId");
        const both = await api(sim, "POST", `sheets/${sheetId}/crosssheetreferences`, {
            name: "Block",
            sourceSheetId: sourceId,
            startRowId: source.rows[0]?.id,
            endRowId: source.rows[1]?.id,
            startColumnId: source.columns[1]?.id,
            endColumnId: source.columns[2]?.id,
        });
        expect(both.status).toBe(200);
    });

    it("generates '<source sheet name> Range <n>' when no name is given", async () => {
        const { sim } = context;
        const sheetId = templateSheetId(sim, "Translations");
        const sourceId = templateSheetId(sim, "Suppliers");
        const column = (await sourceColumns(sourceId)).columns[0]?.id;
        const body = { sourceSheetId: sourceId, startColumnId: column, endColumnId: column };
        expect((await api(sim, "POST", `sheets/${sheetId}/crosssheetreferences`, body)).body.result.name).toBe("Suppliers Range 1");
        expect((await api(sim, "POST", `sheets/${sheetId}/crosssheetreferences`, body)).body.result.name).toBe("Suppliers Range 2");
    });

    it("refuses a name already used on the sheet with 1129", async () => {
        const { sim } = context;
        const sheetId = templateSheetId(sim, "Document Register");
        const sourceId = templateSheetId(sim, "Approvals");
        const column = (await sourceColumns(sourceId)).columns[2]?.id;
        const error = await sdk(sim)
            .sheets.createCrossSheetReference({
                sheetId,
                body: { name: "Approvals Decision", sourceSheetId: sourceId, startColumnId: column, endColumnId: column },
            })
            .catch((rejection: unknown) => rejection);
        expect(error).toMatchObject({ statusCode: 400, errorCode: 1129, message: "The resource you tried to create already exists." });
        expect((await api(sim, "GET", `sheets/${sheetId}/crosssheetreferences`)).body.totalCount).toBe(1);
    });

    it("refuses ids that do not belong to the source sheet (1018), an unknown source (404) and a missing range (1012)", async () => {
        const { sim } = context;
        const path = `sheets/${templateSheetId(sim, "Translations")}/crosssheetreferences`;
        const sourceId = templateSheetId(sim, "Suppliers");
        const foreignColumn = (await sourceColumns(templateSheetId(sim, "Approvals"))).columns[0]?.id;
        const foreign = await api(sim, "POST", path, { name: "Foreign", sourceSheetId: sourceId, startColumnId: foreignColumn, endColumnId: foreignColumn });
        expect(foreign.body).toMatchObject({ errorCode: 1018, message: `The value ${foreignColumn} was not valid for the parameter startColumnId.` });
        expect((await api(sim, "POST", path, { name: "Gone", sourceSheetId: 1111111111111111, startColumnId: 1, endColumnId: 1 })).status).toBe(404);
        expect((await api(sim, "POST", path, { name: "Empty", sourceSheetId: sourceId })).body.errorCode).toBe(1012);
        expect((await api(sim, "POST", path, { name: "Half", sourceSheetId: sourceId, startColumnId: foreignColumn })).body).toMatchObject({
            errorCode: 1012,
            message: "A required object attribute is missing from your request: endColumnId.",
        });
    });

    it("reports a reference as BROKEN once its source sheet is deleted", async () => {
        const { sim } = context;
        const sheetId = templateSheetId(sim, "Change Log");
        await api(sim, "DELETE", `sheets/${templateSheetId(sim, "Approvals")}`);
        const [reference] = (await api(sim, "GET", `sheets/${sheetId}/crosssheetreferences`)).body.data;
        expect(reference).toMatchObject({ name: "Approvals Decision", status: "BROKEN" });
    });

    it("pages the list with page and pageSize", async () => {
        const { sim } = context;
        const sheetId = templateSheetId(sim, "Translations");
        const sourceId = templateSheetId(sim, "Suppliers");
        const column = (await sourceColumns(sourceId)).columns[0]?.id;
        for (let i = 0; i < 3; i++) {
            await api(sim, "POST", `sheets/${sheetId}/crosssheetreferences`, { sourceSheetId: sourceId, startColumnId: column, endColumnId: column });
        }
        const page = (await api(sim, "GET", `sheets/${sheetId}/crosssheetreferences?page=2&pageSize=2`)).body;
        expect(page).toMatchObject({ pageNumber: 2, pageSize: 2, totalPages: 2, totalCount: 3 });
        expect(page.data.map((reference: { name: string }) => reference.name)).toEqual(["Suppliers Range 3"]);
        expect((await api(sim, "GET", `sheets/${sheetId}/crosssheetreferences?includeAll=true`)).body.data).toHaveLength(3);
    });
});
