import { describe, expect, it } from "vitest";
import { api, sdk, sheetsNamed, templateSheetId, useSimulator, type SdkClient } from "./simTestKit";

const context = useSimulator();

async function copy(client: SdkClient, sheetId: number, destinationId: number, newName: string, include?: string) {
    const response = await client.sheets.copySheet({
        sheetId,
        body: { destinationType: "folder", destinationId, newName },
        ...(include ? { queryParameters: { include } } : {}),
    });
    return response.result.id as number;
}

describe("POST /sheets/{id}/copy", () => {
    it("makes a new sheet with new sheet, column and row ids, keeping columns, column formulas, values and cell formulas", async () => {
        const { sim } = context;
        const client = sdk(sim);
        const destination = sim.core.anchors.productsFolderId;
        for (const name of ["Change Log", "Approvals"]) {
            const sourceId = templateSheetId(sim, name);
            const copyId = await copy(client, sourceId, destination, `P1 ${name}`, "data,cellLinks");
            const [source, copied] = await Promise.all([
                client.sheets.getSheet({ sheetId: sourceId }),
                client.sheets.getSheet({ sheetId: copyId }),
            ]);
            expect(copyId).not.toBe(sourceId);
            const strip = (column: Record<string, unknown>) => ({ ...column, id: undefined });
            expect(copied.columns.map(strip)).toEqual(source.columns.map(strip));
            const sourceColumnIds = new Set(source.columns.map((column: { id: number }) => column.id));
            expect(copied.columns.some((column: { id: number }) => sourceColumnIds.has(column.id))).toBe(false);
            expect(copied.rows).toHaveLength(source.rows.length);
            const sourceRowIds = new Set(source.rows.map((row: { id: number }) => row.id));
            expect(copied.rows.some((row: { id: number }) => sourceRowIds.has(row.id))).toBe(false);
            copied.rows.forEach((row: { cells: Array<{ columnId: number }> }, r: number) => {
                row.cells.forEach((cell, c) => {
                    expect(cell.columnId).toBe(copied.columns[c].id);
                    expect({ ...cell, columnId: 0 }).toEqual({ ...source.rows[r].cells[c], columnId: 0 });
                });
            });
        }
        const changeLog = await client.sheets.getSheet({ sheetId: sheetsNamed(sim, "P1 Change Log")[0]?.id });
        expect(changeLog.columns[3].formula).toBe('=IF(COUNTIF({Approvals Decision}, "Pending") > 0, "Awaiting approval", "Clear")');
    });

    it("copies columns but no rows without include=data", async () => {
        const { sim } = context;
        const client = sdk(sim);
        const copyId = await copy(client, templateSheetId(sim, "Approvals"), sim.core.anchors.productsFolderId, "No Data");
        const copied = await client.sheets.getSheet({ sheetId: copyId });
        expect(copied.columns.map((column: { title: string }) => column.title)).toEqual(["Document", "Approver", "Decision", "Change Count"]);
        expect(copied.rows).toEqual([]);
        expect(copied.totalRowCount).toBe(0);
    });

    it("keeps cross-sheet references pointing at the source's referenced sheets with include=cellLinks, and drops them without", async () => {
        const { sim } = context;
        const client = sdk(sim);
        const registerId = templateSheetId(sim, "Document Register");
        const [original] = (await client.sheets.listCrossSheetReferences({ sheetId: registerId })).data;
        const withLinks = await copy(client, registerId, sim.core.anchors.productsFolderId, "With Links", "data,cellLinks");
        const withoutLinks = await copy(client, registerId, sim.core.anchors.productsFolderId, "Without Links", "data");

        const copiedReferences = (await client.sheets.listCrossSheetReferences({ sheetId: withLinks })).data;
        expect(copiedReferences).toEqual([{ ...original, id: expect.any(Number) }]);
        expect(copiedReferences[0].id).not.toBe(original.id);
        expect(copiedReferences[0].sourceSheetId).toBe(templateSheetId(sim, "Approvals"));
        expect((await client.sheets.listCrossSheetReferences({ sheetId: withoutLinks })).data).toEqual([]);
    });

    it("always copies summary fields with new ids and the same titles, types, values and formulas", async () => {
        const { sim } = context;
        const client = sdk(sim);
        const registerId = templateSheetId(sim, "Document Register");
        const copyId = await copy(client, registerId, sim.core.anchors.productsFolderId, "Summary Copy");
        const [source, copied] = await Promise.all([
            client.sheets.getSummary({ sheetId: registerId }),
            client.sheets.getSummary({ sheetId: copyId }),
        ]);
        const essence = (field: Record<string, unknown>) => ({ title: field.title, type: field.type, objectValue: field.objectValue, formula: field.formula });
        expect(copied.fields.map(essence)).toEqual(source.fields.map(essence));
        const sourceIds = source.fields.map((field: { id: number }) => field.id);
        expect(copied.fields.filter((field: { id: number }) => sourceIds.includes(field.id))).toEqual([]);
    });

    it("creates a new sheet on every call: names are not unique and nothing is deduplicated", async () => {
        const { sim } = context;
        const client = sdk(sim);
        const first = await copy(client, templateSheetId(sim, "Suppliers"), sim.core.anchors.productsFolderId, "Same Name");
        const second = await copy(client, templateSheetId(sim, "Suppliers"), sim.core.anchors.productsFolderId, "Same Name");
        expect(first).not.toBe(second);
        expect(sheetsNamed(sim, "Same Name").map((sheet) => sheet.id)).toEqual([first, second]);
    });

    it("copies into the workspace with destinationType workspace and refuses home with 1018", async () => {
        const { sim } = context;
        const sheetId = templateSheetId(sim, "Suppliers");
        const workspaceId = sim.core.anchors.workspaceId;
        const ok = await api(sim, "POST", `sheets/${sheetId}/copy`, { destinationType: "workspace", destinationId: workspaceId, newName: "At Root" });
        expect(ok.status).toBe(200);
        expect(sheetsNamed(sim, "At Root")[0]?.folderId).toBe(workspaceId);

        const home = await api(sim, "POST", `sheets/${sheetId}/copy`, { destinationType: "home", destinationId: 0, newName: "Home" });
        expect(home.status).toBe(400);
        expect(home.body).toMatchObject({ errorCode: 1018, message: "The value home was not valid for the parameter destinationType." });
    });

    it("validates include, the body and the destination", async () => {
        const { sim } = context;
        const path = `sheets/${templateSheetId(sim, "Suppliers")}/copy`;
        const folder = sim.core.anchors.productsFolderId;
        const body = { destinationType: "folder", destinationId: folder, newName: "X" };
        const before = sim.core.state().sheets.length;

        expect((await api(sim, "POST", `${path}?include=data,sparkles`, body)).body).toMatchObject({
            errorCode: 1018,
            message: "The value sparkles was not valid for the parameter include.",
        });
        expect((await api(sim, "POST", path, { destinationType: "folder", newName: "X" })).body).toMatchObject({
            errorCode: 1012,
            message: "A required object attribute is missing from your request: destinationId.",
        });
        expect((await api(sim, "POST", path, { ...body, destinationId: 1111111111111111 })).status).toBe(404);
        expect((await api(sim, "POST", path, { ...body, destinationId: sim.core.anchors.workspaceId })).status).toBe(404);
        expect((await api(sim, "POST", "sheets/1111111111111111/copy", body)).status).toBe(404);
        for (const include of ["attachments,discussions,filters,forms,rules,ruleRecipients,shares", "all"]) {
            expect((await api(sim, "POST", `${path}?include=${include}`, body)).status).toBe(200);
        }
        expect(sim.core.state().sheets.length).toBe(before + 2);
    });
});

