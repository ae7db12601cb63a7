import { describe, expect, it } from "vitest";
import { api, expectSmartsheetId, sdk, templateSheetId, useSimulator } from "./simTestKit";

const context = useSimulator();

describe("success shapes: reads unwrapped, writes in the SUCCESS envelope", () => {
    it("lists folder children as {data} with no lastKey on the last page; accessLevel only on sheets", async () => {
        const { sim } = context;
        const children = await sdk(sim).folders.getFolderChildren({
            folderId: sim.core.anchors.productsFolderId,
            queryParameters: { childrenResourceTypes: "sheets,folders" },
        });
        expect(Object.keys(children)).toEqual(["data"]);
        expect(children.data.map((item: { name: string }) => item.name)).toEqual(["Industrial", "Consumer"]);
        const folder = children.data[0];
        expect(Object.keys(folder).sort()).toEqual(["createdAt", "id", "modifiedAt", "name", "permalink", "resourceType"]);
        expect(folder.resourceType).toBe("folder");
        expectSmartsheetId(folder.id);
        expect(folder.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

        const templates = await sdk(sim).folders.getFolderChildren({ folderId: sim.core.anchors.templateFolderId });
        expect(templates.data[0]).toMatchObject({ resourceType: "sheet", accessLevel: "OWNER" });
    });

    it("creates a child folder in the envelope with {id, name, permalink}", async () => {
        const { sim } = context;
        const response = await sdk(sim).folders.createChildFolder({
            folderId: sim.core.anchors.productsFolderId,
            body: { name: "Marine" },
        });
        expect(response).toEqual({
            message: "SUCCESS",
            resultCode: 0,
            result: { id: expect.any(Number), name: "Marine", permalink: expect.stringMatching(/^https:\/\/app\.smartsheet\.com\/folders\//) },
        });
        expectSmartsheetId(response.result.id);
        expect(response.result.permalink).not.toContain(String(response.result.id));
    });

    it("copies a sheet in the envelope with {id, name, accessLevel, permalink}", async () => {
        const { sim } = context;
        const response = await sdk(sim).sheets.copySheet({
            sheetId: templateSheetId(sim, "Suppliers"),
            body: { destinationType: "folder", destinationId: sim.core.anchors.productsFolderId, newName: "Copied Suppliers" },
        });
        expect(response).toEqual({
            message: "SUCCESS",
            resultCode: 0,
            result: { id: expect.any(Number), name: "Copied Suppliers", accessLevel: "OWNER", permalink: expect.any(String) },
        });
        expect(response.result.permalink).toMatch(/^https:\/\/app\.smartsheet\.com\/sheets\/[A-Za-z0-9]+$/);
        expect(response.result.permalink).not.toContain(String(response.result.id));
    });

    it("renames a sheet in the envelope", async () => {
        const { sim } = context;
        const sheetId = templateSheetId(sim, "Suppliers");
        const response = await sdk(sim).sheets.updateSheet({ sheetId, body: { name: "Vendors" } });
        expect(response).toMatchObject({ message: "SUCCESS", resultCode: 0, result: { id: sheetId, name: "Vendors", accessLevel: "OWNER" } });
    });

    it("reads a sheet unwrapped; empty cells omit value; formula cells keep formula and omit value", async () => {
        const { sim } = context;
        const sheet = await sdk(sim).sheets.getSheet({ sheetId: sim.core.anchors.intakeSheetId });
        expect(sheet).not.toHaveProperty("result");
        expect(sheet).toMatchObject({
            id: sim.core.anchors.intakeSheetId,
            name: "Product Intake",
            version: expect.any(Number),
            totalRowCount: 4,
            accessLevel: "OWNER",
            permalink: expect.any(String),
            createdAt: expect.any(String),
            modifiedAt: expect.any(String),
            hasSummaryFields: false,
        });
        expect(sheet.columns[0]).toEqual(expect.objectContaining({ index: 0, title: "Product Code", type: "TEXT_NUMBER", primary: true }));
        expect(sheet.columns[1]).not.toHaveProperty("primary");
        const row = sheet.rows[0];
        expect(Object.keys(row)).toEqual(["id", "rowNumber", "expanded", "createdAt", "modifiedAt", "cells"]);
        expect(row.rowNumber).toBe(1);
        expect(row.cells[0]).toEqual({ columnId: sheet.columns[0].id, value: "IND-1042", displayValue: "IND-1042" });
        expect(row.cells[3]).toEqual({ columnId: sheet.columns[3].id, value: true });
        expect(row.cells[4]).toEqual({ columnId: sheet.columns[4].id });
        expect(sheet.rows[1].siblingId).toBe(row.id);

        const approvals = await sdk(sim).sheets.getSheet({ sheetId: templateSheetId(sim, "Approvals") });
        const changeCount = approvals.rows[0].cells[3];
        expect(changeCount).toEqual({ columnId: approvals.columns[3].id, formula: "=COUNTIF({Change Log Document}, Document@row)" });
    });

    it("deletes a sheet with {message, resultCode} and no result", async () => {
        const { sim } = context;
        const sheetId = templateSheetId(sim, "Suppliers");
        const response = await api(sim, "DELETE", `sheets/${sheetId}`);
        expect(response.status).toBe(200);
        expect(response.body).toEqual({ message: "SUCCESS", resultCode: 0 });
        expect((await api(sim, "GET", `sheets/${sheetId}`)).status).toBe(404);
    });

    it("answers row writes with result rows and the new version", async () => {
        const { sim } = context;
        const client = sdk(sim);
        const sheet = await client.sheets.getSheet({ sheetId: sim.core.anchors.intakeSheetId });
        const added = await client.sheets.addRows({
            sheetId: sheet.id,
            body: [{ toBottom: true, cells: [{ columnId: sheet.columns[0].id, value: "IND-2000" }] }],
        });
        expect(added).toMatchObject({ message: "SUCCESS", resultCode: 0, version: sheet.version + 1 });
        expect(added.result).toHaveLength(1);
        expect(added.result[0]).toMatchObject({ rowNumber: 5, cells: expect.any(Array) });

        const updated = await client.sheets.updateRow({
            sheetId: sheet.id,
            body: [{ id: added.result[0].id, cells: [{ columnId: sheet.columns[4].id, value: "Done" }] }],
        });
        expect(updated).toMatchObject({ message: "SUCCESS", resultCode: 0, version: sheet.version + 2 });
        expect(updated.result[0].cells[4]).toEqual({ columnId: sheet.columns[4].id, value: "Done", displayValue: "Done" });
    });

    it("answers a column update with the column in the envelope", async () => {
        const { sim } = context;
        const sheetId = templateSheetId(sim, "Change Log");
        const sheet = await sdk(sim).sheets.getSheet({ sheetId });
        const response = await sdk(sim).sheets.updateColumn({
            sheetId,
            columnId: sheet.columns[3].id,
            body: { formula: '=IF(COUNTIF({Other}, "Pending") > 0, "Awaiting approval", "Clear")' },
        });
        expect(response).toEqual({
            message: "SUCCESS",
            resultCode: 0,
            result: expect.objectContaining({
                id: sheet.columns[3].id,
                index: 3,
                title: "Approval Status",
                type: "TEXT_NUMBER",
                formula: '=IF(COUNTIF({Other}, "Pending") > 0, "Awaiting approval", "Clear")',
            }),
        });
    });

    it("lists cross-sheet references as an IndexResult, reads one unwrapped, creates in the envelope", async () => {
        const { sim } = context;
        const client = sdk(sim);
        const sheetId = templateSheetId(sim, "Document Register");
        const list = await client.sheets.listCrossSheetReferences({ sheetId });
        expect(list).toEqual({ pageNumber: 1, pageSize: 100, totalPages: 1, totalCount: 1, data: [expect.any(Object)] });
        const reference = list.data[0];
        expect(Object.keys(reference)).toEqual(["id", "name", "sourceSheetId", "startColumnId", "endColumnId", "status"]);
        expect(await client.sheets.getCrossSheetReference({ sheetId, crossSheetReferenceId: reference.id })).toEqual(reference);

        const created = await client.sheets.createCrossSheetReference({
            sheetId,
            body: { name: "Risks", sourceSheetId: reference.sourceSheetId, startColumnId: reference.startColumnId, endColumnId: reference.endColumnId },
        });
        expect(created).toEqual({
            message: "SUCCESS",
            resultCode: 0,
            result: {
                id: expect.any(Number),
                name: "Risks",
                sourceSheetId: reference.sourceSheetId,
                startColumnId: reference.startColumnId,
                endColumnId: reference.endColumnId,
                status: "OK",
            },
        });
    });

    it("reads the summary as {fields}, the field list as an IndexResult, and writes in the envelope with version", async () => {
        const { sim } = context;
        const client = sdk(sim);
        const sheetId = templateSheetId(sim, "Document Register");
        const summary = await client.sheets.getSummary({ sheetId });
        expect(Object.keys(summary)).toEqual(["fields"]);
        expect(summary.fields[0]).toEqual({
            id: expect.any(Number),
            index: 0,
            title: "Product Code",
            type: "TEXT_NUMBER",
            locked: false,
            lockedForUser: false,
            createdAt: expect.any(String),
            modifiedAt: expect.any(String),
        });
        const fields = await client.sheets.getSummaryFields({ sheetId });
        expect(fields).toMatchObject({ pageNumber: 1, pageSize: 100, totalPages: 1, totalCount: 3 });
        expect(fields.data).toEqual(summary.fields);

        const added = await client.sheets.addSummaryFields({ sheetId, body: [{ title: "Market", type: "TEXT_NUMBER", objectValue: "EU" }] });
        expect(added).toMatchObject({ message: "SUCCESS", resultCode: 0, version: expect.any(Number) });
        expect(added.result[0]).toMatchObject({ title: "Market", objectValue: "EU", displayValue: "EU", index: 3 });
        const updated = await client.sheets.updateSummaryFields({ sheetId, body: [{ id: summary.fields[0].id, objectValue: "IND-1042" }] });
        expect(updated).toMatchObject({ message: "SUCCESS", resultCode: 0, version: added.version + 1 });
        expect(updated.result[0]).toMatchObject({ id: summary.fields[0].id, objectValue: "IND-1042" });
    });

    it("answers errors as application/json;charset=UTF-8 {errorCode, message, refId}", async () => {
        const { sim } = context;
        const response = await api(sim, "GET", "sheets/1234567890123456");
        expect(response.status).toBe(404);
        expect(response.contentType).toBe("application/json;charset=UTF-8");
        expect(response.body).toEqual({ errorCode: 1006, message: "Not Found.", refId: expect.stringMatching(/^[a-z0-9]+$/) });
    });

    it("serves the same paths without the /2.0 prefix", async () => {
        const { sim } = context;
        const client = sdk({ ...sim, baseUrl: `http://127.0.0.1:${sim.port}/` });
        const sheet = await client.sheets.getSheet({ sheetId: sim.core.anchors.filingIndexSheetId });
        expect(sheet.name).toBe("Filing Index");
    });
});
