import { describe, expect, it } from "vitest";
import { SimulatorCore } from "../../tools/smartsheet-sim";
import { admin, api, useSimulator } from "./simTestKit";

const context = useSimulator({ sites: 2, tokens: ["sim-token", "ops-token"] });

/** The product codes on a site's intake sheet. */
function codesOn(intakeSheetId: number): unknown[] {
    const state = context.sim.core.state();
    const intake = state.sheets.find((sheet) => sheet.id === intakeSheetId)!;
    const code = intake.columns.find((column) => column.title === "Product Code")!.id;
    return intake.rows.map((row) => row.cells.find((cell) => cell.columnId === code)?.value);
}

describe("a simulator serving two customer sites (SIM_SITES=2)", () => {
    it("lists each site with its token and anchors in /__sim/state; the first keeps today's anchors, ids and token", async () => {
        const { sim } = context;
        const state = (await admin(sim, "GET", "state")).body;
        expect(state.sites).toEqual([
            { name: "demo", token: "sim-token", ...pick(sim.core.anchors) },
            {
                name: "demo-2",
                token: "sim-token-2",
                intakeSheetId: expect.any(Number),
                templateFolderId: expect.any(Number),
                productsFolderId: expect.any(Number),
                filingIndexSheetId: expect.any(Number),
            },
        ]);
        expect(pick(state)).toEqual(pick(sim.core.anchors));
        // Seeded first from the same ids: one site or two, the first site's ids are the same.
        expect(new SimulatorCore().anchors).toEqual(sim.core.anchors);
        const [first, second] = state.sites;
        for (const key of ["intakeSheetId", "templateFolderId", "productsFolderId", "filingIndexSheetId"]) expect(second[key]).not.toBe(first[key]);
    });

    it("seeds each site its own workspace, intake sheet and product codes", () => {
        const [first, second] = context.sim.core.sites();
        expect(codesOn(first!.intakeSheetId)).toEqual(["IND-1042", "CON-2201", "IND-1043", "CON-2202"]);
        expect(codesOn(second!.intakeSheetId)).toEqual(["IND-1042-S2", "CON-2201-S2", "IND-1043-S2", "CON-2202-S2"]);
        const names = [...new Set(context.sim.core.state().folders.filter((folder) => folder.name === "Products").map((folder) => folder.id))];
        expect(names).toHaveLength(2);
    });

    it("lets a site's token reach only its own workspace, as a customer's token would; a token of no site reaches both", async () => {
        const { sim } = context;
        const [first, second] = sim.core.sites();
        expect((await api(sim, "GET", `sheets/${second!.intakeSheetId}`, undefined, { token: "sim-token-2" })).status).toBe(200);
        const refused = await api(sim, "GET", `sheets/${first!.intakeSheetId}`, undefined, { token: "sim-token-2" });
        expect(refused.status).toBe(403);
        expect(refused.body).toMatchObject({ errorCode: 1004 });
        expect((await api(sim, "GET", `folders/${second!.templateFolderId}/children`, undefined, { token: "sim-token" })).status).toBe(403);
        const template = (await api(sim, "GET", `folders/${first!.templateFolderId}/children`)).body.data[0];
        // A copy of site 1's template into site 2's products folder: refused for both tokens, by the source or the destination.
        const copy = { destinationType: "folder", destinationId: second!.productsFolderId, newName: "Stolen Template" };
        expect((await api(sim, "POST", `sheets/${template.id}/copy`, copy, { token: "sim-token" })).status).toBe(403);
        expect((await api(sim, "POST", `sheets/${template.id}/copy`, copy, { token: "sim-token-2" })).status).toBe(403);
        for (const site of [first!, second!]) expect((await api(sim, "GET", `sheets/${site.filingIndexSheetId}`, undefined, { token: "ops-token" })).status).toBe(200);
    });

    it("counts each token's calls apart", async () => {
        const { sim } = context;
        const [first, second] = sim.core.sites();
        await api(sim, "GET", `sheets/${first!.intakeSheetId}`);
        await api(sim, "GET", `sheets/${second!.intakeSheetId}`, undefined, { token: "sim-token-2" });
        await api(sim, "GET", `sheets/${second!.filingIndexSheetId}`, undefined, { token: "sim-token-2" });
        await api(sim, "GET", `sheets/${second!.filingIndexSheetId}`, undefined, { token: "not-a-token" });
        expect((await admin(sim, "GET", "calls")).body.byToken).toEqual({ "sim-token": 1, "sim-token-2": 2, "(unknown)": 1 });
    });

    it("comes back after a reset with the same sites and ids", async () => {
        const { sim } = context;
        const before = sim.core.sites();
        await admin(sim, "POST", "reset");
        expect(sim.core.sites()).toEqual(before);
    });
});

function pick(anchors: { intakeSheetId?: unknown; templateFolderId?: unknown; productsFolderId?: unknown; filingIndexSheetId?: unknown }) {
    return {
        intakeSheetId: anchors.intakeSheetId,
        templateFolderId: anchors.templateFolderId,
        productsFolderId: anchors.productsFolderId,
        filingIndexSheetId: anchors.filingIndexSheetId,
    };
}