describe("name limit", () => {
    const fiftyOne = "N".repeat(51);

    it("refuses a 51-character copy name with 1041 and creates nothing", async () => {
        const { sim } = context;
        const before = sim.core.state().sheets.length;
        const path = `sheets/${templateSheetId(sim, "Suppliers")}/copy`;
        const response = await api(sim, "POST", path, { destinationType: "folder", destinationId: sim.core.anchors.productsFolderId, newName: fiftyOne });
        expect(response.status).toBe(400);
        expect(response.body).toMatchObject({ errorCode: 1041, message: "The value for sheet.name must be 50 characters in length or less, but was 51." });
        expect(sim.core.state().sheets.length).toBe(before);
        expect((await api(sim, "POST", path, { destinationType: "folder", destinationId: sim.core.anchors.productsFolderId, newName: fiftyOne.slice(1) })).status).toBe(200);
    });

    it("refuses a 57-character rename with Smartsheet's exact message and keeps the old name", async () => {
        const { sim } = context;
        const sheetId = templateSheetId(sim, "Suppliers");
        const error = await sdk(sim)
            .sheets.updateSheet({ sheetId, body: { name: "x".repeat(57) } })
            .catch((rejection: unknown) => rejection);
        expect(error).toMatchObject({
            statusCode: 400,
            errorCode: 1041,
            message: "The value for sheet.name must be 50 characters in length or less, but was 57.",
        });
        expect((await api(sim, "GET", `sheets/${sheetId}`)).body.name).toBe("Suppliers");
    });

    it("refuses a 51-character folder name with folder.name and creates nothing", async () => {
        const { sim } = context;
        const before = sim.core.state().folders.length;
        const response = await api(sim, "POST", `folders/${sim.core.anchors.productsFolderId}/folders`, { name: fiftyOne });
        expect(response.body).toMatchObject({ errorCode: 1041, message: "The value for folder.name must be 50 characters in length or less, but was 51." });
        expect(sim.core.state().folders.length).toBe(before);
    });

    it("counts length in UTF-16 code units, as Smartsheet's Java does", async () => {
        const { sim } = context;
        const name = `${"a".repeat(48)}🚀`;
        expect(name.length).toBe(50);
        const path = `sheets/${templateSheetId(sim, "Suppliers")}`;
        expect((await api(sim, "PUT", path, { name })).status).toBe(200);
        const tooLong = await api(sim, "PUT", path, { name: `${name.slice(0, 47)}🚀🚀` });
        expect(tooLong.body.message).toBe("The value for sheet.name must be 50 characters in length or less, but was 51.");
    });
});
