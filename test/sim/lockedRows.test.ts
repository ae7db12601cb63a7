import { describe, expect, it } from "vitest";
import type { RunningSimulator } from "../../tools/smartsheet-sim";
import { admin, api, useSimulator } from "./simTestKit";

const context = useSimulator();

/** The seeded intake sheet's first three rows and its Status column. */
function intake(sim: RunningSimulator) {
    const sheet = sim.core.state().sheets.find((candidate) => candidate.id === sim.core.anchors.intakeSheetId)!;
    const status = sheet.columns.find((column) => column.title === "Status")!.id;
    const rowIds = sheet.rows.slice(0, 3).map((row) => row.id) as [number, number, number];
    expect(rowIds).toHaveLength(3);
    const statusOf = (rowId: number) => {
        const row = sim.core.state().sheets.find((candidate) => candidate.id === sheet.id)!.rows.find((candidate) => candidate.id === rowId)!;
        return row.cells.find((cell) => cell.columnId === status)?.value;
    };
    return { sheetId: sheet.id, status, rowIds, statusOf };
}

describe("POST /__sim/lockedRows", () => {
    it("locks and unlocks rows of a sheet and answers every row now locked in it; reset unlocks them all", async () => {
        const { sim } = context;
        const { sheetId, rowIds } = intake(sim);

        const locked = await admin(sim, "POST", "lockedRows", { sheetId, rowIds: [rowIds[0], rowIds[2]], locked: true });
        expect(locked).toMatchObject({ status: 200, body: { locked: [rowIds[0], rowIds[2]] } });
        const unlocked = await admin(sim, "POST", "lockedRows", { sheetId, rowIds: [rowIds[0]], locked: false });
        expect(unlocked.body).toEqual({ locked: [rowIds[2]] });
        const read = await api(sim, "GET", `sheets/${sheetId}?rowIds=${rowIds[2]}`);
        expect(read.body.rows[0]).toMatchObject({ id: rowIds[2], locked: true, lockedForUser: true });

        await admin(sim, "POST", "reset");
        expect((await admin(sim, "POST", "lockedRows", { sheetId, rowIds: [], locked: true })).body).toEqual({ locked: [] });
    });

    it("refuses an unknown row or sheet with 404 and a malformed body with 400, changing nothing", async () => {
        const { sim } = context;
        const { sheetId, rowIds } = intake(sim);
        expect((await admin(sim, "POST", "lockedRows", { sheetId, rowIds: [rowIds[0], 42], locked: true })).status).toBe(404);
        expect((await admin(sim, "POST", "lockedRows", { sheetId: 42, rowIds: [rowIds[0]], locked: true })).status).toBe(404);
        expect((await admin(sim, "POST", "lockedRows", { sheetId, rowIds: [rowIds[0]] })).status).toBe(400);
        expect((await admin(sim, "POST", "lockedRows", { sheetId, rowIds: [], locked: true })).body).toEqual({ locked: [] });
    });
});

describe("PUT /sheets/{id}/rows with a locked row", () => {
    it("fails the whole call with 403/1050 and the row's index and id, writing no row", async () => {
        const { sim } = context;
        const { sheetId, status, rowIds, statusOf } = intake(sim);
        await admin(sim, "POST", "lockedRows", { sheetId, rowIds: [rowIds[1]], locked: true });

        const answer = await api(sim, "PUT", `sheets/${sheetId}/rows`, rowIds.map((id) => ({ id, cells: [{ columnId: status, value: "Queued" }] })));

        expect(answer.status).toBe(403);
        expect(answer.body).toMatchObject({ errorCode: 1050, message: "You cannot edit a locked row.", detail: { index: 1, rowId: rowIds[1] } });
        expect(rowIds.map(statusOf)).not.toContain("Queued");
    });

    it("with allowPartialSuccess=true writes the other rows and answers PARTIAL_SUCCESS (resultCode 3) with the refused row in failedItems", async () => {
        const { sim } = context;
        const { sheetId, status, rowIds, statusOf } = intake(sim);
        await admin(sim, "POST", "lockedRows", { sheetId, rowIds: [rowIds[1]], locked: true });

        const answer = await api(
            sim,
            "PUT",
            `sheets/${sheetId}/rows?allowPartialSuccess=true`,
            rowIds.map((id) => ({ id, cells: [{ columnId: status, value: "Queued" }] })),
        );

        expect(answer.status).toBe(200);
        expect(answer.body).toMatchObject({ message: "PARTIAL_SUCCESS", resultCode: 3, version: expect.any(Number) });
        expect(answer.body.result.map((row: { id: number }) => row.id)).toEqual([rowIds[0], rowIds[2]]);
        expect(answer.body.failedItems).toEqual([
            { index: 1, rowId: rowIds[1], error: { errorCode: 1050, message: "You cannot edit a locked row.", refId: expect.any(String) } },
        ]);
        expect(rowIds.map(statusOf)).toEqual(["Queued", statusOf(rowIds[1]), "Queued"]);
        expect(statusOf(rowIds[1])).not.toBe("Queued");
    });

    it("with allowPartialSuccess=true and nothing refused answers SUCCESS (resultCode 0) without failedItems", async () => {
        const { sim } = context;
        const { sheetId, status, rowIds } = intake(sim);
        const answer = await api(sim, "PUT", `sheets/${sheetId}/rows?allowPartialSuccess=true`, [{ id: rowIds[0], cells: [{ columnId: status, value: "Queued" }] }]);
        expect(answer.body).toMatchObject({ message: "SUCCESS", resultCode: 0 });
        expect(answer.body).not.toHaveProperty("failedItems");
    });

    it("refuses to delete a locked row with 403/1092", async () => {
        const { sim } = context;
        const { sheetId, rowIds } = intake(sim);
        await admin(sim, "POST", "lockedRows", { sheetId, rowIds: [rowIds[0]], locked: true });
        const answer = await api(sim, "DELETE", `sheets/${sheetId}/rows?ids=${rowIds[0]}`);
        expect(answer).toMatchObject({ status: 403, body: { errorCode: 1092 } });
    });
});
