import { describe, expect, it } from "vitest";
import { shapeOfProduct, shapeOfSheet, shapeOfTemplate, TemplateShape } from "../../src/shared/convergence/TemplateShape";
import type { Sheet, SummaryField } from "../../src/shared/smartsheet/model";

/** The Risk Register template sheet (11) as getSheet answers it: columns out of order, a column formula, a cell formula reading the Schedule (12). */
function riskRegister(overrides: Partial<Sheet> = {}): Sheet {
    return {
        id: 11,
        name: "Risk Register",
        columns: [
            { id: 103, index: 2, title: "Score", type: "TEXT_NUMBER", formula: "=[Likelihood]@row * 2" },
            { id: 101, index: 0, title: "Risk", type: "TEXT_NUMBER", primary: true },
            { id: 102, index: 1, title: "Likelihood", type: "PICKLIST", options: ["Low", "High"], symbol: "HARVEY_BALLS", validation: true },
            { id: 104, index: 3, title: "Raised", type: "DATE", systemColumnType: "CREATED_DATE", locked: true, hidden: true, description: "when" },
            { id: 105, index: 4, title: "Due", type: "DATE" },
        ],
        rows: [
            {
                id: 501,
                rowNumber: 1,
                cells: [
                    { columnId: 101, value: "Supplier late" },
                    { columnId: 103, value: 4, formula: "=[Likelihood]@row * 2" },
                    { columnId: 105, formula: "=MAX({Schedule Finish})" },
                ],
            },
        ],
        crossSheetReferences: [
            { name: "Schedule Finish", sourceSheetId: 12 },
            { name: "Filing", sourceSheetId: 900 },
        ],
        ...overrides,
    };
}

const summary: SummaryField[] = [
    { id: 703, title: "Status", type: "PICKLIST", objectValue: "Draft", options: ["Draft", "Live"] },
    { id: 701, title: "Product Code", type: "TEXT_NUMBER", objectValue: "TEMPLATE" },
    { id: 702, title: "Open Risks", type: "TEXT_NUMBER", formula: "=COUNT(Risk:Risk)", objectValue: 3, displayValue: "3" },
];

describe("shapeOfSheet", () => {
    it("keeps the columns in index order with type, options, symbol, system column type, formula, primary and settings", () => {
        const shape = shapeOfSheet(riskRegister(), summary);
        expect(shape.name).toBe("Risk Register");
        expect(shape.sheetId).toBe(11);
        expect(shape.columns.map((column) => [column.index, column.id, column.title])).toEqual([
            [0, 101, "Risk"],
            [1, 102, "Likelihood"],
            [2, 103, "Score"],
            [3, 104, "Raised"],
            [4, 105, "Due"],
        ]);
        expect(shape.columns[0]).toMatchObject({ primary: true, type: "TEXT_NUMBER", options: [], validation: false, locked: false, hidden: false });
        expect(shape.columns[1]).toMatchObject({ type: "PICKLIST", options: ["Low", "High"], symbol: "HARVEY_BALLS", validation: true, primary: false });
        expect(shape.columns[2]!.formula).toBe("=[Likelihood]@row * 2");
        expect(shape.columns[3]).toMatchObject({ systemColumnType: "CREATED_DATE", locked: true, hidden: true, description: "when" });
    });

    it("keeps a summary field's value only where it is template content: not the Product Code, not a formula's result", () => {
        const fields = shapeOfSheet(riskRegister(), summary).summaryFields;
        expect(fields.map((field) => field.title)).toEqual(["Open Risks", "Product Code", "Status"]);
        expect(fields[0]).toMatchObject({ id: 702, formula: "=COUNT(Risk:Risk)", value: undefined });
        expect(fields[1]).toMatchObject({ id: 701, type: "TEXT_NUMBER", value: undefined });
        expect(fields[2]).toMatchObject({ id: 703, type: "PICKLIST", options: ["Draft", "Live"], value: "Draft" });
    });

    it("records the sheet's references and those its cell formulas use, leaving out the cells of a column formula", () => {
        const shape = shapeOfSheet(riskRegister(), []);
        expect(shape.references).toEqual([
            { name: "Filing", sourceSheetId: 900 },
            { name: "Schedule Finish", sourceSheetId: 12 },
        ]);
        expect(shape.cellFormulaReferences).toEqual(["Schedule Finish"]);
    });

    it("parses back from its JSON unchanged, as a stored shape will", () => {
        const template = shapeOfTemplate([{ sheet: riskRegister(), summary }]);
        expect(TemplateShape.parse(JSON.parse(JSON.stringify(template)))).toEqual(template);
    });
});

