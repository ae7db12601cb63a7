import { describe, expect, it } from "vitest";
import { api, useSimulator } from "./simTestKit";

const context = useSimulator();

describe("DELETE /folders/{id}", () => {
    it("deletes the folder with its sheets and subfolders, and a second delete is 404", async () => {
        const { sim } = context;
        const parent = sim.core.anchors.productsFolderId;
        const folder = await api(sim, "POST", `folders/${parent}/folders`, { name: "Doomed" });
        const folderId = folder.body.result.id as number;
        const inner = await api(sim, "POST", `folders/${folderId}/folders`, { name: "Inner" });
        const templateId = sim.core.state().sheets.find((sheet) => sheet.folderId === sim.core.anchors.templateFolderId)!.id;
        const copy = await api(sim, "POST", `sheets/${templateId}/copy`, { destinationType: "folder", destinationId: inner.body.result.id, newName: "Inside" });

        const deleted = await api(sim, "DELETE", `folders/${folderId}`);
        expect(deleted.status).toBe(200);
        expect(deleted.body).toMatchObject({ message: "SUCCESS", resultCode: 0 });
        const state = sim.core.state();
        expect(state.folders.map((candidate) => candidate.id)).not.toContain(folderId);
        expect(state.folders.map((candidate) => candidate.id)).not.toContain(inner.body.result.id);
        expect(state.sheets.map((sheet) => sheet.id)).not.toContain(copy.body.result.id);

        const again = await api(sim, "DELETE", `folders/${folderId}`);
        expect(again.status).toBe(404);
        expect(again.body).toMatchObject({ errorCode: 1006 });
    });
});

describe("DELETE /sheets/{id}/rows", () => {
    it("deletes the rows named in ids and answers their ids", async () => {
        const { sim } = context;
        const sheetId = sim.core.anchors.filingIndexSheetId;
        const column = sim.core.state().sheets.find((sheet) => sheet.id === sheetId)!.columns[0]!.id;
        const added = await api(sim, "POST", `sheets/${sheetId}/rows`, [
            { toBottom: true, cells: [{ columnId: column, value: "A" }] },
            { toBottom: true, cells: [{ columnId: column, value: "B" }] },
        ]);
        const [first, second] = added.body.result.map((row: { id: number }) => row.id) as number[];

        const deleted = await api(sim, "DELETE", `sheets/${sheetId}/rows?ids=${first}`);
        expect(deleted.status).toBe(200);
        expect(deleted.body.result).toEqual([first]);
        const rows = sim.core.state().sheets.find((sheet) => sheet.id === sheetId)!.rows.map((row) => row.id);
        expect(rows).not.toContain(first);
        expect(rows).toContain(second);
    });

    it("refuses an unknown row id with 404 unless ignoreRowsNotFound is set, and deletes nothing then", async () => {
        const { sim } = context;
        const sheetId = sim.core.anchors.filingIndexSheetId;
        const column = sim.core.state().sheets.find((sheet) => sheet.id === sheetId)!.columns[0]!.id;
        const added = await api(sim, "POST", `sheets/${sheetId}/rows`, [{ toBottom: true, cells: [{ columnId: column, value: "A" }] }]);
        const rowId = added.body.result[0].id as number;

        const refused = await api(sim, "DELETE", `sheets/${sheetId}/rows?ids=${rowId},1234`);
        expect(refused.status).toBe(404);
        expect(sim.core.state().sheets.find((sheet) => sheet.id === sheetId)!.rows.map((row) => row.id)).toContain(rowId);

        const ignored = await api(sim, "DELETE", `sheets/${sheetId}/rows?ids=${rowId},1234&ignoreRowsNotFound=true`);
        expect(ignored.status).toBe(200);
        expect(ignored.body.result).toEqual([rowId]);
    });
});
