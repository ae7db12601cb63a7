/**
 * The answers of the operations template convergence calls (getColumns, addColumn, updateColumn,
 * deleteColumn, deleteSummaryFields, updateSheet, and updateRows' 1302) against Smartsheet's OpenAPI description and its
 * Error Code List, read from the reference data beside the checkout (openApiReference.ts). Where
 * there is none, as on a fresh clone, this file is skipped, and says so.
 */
import { describe, expect, it } from "vitest";
import type { RunningSimulator } from "../../tools/smartsheet-sim";
import { errorEnvelopeIssues, isListedError, objectIssues, REFERENCE_FILE, responseIssues } from "./openApiReference";
import { api, templateSheetId, useSimulator, type RawResponse } from "./simTestKit";

const context = useSimulator();

async function intake(sim: RunningSimulator): Promise<{ path: string; columnId: (title: string) => number }> {
    const path = `sheets/${sim.core.anchors.intakeSheetId}/columns`;
    const columns = (await api(sim, "GET", path)).body.data as Array<{ id: number; title: string }>;
    return { path, columnId: (title) => columns.find((column) => column.title === title)!.id };
}

function expectConforms(operation: string, response: RawResponse): void {
    expect(response.status).toBe(200);
    expect(responseIssues(operation, response.body)).toEqual([]);
}

/** Each column answered, whole, against the reference's Column object. */
function expectColumns(columns: unknown[]): void {
    expect(columns.length).toBeGreaterThan(0);
    for (const column of columns) expect(objectIssues("Column", column)).toEqual([]);
}