describe("shapeOfTemplate", () => {
    it("orders the template's sheets by name", () => {
        const schedule: Sheet = { id: 12, name: "Schedule", columns: [{ id: 201, index: 0, title: "Task", type: "TEXT_NUMBER", primary: true }], rows: [] };
        const template = shapeOfTemplate([
            { sheet: schedule, summary: [] },
            { sheet: riskRegister(), summary },
        ]);
        expect(template.sheets.map((sheet) => [sheet.name, sheet.sheetId])).toEqual([
            ["Risk Register", 11],
            ["Schedule", 12],
        ]);
    });
});

describe("shapeOfProduct", () => {
    const templates = ["Risk Register", "Schedule"];
    const copy = (id: number, name: string): Sheet => ({ ...riskRegister(), id, name });

    it("recognises the product's copies by their composed names and leaves the customer's own sheets out", () => {
        const product = shapeOfProduct({
            productCode: "IND-1042",
            productName: "Widget",
            templates,
            reads: [
                { sheet: copy(31, "IND-1042 Widget - Risk Register"), summary: [] },
                { sheet: copy(32, "Widget notes"), summary: [] },
                { sheet: { id: 33, name: "IND-1042 Widget - Schedule", columns: [], rows: [] }, summary: [] },
            ],
        });
        expect(product.productName).toBe("Widget");
        expect(product.sheets.map((sheet) => [sheet.template, sheet.sheetId, sheet.name])).toEqual([
            ["Risk Register", 31, "IND-1042 Widget - Risk Register"],
            ["Schedule", 33, "IND-1042 Widget - Schedule"],
        ]);
    });

    it("marks which columns and fields hold data: values and cell formulas do, a column formula's cells and empty cells do not", () => {
        const product = shapeOfProduct({
            productCode: "IND-1042",
            productName: "Widget",
            templates,
            reads: [
                {
                    sheet: copy(31, "IND-1042 Widget - Risk Register"),
                    summary: [
                        { id: 801, title: "Product Code", objectValue: "IND-1042" },
                        { id: 802, title: "Open Risks", formula: "=COUNT(Risk:Risk)", objectValue: 3 },
                        { id: 803, title: "Notes", objectValue: "" },
                    ],
                },
            ],
        });
        const sheet = product.sheets[0]!;
        expect(sheet.columns.map((column) => [column.title, column.id, column.hasData])).toEqual([
            ["Risk", 101, true],
            ["Likelihood", 102, false],
            ["Score", 103, false],
            ["Raised", 104, false],
            ["Due", 105, true],
        ]);
        expect(sheet.summaryFields.map((field) => [field.title, field.id, field.hasData, field.value])).toEqual([
            ["Notes", 803, false, undefined],
            ["Open Risks", 802, false, undefined],
            ["Product Code", 801, true, undefined],
        ]);
    });

    it("refuses a product folder with two sheets under one copy's name", () => {
        expect(() =>
            shapeOfProduct({
                productCode: "IND-1042",
                productName: "Widget",
                templates,
                reads: [
                    { sheet: copy(31, "IND-1042 Widget - Risk Register"), summary: [] },
                    { sheet: copy(34, "IND-1042 Widget - Risk Register"), summary: [] },
                ],
            }),
        ).toThrow('Two sheets of the product are named "IND-1042 Widget - Risk Register" (31, 34)');
    });
});
