import { describe, expect, it } from "vitest";
import { api, sdk, useSimulator } from "./simTestKit";

const context = useSimulator({ rateLimit: { requests: 10_000, windowMs: 60_000 } });

async function createFolders(parentId: number, count: number): Promise<number[]> {
    const client = sdk(context.sim);
    const ids: number[] = [];
    for (let i = 0; i < count; i++) {
        const response = await client.folders.createChildFolder({ folderId: parentId, body: { name: `Line ${String(i).padStart(3, "0")}` } });
        ids.push(response.result.id);
    }
    return ids;
}

describe("GET /folders/{id}/children", () => {
    it("pages through more than 100 children with lastKey, in creation order, omitting lastKey on the last page", async () => {
        const { sim } = context;
        const parentId = sim.core.anchors.productsFolderId;
        const created = await createFolders(parentId, 201);
        const client = sdk(sim);

        const pages: Array<{ data: Array<{ id: number; name: string }>; lastKey?: string }> = [];
        let lastKey: string | undefined;
        do {
            const page = await client.folders.getFolderChildren({
                folderId: parentId,
                queryParameters: { childrenResourceTypes: "sheets,folders", ...(lastKey ? { lastKey } : {}) },
            });
            pages.push(page);
            lastKey = page.lastKey;
        } while (lastKey !== undefined);

        expect(pages.map((page) => page.data.length)).toEqual([100, 100, 3]);
        expect(pages[0]?.lastKey).toEqual(expect.any(String));
        expect(pages[2]).not.toHaveProperty("lastKey");
        const ids = pages.flatMap((page) => page.data.map((item) => item.id));
        expect(ids.slice(2)).toEqual(created);
        expect(new Set(ids).size).toBe(203);
        expect(pages[0]?.data.slice(0, 3).map((item) => item.name)).toEqual(["Industrial", "Consumer", "Line 000"]);
    });

    it("takes maxItems between 100 and 1000 and refuses others with 1018", async () => {
        const { sim } = context;
        const parentId = sim.core.anchors.productsFolderId;
        await createFolders(parentId, 110);
        const all = await api(sim, "GET", `folders/${parentId}/children?maxItems=1000`);
        expect(all.body.data).toHaveLength(112);
        expect(all.body).not.toHaveProperty("lastKey");
        const first = await api(sim, "GET", `folders/${parentId}/children?maxItems=100`);
        expect(first.body.data).toHaveLength(100);

        for (const bad of ["99", "1001", "abc"]) {
            const response = await api(sim, "GET", `folders/${parentId}/children?maxItems=${bad}`);
            expect(response.status).toBe(400);
            expect(response.body).toMatchObject({ errorCode: 1018, message: `The value ${bad} was not valid for the parameter maxItems.` });
        }
    });

    it("filters by childrenResourceTypes", async () => {
        const { sim } = context;
        const operations = sim.core.state().folders.find((folder) => folder.name === "Operations");
        const path = `folders/${operations?.id}/children`;
        expect((await api(sim, "GET", `${path}?childrenResourceTypes=sheets`)).body.data.map((item: { name: string }) => item.name)).toEqual([
            "Product Intake",
            "Filing Index",
        ]);
        expect((await api(sim, "GET", `${path}?childrenResourceTypes=folders`)).body.data).toEqual([]);
        expect((await api(sim, "GET", `${path}?childrenResourceTypes=reports,sights`)).body.data).toEqual([]);
        expect((await api(sim, "GET", path)).body.data).toHaveLength(2);
        expect((await api(sim, "GET", `${path}?childrenResourceTypes=dashboards`)).body.errorCode).toBe(1018);
    });

    it("refuses a lastKey it did not issue for this folder", async () => {
        const { sim } = context;
        const parentId = sim.core.anchors.productsFolderId;
        const response = await api(sim, "GET", `folders/${parentId}/children?lastKey=bogus`);
        expect(response.status).toBe(400);
        expect(response.body.errorCode).toBe(1018);
    });

    it("answers 404/1006 for an unknown folder and for the workspace id, which is not a folder", async () => {
        const { sim } = context;
        expect((await api(sim, "GET", "folders/1111111111111111/children")).body.errorCode).toBe(1006);
        const workspace = await api(sim, "GET", `folders/${sim.core.anchors.workspaceId}/children`);
        expect(workspace.status).toBe(404);
    });
});