describe.skipIf(!REFERENCE_FILE)("answers as Smartsheet's OpenAPI description gives them", () => {
    it("the check itself finds a wrong type, an unknown enum value and an error not in the list", () => {
        expect(responseIssues("POST /sheets/{sheetId}/columns", { message: "SUCCESS", resultCode: 0, result: [{ id: "1", type: "TEXT" }] })).toHaveLength(2);
        expect(responseIssues("DELETE /sheets/{sheetId}/summary/fields", { message: "SUCCESS", resultCode: 0, result: [{ id: 1 }] })).toHaveLength(1);
        expect(responseIssues("GET /sheets/{sheetId}/columns", { pageNumber: "1", data: [] })).toHaveLength(1);
        expect(errorEnvelopeIssues({ errorCode: "1056", message: "x", refId: "a" })).toHaveLength(1);
        expect(objectIssues("Column", { id: 1, version: 3, systemColumnType: "CREATED", locked: "yes" })).toHaveLength(3);
        expect(isListedError(400, 1058, "Column type of DATE does not support symbol of type STAR.")).toBe(true);
        expect(isListedError(404, 1056, "Column titles must be unique.")).toBe(false);
        expect(isListedError(400, 1056, "Column title is already in use.")).toBe(false);
    });

    it("GET /sheets/{sheetId}/columns, paged and with includeAll", async () => {
        const { sim } = context;
        const { path } = await intake(sim);
        await api(sim, "POST", path, [
            { title: "Kind", type: "PICKLIST", options: ["A"], index: 6 },
            { title: "Created", type: "DATETIME", systemColumnType: "CREATED_DATE", locked: true, hidden: true, description: "d", index: 6 },
        ]);
        expectConforms("GET /sheets/{sheetId}/columns", await api(sim, "GET", `${path}?pageSize=3&page=2`));
        const all = await api(sim, "GET", `${path}?includeAll=true`);
        expectConforms("GET /sheets/{sheetId}/columns", all);
        expectColumns(all.body.data);
    });

    it("POST /sheets/{sheetId}/columns, one column and several", async () => {
        const { sim } = context;
        const { path } = await intake(sim);
        const one = await api(sim, "POST", path, { title: "One", type: "TEXT_NUMBER", index: 1 });
        expectConforms("POST /sheets/{sheetId}/columns", one);
        const several = await api(sim, "POST", path, [
            { title: "Two", type: "MULTI_PICKLIST", options: ["x", "y"], index: 2 },
            { title: "Three", type: "CHECKBOX", symbol: "STAR", formula: "=1", index: 2 },
            { title: "Four", type: "CONTACT_LIST", systemColumnType: "MODIFIED_BY", width: 90, validation: true, index: 2 },
        ]);
        expectConforms("POST /sheets/{sheetId}/columns", several);
        expectColumns([...one.body.result, ...several.body.result]);
    });

    it("PUT /sheets/{sheetId}/columns/{columnId}", async () => {
        const { sim } = context;
        const { path, columnId } = await intake(sim);
        const retyped = await api(sim, "PUT", `${path}/${columnId("Status")}`, { title: "State", type: "PICKLIST", options: ["Open"], index: 0, locked: true });
        expectConforms("PUT /sheets/{sheetId}/columns/{columnId}", retyped);
        const formula = await api(sim, "PUT", `${path}/${columnId("Folder")}`, { formula: "=1", description: "d", hidden: true });
        expectConforms("PUT /sheets/{sheetId}/columns/{columnId}", formula);
        expectColumns([retyped.body.result, formula.body.result]);
    });

    it("DELETE /sheets/{sheetId}/columns/{columnId}", async () => {
        const { sim } = context;
        const { path, columnId } = await intake(sim);
        expectConforms("DELETE /sheets/{sheetId}/columns/{columnId}", await api(sim, "DELETE", `${path}/${columnId("Folder")}`));
    });

    it("DELETE /sheets/{sheetId}/summary/fields", async () => {
        const { sim } = context;
        const sheetId = templateSheetId(sim, "Document Register");
        const { fields } = (await api(sim, "GET", `sheets/${sheetId}/summary`)).body;
        const response = await api(sim, "DELETE", `sheets/${sheetId}/summary/fields?ids=${fields[0].id},1&ignoreSummaryFieldsNotFound=true`);
        expectConforms("DELETE /sheets/{sheetId}/summary/fields", response);
        expect(response.body.result).toEqual([fields[0].id]);
    });

    it("PUT /sheets/{sheetId} (rename)", async () => {
        const { sim } = context;
        expectConforms("PUT /sheets/{sheetId}", await api(sim, "PUT", `sheets/${templateSheetId(sim, "Suppliers")}`, { name: "Vendors" }));
    });

    it("every error they answer is in the Error Code List with its status and message, in the error envelope", async () => {
        const { sim } = context;
        const { path, columnId } = await intake(sim);
        const summary = `sheets/${templateSheetId(sim, "Document Register")}/summary/fields`;
        const column = (title: string) => `${path}/${columnId(title)}`;
        const text = (title: string, index = 1) => ({ title, type: "TEXT_NUMBER", index });
        expect((await api(sim, "POST", path, { title: "Serial", type: "TEXT_NUMBER", systemColumnType: "AUTO_NUMBER", index: 6 })).status).toBe(200);
        expect((await api(sim, "PUT", column("Status"), { formula: "=1" })).status).toBe(200);
        const firstRow = (await api(sim, "GET", `sheets/${sim.core.anchors.intakeSheetId}`)).body.rows[0].id;
        const requests: Array<[number, () => Promise<RawResponse>]> = [
            [1006, () => api(sim, "DELETE", `${path}/1111111111111111`)],
            [1009, () => api(sim, "DELETE", summary)],
            [1006, () => api(sim, "DELETE", `${summary}?ids=1111111111111111`)],
            [1012, () => api(sim, "POST", path, { title: "T", type: "TEXT_NUMBER" })],
            [1018, () => api(sim, "POST", path, { title: "T", type: "TEXT", index: 0 })],
            [1018, () => api(sim, "POST", path, text("T", 99))],
            [1018, () => api(sim, "GET", `${path}?page=0`)],
            [1024, () => api(sim, "POST", path)],
            [1041, () => api(sim, "PUT", `sheets/${templateSheetId(sim, "Suppliers")}`, { name: "x".repeat(51) })],
            [1055, () => api(sim, "POST", path, { ...text("T"), primary: true })],
            [1056, () => api(sim, "POST", path, text("status"))],
            [1056, () => api(sim, "PUT", column("Status"), { title: "FOLDER" })],
            [1057, () => api(sim, "PUT", column("Product Code"), { type: "CHECKBOX" })],
            [1058, () => api(sim, "POST", path, { ...text("T"), symbol: "STAR" })],
            [1059, () => api(sim, "POST", path, { title: "T", type: "PICKLIST", symbol: "RYG", options: ["Red"], index: 1 })],
            [1060, () => api(sim, "PUT", column("Status"), { type: "DATE", options: ["a"] })],
            [1065, () => api(sim, "DELETE", column("Product Code"))],
            [1077, () => api(sim, "POST", path, { ...text("T"), systemColumnType: "AUTO_NUMBER" })],
            [1079, () => api(sim, "POST", path, { ...text("T"), systemColumnType: "MODIFIED_DATE" })],
            [1089, () => api(sim, "PUT", column("Status"), { type: "DATETIME" })],
            [1090, () => api(sim, "PUT", column("Product Line"), { options: ["a"] })],
            [1133, () => api(sim, "POST", path, [text("T"), text("t")])],
            [1134, () => api(sim, "POST", path, [1, 2].map((n) => ({ ...text(`T${n}`), type: "CONTACT_LIST", systemColumnType: "CREATED_BY" })))],
            [1135, () => api(sim, "POST", path, [text("T1", 1), text("T2", 2)])],
            [1142, () => api(sim, "POST", path, { ...text("T"), type: "PREDECESSOR" })],
            [1162, () => api(sim, "PUT", column("Folder"), { formula: "1+1" })],
            [1302, () => api(sim, "PUT", `sheets/${sim.core.anchors.intakeSheetId}/rows`, [{ id: firstRow, cells: [{ columnId: columnId("Status"), value: "x" }] }])],
        ];
        for (const [errorCode, request] of requests) {
            const { status, body } = await request();
            expect({ errorCode: body.errorCode, listed: isListedError(status, body.errorCode, body.message), envelope: errorEnvelopeIssues(body) }).toEqual({
                errorCode,
                listed: true,
                envelope: [],
            });
        }
    });
});
