import { describe, expect, it } from "vitest";
import { api, sdk, templateSheetId, useSimulator } from "./simTestKit";

const context = useSimulator();

function fieldsPath(): string {
    return `sheets/${templateSheetId(context.sim, "Document Register")}/summary/fields`;
}

describe("sheet summary fields", () => {
    it("stamps the Product Code field by id with objectValue", async () => {
        const { sim } = context;
        const client = sdk(sim);
        const sheetId = templateSheetId(sim, "Document Register");
        const { fields } = await client.sheets.getSummary({ sheetId });
        const productCode = fields.find((field: { title: string }) => field.title === "Product Code");
        expect(productCode).not.toHaveProperty("objectValue");
        await client.sheets.updateSummaryFields({ sheetId, body: [{ id: productCode.id, objectValue: "IND-1042" }] });
        const after = await client.sheets.getSummary({ sheetId });
        expect(after.fields[0]).toMatchObject({ id: productCode.id, title: "Product Code", objectValue: "IND-1042", displayValue: "IND-1042" });
        expect(after.fields[1]).toMatchObject({ title: "Approved Documents", formula: '=COUNTIF({Approvals Decision}, "Approved")' });
        expect(after.fields[1]).not.toHaveProperty("objectValue");
    });

    it("refuses a duplicate title with 1193 unless renameIfConflict=true", async () => {
        const { sim } = context;
        const duplicate = await api(sim, "POST", fieldsPath(), [{ title: "Owner", type: "TEXT_NUMBER", objectValue: "QA" }]);
        expect(duplicate).toMatchObject({ status: 400, body: { errorCode: 1193 } });
        const renamed = await api(sim, "POST", `${fieldsPath()}?renameIfConflict=true`, [{ title: "Owner", type: "TEXT_NUMBER", objectValue: "QA" }]);
        expect(renamed.body.result[0]).toMatchObject({ title: "Owner (1)", objectValue: "QA" });
        const twice = await api(sim, "POST", fieldsPath(), [{ title: "Region" }, { title: "Region" }]);
        expect(twice.body.errorCode).toBe(1208);
        const retitle = await api(sim, "PUT", fieldsPath(), [{ id: renamed.body.result[0].id, title: "Owner" }]);
        expect(retitle.body.errorCode).toBe(1193);
    });

    it("adds fields at an index with a formula or a value, never both", async () => {
        const { sim } = context;
        const added = await api(sim, "POST", fieldsPath(), [{ title: "Open Risks", type: "TEXT_NUMBER", formula: "=COUNT(1)", index: 0 }]);
        expect(added.body.result[0]).toMatchObject({ index: 0, title: "Open Risks", formula: "=COUNT(1)" });
        const summary = (await api(sim, "GET", `sheets/${templateSheetId(sim, "Document Register")}/summary`)).body;
        expect(summary.fields.map((field: { title: string }) => field.title)).toEqual(["Open Risks", "Product Code", "Approved Documents", "Owner"]);
        const both = await api(sim, "POST", fieldsPath(), [{ title: "Bad", formula: "=1", objectValue: 1 }]);
        expect(both.status).toBe(400);
        expect((await api(sim, "POST", fieldsPath(), [{ type: "TEXT_NUMBER" }])).body.errorCode).toBe(1012);
    });

    it("replaces a formula with a value and clears a value with null", async () => {
        const { sim } = context;
        const { fields } = (await api(sim, "GET", `sheets/${templateSheetId(sim, "Document Register")}/summary`)).body;
        const [, approved, owner] = fields;
        const response = await api(sim, "PUT", fieldsPath(), [
            { id: approved.id, objectValue: 3 },
            { id: owner.id, objectValue: null },
        ]);
        expect(response.body.result[0]).toMatchObject({ objectValue: 3, displayValue: "3" });
        expect(response.body.result[0]).not.toHaveProperty("formula");
        expect(response.body.result[1]).not.toHaveProperty("objectValue");
        expect((await api(sim, "PUT", fieldsPath(), [{ id: 1111111111111111, objectValue: 1 }])).status).toBe(404);
    });

    it("deletes fields by ids and answers the ids deleted with the new version", async () => {
        const { sim } = context;
        const sheetId = templateSheetId(sim, "Document Register");
        const [productCode, approved, owner] = (await api(sim, "GET", `sheets/${sheetId}/summary`)).body.fields;
        const version = (await api(sim, "GET", `sheets/${sheetId}`)).body.version;
        const response = await api(sim, "DELETE", `${fieldsPath()}?ids=${productCode.id},${owner.id}`);
        expect(response.status).toBe(200);
        expect(response.body).toEqual({ message: "SUCCESS", resultCode: 0, result: [productCode.id, owner.id], version: version + 1 });
        const { fields } = (await api(sim, "GET", `sheets/${sheetId}/summary`)).body;
        expect(fields.map((field: { id: number; index: number; title: string }) => [field.id, field.index, field.title])).toEqual([
            [approved.id, 0, "Approved Documents"],
        ]);
    });

    it("refuses an unknown id with 404 and deletes nothing, unless ignoreSummaryFieldsNotFound=true", async () => {
        const { sim } = context;
        const sheetId = templateSheetId(sim, "Document Register");
        const [productCode] = (await api(sim, "GET", `sheets/${sheetId}/summary`)).body.fields;
        const unknown = 1111111111111111;
        const refused = await api(sim, "DELETE", `${fieldsPath()}?ids=${productCode.id},${unknown}`);
        expect(refused).toMatchObject({ status: 404, body: { errorCode: 1006, message: "Not Found." } });
        expect((await api(sim, "DELETE", `${fieldsPath()}?ids=${productCode.id},${unknown}&ignoreSummaryFieldsNotFound=false`)).status).toBe(404);
        expect((await api(sim, "GET", `sheets/${sheetId}/summary`)).body.fields).toHaveLength(3);

        const ignored = await api(sim, "DELETE", `${fieldsPath()}?ids=${productCode.id},${unknown}&ignoreSummaryFieldsNotFound=true`);
        expect(ignored.status).toBe(200);
        expect(ignored.body.result).toEqual([productCode.id]);
        expect((await api(sim, "GET", `sheets/${sheetId}/summary`)).body.fields.map((field: { title: string }) => field.title)).toEqual(["Approved Documents", "Owner"]);
    });

    it("requires ids (400/1009) and answers 404 for a sheet that does not exist", async () => {
        const { sim } = context;
        expect((await api(sim, "DELETE", fieldsPath())).body).toMatchObject({
            errorCode: 1009,
            message: "A required parameter is missing from your request: ids.",
        });
        expect((await api(sim, "DELETE", `${fieldsPath()}?ids=abc`)).body.errorCode).toBe(1018);
        expect((await api(sim, "DELETE", "sheets/1111111111111111/summary/fields?ids=1")).status).toBe(404);
        expect(sim.core.calls().byOperation.deleteSummaryFields).toBe(3);
    });

    it("lets a fault aimed at deleteSummaryFields answer for it and delete nothing", async () => {
        const { sim } = context;
        const sheetId = templateSheetId(sim, "Document Register");
        const [productCode] = (await api(sim, "GET", `sheets/${sheetId}/summary`)).body.fields;
        sim.core.setFaults([{ op: "deleteSummaryFields", kind: "error4002" }]);
        expect((await api(sim, "DELETE", `${fieldsPath()}?ids=${productCode.id}`)).body.errorCode).toBe(4002);
        expect(sim.core.calls().log.at(-1)).toMatchObject({ op: "deleteSummaryFields", status: 500, fault: "error4002" });
        expect((await api(sim, "GET", `sheets/${sheetId}/summary`)).body.fields).toHaveLength(3);
    });

    it("flags hasSummaryFields on the sheet", async () => {
        const { sim } = context;
        expect((await api(sim, "GET", `sheets/${templateSheetId(sim, "Document Register")}`)).body.hasSummaryFields).toBe(true);
        expect((await api(sim, "GET", `sheets/${templateSheetId(sim, "Approvals")}`)).body.hasSummaryFields).toBe(false);
    });
});
