import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { describeConflict, describePlan, describePlans } from "../../src/shared/convergence/describePlan";
import { isEmptyPlan, planConvergence, type ConvergenceChange, type ConvergenceOptions, type ConvergencePlan } from "../../src/shared/convergence/plan";
import {
    SheetShape,
    type ProductColumnShape,
    type ProductShape,
    type ProductSheetShape,
    type ProductSummaryFieldShape,
    type TemplateShape,
} from "../../src/shared/convergence/TemplateShape";
import { composeProductNames, referenceName } from "../../src/shared/naming/productNames";
import type { Blueprint, TemplateSheet } from "../../src/shared/provisioning/Blueprint";
import { blueprintReads } from "../../src/shared/provisioning/remap/sources";

/**
 * Convergence's plan without Smartsheet. Template version 1 has three sheets: the Risk Register
 * (11), whose "Late" column formula reads the Schedule (12) through {Schedule Finish}, the
 * Schedule, and the Document Register (13). Product IND-1042 "Widget" was provisioned from it:
 * copies 31, 32, 33, their columns and fields the template's ids + 1000, the Risk Register's
 * copy with its own reference {IND-1042 Schedule Finish} into the product's Schedule.
 */
const CODE = "IND-1042";
const NAME = "Widget";

function sheet(input: z.input<typeof SheetShape>): SheetShape {
    return SheetShape.parse(input);
}

const riskRegister = sheet({
    name: "Risk Register",
    sheetId: 11,
    columns: [
        { id: 101, index: 0, title: "Risk", type: "TEXT_NUMBER", primary: true },
        { id: 102, index: 1, title: "Likelihood", type: "PICKLIST", options: ["Low", "High"] },
        { id: 103, index: 2, title: "Score", type: "TEXT_NUMBER", formula: '=IF([Likelihood]@row = "High", 2, 1)' },
        { id: 104, index: 3, title: "Due", type: "DATE" },
        { id: 105, index: 4, title: "Late", type: "CHECKBOX", formula: "=[Due]@row > MAX({Schedule Finish})" },
    ],
    summaryFields: [
        { id: 701, title: "Open Risks", type: "TEXT_NUMBER", formula: "=COUNT(Risk:Risk)" },
        { id: 702, title: "Product Code", type: "TEXT_NUMBER" },
        { id: 703, title: "Status", type: "PICKLIST", options: ["Draft", "Live"], value: "Draft" },
    ],
    references: [{ name: "Schedule Finish", sourceSheetId: 12 }],
});

const schedule = sheet({
    name: "Schedule",
    sheetId: 12,
    columns: [
        { id: 201, index: 0, title: "Task", type: "TEXT_NUMBER", primary: true },
        { id: 202, index: 1, title: "Finish", type: "DATE" },
    ],
    summaryFields: [],
});

const register = sheet({
    name: "Document Register",
    sheetId: 13,
    columns: [
        { id: 301, index: 0, title: "Document", type: "TEXT_NUMBER", primary: true },
        { id: 302, index: 1, title: "Revision", type: "TEXT_NUMBER" },
    ],
    summaryFields: [{ id: 711, title: "Product Code", type: "TEXT_NUMBER" }],
});

const v1: TemplateShape = { sheets: [register, riskRegister, schedule] };

/** A changed copy of a value, for the test to edit freely. */
function edited<T>(value: T, edit: (copy: T) => void): T {
    const copy = structuredClone(value);
    edit(copy);
    return copy;
}

function sheetOf<S extends { name: string }>(shape: { sheets: S[] }, name: string): S {
    const found = shape.sheets.find((candidate) => candidate.name === name);
    if (!found) throw new Error(`no sheet "${name}"`);
    return found;
}

function copyOf(product: ProductShape, template: string): ProductSheetShape {
    const found = product.sheets.find((candidate) => candidate.template === template);
    if (!found) throw new Error(`no copy of "${template}"`);
    return found;
}

function columnOf<C extends { title: string }>(owner: { columns: C[] }, title: string): C {
    const found = owner.columns.find((candidate) => candidate.title === title);
    if (!found) throw new Error(`no column "${title}"`);
    return found;
}

function fieldOf<F extends { title: string }>(owner: { summaryFields: F[] }, title: string): F {
    const found = owner.summaryFields.find((candidate) => candidate.title === title);
    if (!found) throw new Error(`no field "${title}"`);
    return found;
}

/** Inserts a column at `index` and numbers the sheet's columns again, as Smartsheet shifts them. */
function insertColumn<C extends { index: number }>(owner: { columns: C[] }, column: C, index: number): void {
    owner.columns.sort((a, b) => a.index - b.index).splice(index, 0, column);
    owner.columns.forEach((candidate, at) => (candidate.index = at));
}

function removeColumn<C extends { index: number; title: string }>(owner: { columns: C[] }, title: string): void {
    owner.columns = owner.columns.filter((candidate) => candidate.title !== title).sort((a, b) => a.index - b.index);
    owner.columns.forEach((candidate, at) => (candidate.index = at));
}

/** A template formula as a product's copy has it once its remap gave it the product's own references. */
function inProductTerms(formula: string | undefined, remapped: readonly string[]): string | undefined {
    return remapped.reduce((text, name) => text?.replaceAll(`{${name}}`, `{${referenceName(CODE, name)}}`), formula);
}

let nextId = 5000;

/**
 * A template sheet copied into the product and remapped, as provisioning leaves it: the
 * copy's own ids, its formulas using the product's references, the Product Code stamped.
 */
function copyMade(template: TemplateShape, of: SheetShape, copies: ReadonlyMap<string, number>, sheetId: number, name: string, ids: (id: number | undefined) => number): ProductSheetShape {
    const templateNames = new Map(template.sheets.map((candidate) => [candidate.sheetId, candidate.name]));
    const remapped = of.references.filter((reference) => templateNames.has(reference.sourceSheetId));
    const names = remapped.map((reference) => reference.name);
    return {
        template: of.name,
        sheetId,
        name,
        columns: of.columns.map((column): ProductColumnShape => ({ ...column, id: ids(column.id), formula: inProductTerms(column.formula, names), hasData: false })),
        summaryFields: of.summaryFields.map(
            (field): ProductSummaryFieldShape => ({ ...field, id: ids(field.id), formula: inProductTerms(field.formula, names), hasData: field.title === "Product Code" || field.value !== undefined }),
        ),
        references: [
            ...of.references,
            ...remapped.map((reference) => ({ name: referenceName(CODE, reference.name), sourceSheetId: copies.get(templateNames.get(reference.sourceSheetId)!)! })),
        ],
    };
}

function provisioned(template: TemplateShape, productName = NAME): ProductShape {
    const names = composeProductNames(CODE, productName, template.sheets.map((candidate) => candidate.name)).sheets;
    const copies = new Map(template.sheets.map((candidate) => [candidate.name, candidate.sheetId + 20]));
    return {
        productName,
        sheets: template.sheets.map((of) => copyMade(template, of, copies, of.sheetId + 20, names[of.name]!, (id) => id! + 1000)),
    };
}

function plan(to: TemplateShape, product: ProductShape, options?: ConvergenceOptions, from: TemplateShape = v1): ConvergencePlan {
    return planConvergence({ from, to, product, productCode: CODE, options });
}

/**
 * The plan's changes carried out on the product's shape as Smartsheet and provisioning's remap
 * would leave the product: columns inserted where the plan says, attributes set, copies made
 * and remapped, references created.
 */
function applied(product: ProductShape, to: TemplateShape, changes: readonly ConvergenceChange[]): ProductShape {
    const next = structuredClone(product);
    const copyWithId = (sheetId: number) => next.sheets.find((candidate) => candidate.sheetId === sheetId)!;
    const nulls = (attributes: Record<string, unknown>) => Object.fromEntries(Object.entries(attributes).map(([name, value]) => [name, value ?? undefined]));
    for (const change of changes) {
        switch (change.kind) {
            case "addSheet": {
                const copies = new Map(next.sheets.map((candidate) => [candidate.template, candidate.sheetId]));
                const sheetId = ++nextId;
                copies.set(change.sheet, sheetId);
                next.sheets.push(copyMade(to, sheetOf(to, change.sheet), copies, sheetId, change.name, () => ++nextId));
                break;
            }
            case "renameSheet":
                Object.assign(copyWithId(change.sheetId), { name: change.to, template: change.sheet });
                break;
            case "addReferences": {
                const copies = new Map(next.sheets.map((candidate) => [candidate.template, candidate.sheetId]));
                copyWithId(change.sheetId).references.push(...change.references.map((reference) => ({ name: reference.name, sourceSheetId: copies.get(reference.sourceTemplate)! })));
                break;
            }
            case "addColumn":
                insertColumn(copyWithId(change.sheetId), { ...change.column, id: ++nextId, hasData: false }, change.column.index);
                break;
            case "updateColumn":
                Object.assign(copyWithId(change.sheetId).columns.find((column) => column.id === change.columnId)!, nulls(change.set));
                break;
            case "deleteColumn": {
                const copy = copyWithId(change.sheetId);
                removeColumn(copy, copy.columns.find((column) => column.id === change.columnId)!.title);
                break;
            }
            case "addSummaryField":
                copyWithId(change.sheetId).summaryFields.push({
                    ...change.field,
                    id: ++nextId,
                    hasData: change.field.value !== undefined,
                    // The shape never carries the stamped code.
                    value: change.field.title === "Product Code" ? undefined : change.field.value,
                });
                break;
            case "updateSummaryField":
                Object.assign(copyWithId(change.sheetId).summaryFields.find((field) => field.id === change.fieldId)!, nulls(change.set));
                break;
            case "deleteSummaryField": {
                const copy = copyWithId(change.sheetId);
                copy.summaryFields = copy.summaryFields.filter((field) => field.id !== change.fieldId);
                break;
            }
        }
    }
    return next;
}

/** What a change writes, and how many requests: one per column change, one per sheet and kind of summary field change. */
function writesOf(changes: readonly ConvergenceChange[]): Record<string, number> {
    const counts: Record<string, number> = {};
    const bump = (operation: string) => (counts[operation] = (counts[operation] ?? 0) + 1);
    for (const change of changes) {
        if (change.kind === "addColumn" || change.kind === "updateColumn" || change.kind === "deleteColumn") bump(change.kind);
        if (change.kind === "renameSheet") bump("updateSheet");
        // One request per field change: the apply carries each out on its own (claimed, looked for, adopted).
        if (change.kind === "addSummaryField" || change.kind === "updateSummaryField" || change.kind === "deleteSummaryField") bump(`${change.kind}s`);
    }
    return counts;
}

const scoreFixed = '=IF([Likelihood]@row = "High", 3, 1)';

describe("planConvergence: an unchanged template", () => {
    it("gives an empty plan that costs no call, formulas through the product's own references included", () => {
        const result = plan(v1, provisioned(v1));
        expect(result).toEqual({ changes: [], conflicts: [], removedFromTemplate: [], calls: { total: 0, byOperation: {} } });
        expect(isEmptyPlan(result)).toBe(true);
    });
});

describe("planConvergence: columns", () => {
    it("adds a column new in the template at its place among its template neighbours, with its type, options and column formula", () => {
        const to = edited(v1, (template) => {
            const sheet = sheetOf(template, "Risk Register");
            insertColumn(sheet, { id: 106, index: 0, title: "Owner", type: "CONTACT_LIST", primary: false, options: [], validation: false, locked: false, hidden: false }, 4);
            insertColumn(sheet, { id: 107, index: 0, title: "Impact", type: "PICKLIST", primary: false, options: ["Minor", "Major"], formula: '=IF([Late]@row, "Major", "Minor")', validation: true, locked: false, hidden: false }, 6);
        });
        const result = plan(to, provisioned(v1));
        expect(result.changes).toEqual([
            {
                kind: "addColumn",
                sheet: "Risk Register",
                sheetId: 31,
                position: 4,
                column: { index: 4, title: "Owner", type: "CONTACT_LIST", primary: false, options: [], validation: false, locked: false, hidden: false },
            },
            {
                kind: "addColumn",
                sheet: "Risk Register",
                sheetId: 31,
                position: 6,
                column: { index: 6, title: "Impact", type: "PICKLIST", primary: false, options: ["Minor", "Major"], formula: '=IF([Late]@row, "Major", "Minor")', validation: true, locked: false, hidden: false },
            },
        ]);
        expect(describePlan(result)[0]).toBe('sheet "Risk Register": add column "Owner" (CONTACT_LIST) at 4');
        expect(result.calls).toEqual({ total: 2, byOperation: { addColumn: 2 } });
    });

    it("places a new column after the product's copy of the template column before it, whatever columns the customer added, and a first column first", () => {
        const product = edited(provisioned(v1), (shape) => {
            const copy = copyOf(shape, "Risk Register");
            insertColumn(copy, { ...columnOf(copy, "Due"), id: 9001, title: "Notes", hasData: true }, 1);
            insertColumn(copy, { ...columnOf(copy, "Due"), id: 9002, title: "Budget", hasData: true }, 6);
        });
        const to = edited(v1, (template) => {
            const sheet = sheetOf(template, "Risk Register");
            insertColumn(sheet, { ...columnOf(sheet, "Due"), id: 106, title: "Ref" }, 0);
            insertColumn(sheet, { ...columnOf(sheet, "Due"), id: 107, title: "Slip", type: "TEXT_NUMBER", formula: "=[Due]@row - MAX({Schedule Finish})" }, 3);
        });
        // Product before: Risk, Notes, Likelihood, Score, Due, Late, Budget. Template: Ref, Risk, Likelihood, Slip, Score, Due, Late.
        const added = plan(to, product).changes.map((change) => (change.kind === "addColumn" ? [change.column.title, change.column.index, change.column.formula] : change.kind));
        expect(added).toEqual([
            ["Ref", 0, undefined],
            ["Slip", 4, `=[Due]@row - MAX({${CODE} Schedule Finish})`],
        ]);
    });

    it("applies a column formula fixed in the template to the product's column that still has the old one", () => {
        const to = edited(v1, (template) => (columnOf(sheetOf(template, "Risk Register"), "Score").formula = scoreFixed));
        expect(plan(to, provisioned(v1)).changes).toEqual([
            {
                kind: "updateColumn",
                sheet: "Risk Register",
                sheetId: 31,
                position: 2,
                columnId: 1103,
                title: "Score",
                set: { formula: scoreFixed },
                was: { formula: '=IF([Likelihood]@row = "High", 2, 1)' },
            },
        ]);
    });

    it("makes a customer-edited formula a conflict naming the sheet, the column, the old and new template formula and the product's, and changes nothing", () => {
        const to = edited(v1, (template) => (columnOf(sheetOf(template, "Risk Register"), "Score").formula = scoreFixed));
        const product = edited(provisioned(v1), (shape) => (columnOf(copyOf(shape, "Risk Register"), "Score").formula = "=5"));
        const result = plan(to, product);
        expect(result.changes).toEqual([]);
        expect(result.conflicts).toEqual([
            {
                kind: "edited",
                sheet: "Risk Register",
                column: "Score",
                position: 2,
                aspect: "formula",
                oldTemplate: { formula: '=IF([Likelihood]@row = "High", 2, 1)' },
                newTemplate: { formula: scoreFixed },
                product: { formula: "=5" },
            },
        ]);
        expect(describeConflict(result.conflicts[0]!)).toBe(
            'sheet "Risk Register", column "Score", formula: the template had formula "=IF([Likelihood]@row = \\"High\\", 2, 1)", now has formula "=IF([Likelihood]@row = \\"High\\", 3, 1)"; the product has formula "=5"',
        );
    });

    it("keeps a customer's edit of what the template left alone, with no conflict, and still applies the template's change of another aspect", () => {
        const to = edited(v1, (template) => (columnOf(sheetOf(template, "Risk Register"), "Score").formula = scoreFixed));
        const product = edited(provisioned(v1), (shape) => {
            const copy = copyOf(shape, "Risk Register");
            columnOf(copy, "Likelihood").options = ["Low", "Medium", "High"];
            columnOf(copy, "Score").hidden = true;
        });
        const result = plan(to, product);
        expect(result.conflicts).toEqual([]);
        expect(result.changes.map((change) => change.kind === "updateColumn" && [change.title, change.set])).toEqual([["Score", { formula: scoreFixed }]]);
    });

    it("applies a type and options change to the product that kept them, and makes it a conflict where the customer changed them", () => {
        const to = edited(v1, (template) => (columnOf(sheetOf(template, "Risk Register"), "Likelihood").options = ["Low", "Medium", "High"]));
        expect(plan(to, provisioned(v1)).changes).toEqual([
            {
                kind: "updateColumn",
                sheet: "Risk Register",
                sheetId: 31,
                position: 1,
                columnId: 1102,
                title: "Likelihood",
                set: { type: "PICKLIST", options: ["Low", "Medium", "High"], symbol: null, systemColumnType: null },
                was: { type: "PICKLIST", options: ["Low", "High"], symbol: null, systemColumnType: null },
            },
        ]);
        const customised = edited(provisioned(v1), (shape) => (columnOf(copyOf(shape, "Risk Register"), "Likelihood").options = ["Low", "High", "Critical"]));
        const conflicted = plan(to, customised);
        expect(conflicted.changes).toEqual([]);
        expect(conflicted.conflicts.map((conflict) => [conflict.kind, conflict.column, conflict.aspect, conflict.product?.options])).toEqual([["edited", "Likelihood", "type", ["Low", "High", "Critical"]]]);
        expect(describeConflict(conflicted.conflicts[0]!)).toBe(
            'sheet "Risk Register", column "Likelihood", type: the template had options ["Low","High"], now has options ["Low","Medium","High"]; the product has options ["Low","High","Critical"]',
        );
    });

    it("makes a column formula the template puts on a column whose cells hold data a conflict, not an overwrite", () => {
        const to = edited(v1, (template) => (columnOf(sheetOf(template, "Risk Register"), "Due").formula = "=TODAY()"));
        const withData = edited(provisioned(v1), (shape) => (columnOf(copyOf(shape, "Risk Register"), "Due").hasData = true));
        const result = plan(to, withData);
        expect(result.changes).toEqual([]);
        expect(result.conflicts.map((conflict) => [conflict.kind, conflict.column, conflict.newTemplate])).toEqual([["overwritesData", "Due", { formula: "=TODAY()" }]]);
        expect(plan(to, provisioned(v1)).changes.map((change) => change.kind === "updateColumn" && change.set)).toEqual([{ formula: "=TODAY()" }]);
    });

    it("makes a template change to a column the customer deleted a conflict, and leaves a deleted column the template did not change alone", () => {
        const product = edited(provisioned(v1), (shape) => removeColumn(copyOf(shape, "Risk Register"), "Score"));
        expect(plan(v1, product)).toMatchObject({ changes: [], conflicts: [] });
        const to = edited(v1, (template) => (columnOf(sheetOf(template, "Risk Register"), "Score").formula = scoreFixed));
        expect(plan(to, product).conflicts).toEqual([
            {
                kind: "missingInProduct",
                sheet: "Risk Register",
                column: "Score",
                position: 2,
                oldTemplate: { formula: '=IF([Likelihood]@row = "High", 2, 1)' },
                newTemplate: { formula: scoreFixed },
            },
        ]);
    });
});

describe("planConvergence: renames", () => {
    // Renaming a column, Smartsheet rewrites the formulas that name it: the template's "Late" follows "Due".
    const dueRenamed = edited(v1, (template) => {
        const sheet = sheetOf(template, "Risk Register");
        columnOf(sheet, "Due").title = "Due Date";
        columnOf(sheet, "Late").formula = "=[Due Date]@row > MAX({Schedule Finish})";
    });

    it("renames the product's column when the template renames its own (same id): no removal, no addition", () => {
        const result = plan(dueRenamed, provisioned(v1));
        expect(result.changes).toEqual([
            { kind: "updateColumn", sheet: "Risk Register", sheetId: 31, position: 3, columnId: 1104, title: "Due", set: { title: "Due Date" }, was: { title: "Due" } },
            {
                kind: "updateColumn",
                sheet: "Risk Register",
                sheetId: 31,
                position: 4,
                columnId: 1105,
                title: "Late",
                set: { formula: `=[Due Date]@row > MAX({${CODE} Schedule Finish})` },
                was: { formula: `=[Due]@row > MAX({${CODE} Schedule Finish})` },
            },
        ]);
        expect(result.removedFromTemplate).toEqual([]);
        expect(result.conflicts).toEqual([]);
    });

    it("recognises a rename by position and type where the shapes carry no column ids", () => {
        const withoutIds = (template: TemplateShape) => edited(template, (shape) => shape.sheets.forEach((sheet) => sheet.columns.forEach((column) => delete column.id)));
        expect(plan(withoutIds(dueRenamed), provisioned(v1), undefined, withoutIds(v1))).toEqual(plan(dueRenamed, provisioned(v1)));
    });

    it("renames a column and adds a new one under its old title, and applying both leaves nothing to do", () => {
        const to = edited(v1, (template) => {
            const sheet = sheetOf(template, "Risk Register");
            columnOf(sheet, "Likelihood").title = "Probability";
            columnOf(sheet, "Score").formula = '=IF([Probability]@row = "High", 2, 1)';
            insertColumn(sheet, { ...columnOf(sheet, "Due"), id: 108, title: "Likelihood", type: "TEXT_NUMBER" }, 2);
        });
        const first = plan(to, provisioned(v1));
        expect(first.conflicts).toEqual([]);
        expect(first.changes.map((change) => [change.kind, change.kind === "addColumn" ? change.column.title : "title" in change ? change.title : ""])).toEqual([
            ["updateColumn", "Likelihood"],
            ["addColumn", "Likelihood"],
            ["updateColumn", "Score"],
        ]);
        expect(plan(to, applied(provisioned(v1), to, first.changes))).toMatchObject({ changes: [], conflicts: [] });
    });

    it("makes a rename onto a title the customer gave a column of their own a conflict, and touches neither column", () => {
        const product = edited(provisioned(v1), (shape) => insertColumn(copyOf(shape, "Risk Register"), { ...columnOf(copyOf(shape, "Risk Register"), "Due"), id: 9001, title: "due date" }, 5));
        const result = plan(dueRenamed, product);
        expect(result.conflicts).toEqual([
            { kind: "titleTaken", sheet: "Risk Register", column: "Due", position: 3, aspect: "title", oldTemplate: { title: "Due" }, newTemplate: { title: "Due Date" }, product: { title: "due date" } },
        ]);
        expect(result.changes.filter((change) => change.kind === "updateColumn" && (change.columnId === 1104 || change.columnId === 9001))).toEqual([]);
    });

    it("renames the copy of a template sheet renamed (same sheet id) instead of copying it again", () => {
        const to = edited(v1, (template) => (sheetOf(template, "Schedule").name = "Programme"));
        const result = plan(to, provisioned(v1));
        expect(result.changes).toEqual([{ kind: "renameSheet", sheet: "Programme", sheetId: 32, from: `${CODE} ${NAME} - Schedule`, to: `${CODE} ${NAME} - Programme` }]);
        expect(result.removedFromTemplate).toEqual([]);
        expect(result.calls).toEqual({ total: 1, byOperation: { updateSheet: 1 } });
    });

    it("renames every copy when a longer sheet name added leaves the product's part of the names less room, as provisioning composes them", () => {
        const longName = "Widget Assembly Line Retrofit Programme";
        const to = edited(v1, (template) => template.sheets.push(sheet({ name: "Supplier Qualification Log", sheetId: 14, columns: [{ id: 401, index: 0, title: "Supplier", type: "TEXT_NUMBER", primary: true }], summaryFields: [] })));
        const composed = composeProductNames(CODE, longName, to.sheets.map((candidate) => candidate.name)).sheets;
        const result = plan(to, provisioned(v1, longName));
        expect(result.changes.map((change) => (change.kind === "renameSheet" ? [change.kind, change.sheet, change.to] : change.kind === "addSheet" ? [change.kind, change.sheet, change.name] : change.kind))).toEqual([
            ["renameSheet", "Document Register", composed["Document Register"]],
            ["renameSheet", "Risk Register", composed["Risk Register"]],
            ["renameSheet", "Schedule", composed.Schedule],
            ["addSheet", "Supplier Qualification Log", composed["Supplier Qualification Log"]],
        ]);
        expect(composed.Schedule).not.toBe(copyOf(provisioned(v1, longName), "Schedule").name);
    });
});

describe("planConvergence: summary fields", () => {
    const to = edited(v1, (template) => {
        const sheet = sheetOf(template, "Risk Register");
        fieldOf(sheet, "Open Risks").formula = '=COUNTIF(Risk:Risk, <>"")';
        fieldOf(sheet, "Status").value = "New";
        sheet.summaryFields.push({ id: 704, title: "Reviewer", type: "TEXT_NUMBER", options: [], value: "PMO" });
    });

    it("adds a new field and applies changed formulas and values three-way, never touching the Product Code", () => {
        const result = plan(to, provisioned(v1));
        expect(result.changes).toEqual([
            { kind: "updateSummaryField", sheet: "Risk Register", sheetId: 31, fieldId: 1701, title: "Open Risks", set: { formula: '=COUNTIF(Risk:Risk, <>"")' }, was: { formula: "=COUNT(Risk:Risk)" } },
            { kind: "addSummaryField", sheet: "Risk Register", sheetId: 31, field: { title: "Reviewer", type: "TEXT_NUMBER", options: [], value: "PMO" } },
            { kind: "updateSummaryField", sheet: "Risk Register", sheetId: 31, fieldId: 1703, title: "Status", set: { value: "New" }, was: { value: "Draft" } },
        ]);
        expect(result.calls).toEqual({ total: 3, byOperation: { addSummaryFields: 1, updateSummaryFields: 2 } });
        const customerStatus = edited(provisioned(v1), (shape) => (fieldOf(copyOf(shape, "Risk Register"), "Status").value = "Live"));
        expect(plan(to, customerStatus).conflicts).toEqual([
            { kind: "edited", sheet: "Risk Register", field: "Status", aspect: "value", oldTemplate: { value: "Draft" }, newTemplate: { value: "New" }, product: { value: "Live" } },
        ]);
    });

    it("renames the product's field when the template renames its own (same id), and not onto a title the customer uses", () => {
        const renamed = edited(v1, (template) => (fieldOf(sheetOf(template, "Risk Register"), "Status").title = "Stage"));
        expect(plan(renamed, provisioned(v1))).toMatchObject({
            changes: [{ kind: "updateSummaryField", sheet: "Risk Register", sheetId: 31, fieldId: 1703, title: "Status", set: { title: "Stage" }, was: { title: "Status" } }],
            conflicts: [],
            removedFromTemplate: [],
        });
        const customerStage = edited(provisioned(v1), (shape) => copyOf(shape, "Risk Register").summaryFields.push({ id: 9101, title: "Stage", options: [], value: "2", hasData: true }));
        const result = plan(renamed, customerStage);
        expect(result.changes).toEqual([]);
        expect(result.conflicts).toEqual([
            { kind: "titleTaken", sheet: "Risk Register", field: "Status", aspect: "title", oldTemplate: { title: "Status" }, newTemplate: { title: "Stage" }, product: { title: "Stage" } },
        ]);
    });

    it("gives a Product Code field new to a sheet the product's code", () => {
        const withCode = edited(v1, (template) => sheetOf(template, "Schedule").summaryFields.push({ id: 721, title: "Product Code", type: "TEXT_NUMBER", options: [] }));
        expect(plan(withCode, provisioned(v1)).changes).toEqual([
            { kind: "addSummaryField", sheet: "Schedule", sheetId: 32, field: { title: "Product Code", type: "TEXT_NUMBER", options: [], value: CODE } },
        ]);
    });

    it("makes a formula the template puts on the Product Code field a conflict: the stamped code is the product's data", () => {
        const codeFormula = edited(v1, (template) => (fieldOf(sheetOf(template, "Risk Register"), "Product Code").formula = "=PARENT()"));
        const result = plan(codeFormula, provisioned(v1));
        expect(result.changes).toEqual([]);
        expect(result.conflicts.map((conflict) => [conflict.kind, conflict.field, conflict.aspect])).toEqual([["overwritesData", "Product Code", "formula"]]);
    });

    it("makes a field the template adds under a title the customer already used a conflict", () => {
        const product = edited(provisioned(v1), (shape) => copyOf(shape, "Risk Register").summaryFields.push({ id: 9101, title: "Reviewer", options: [], value: "Jo", hasData: true }));
        const result = plan(to, product);
        expect(result.changes.map((change) => change.kind)).toEqual(["updateSummaryField", "updateSummaryField"]);
        expect(result.conflicts).toEqual([
            {
                kind: "titleTaken",
                sheet: "Risk Register",
                field: "Reviewer",
                newTemplate: { title: "Reviewer", type: "TEXT_NUMBER", options: [], symbol: null, formula: null, value: "PMO" },
                product: { title: "Reviewer", type: null, options: [], symbol: null, formula: null, value: "Jo" },
            },
        ]);
    });
});

describe("planConvergence: customer columns", () => {
    it("makes a column the template adds under a title the customer already used on that sheet (any case) a conflict, and adds nothing", () => {
        const product = edited(provisioned(v1), (shape) => insertColumn(copyOf(shape, "Risk Register"), { ...columnOf(copyOf(shape, "Risk Register"), "Due"), id: 9001, title: "owner", type: "TEXT_NUMBER", hasData: true }, 5));
        const to = edited(v1, (template) => insertColumn(sheetOf(template, "Risk Register"), { ...columnOf(sheetOf(template, "Risk Register"), "Due"), id: 106, title: "Owner", type: "CONTACT_LIST" }, 4));
        const result = plan(to, product);
        expect(result.changes).toEqual([]);
        expect(result.conflicts.map((conflict) => [conflict.kind, conflict.column, conflict.newTemplate?.type, conflict.product?.title])).toEqual([["titleTaken", "Owner", "CONTACT_LIST", "owner"]]);
        expect(describeConflict(result.conflicts[0]!)).toBe(
            'sheet "Risk Register", column "Owner": the template adds it (title "Owner", type "CONTACT_LIST"), and the product has one of its own under that title (title "owner", type "TEXT_NUMBER")',
        );
    });

    it("never touches a column the customer added, even with removal opted in and the template changing its neighbours", () => {
        const product = edited(provisioned(v1), (shape) => insertColumn(copyOf(shape, "Risk Register"), { ...columnOf(copyOf(shape, "Risk Register"), "Due"), id: 9001, title: "Notes", hasData: false }, 2));
        const to = edited(v1, (template) => {
            const sheet = sheetOf(template, "Risk Register");
            columnOf(sheet, "Score").formula = scoreFixed;
            removeColumn(sheet, "Due");
        });
        const result = plan(to, product, { removeUnused: true });
        expect(JSON.stringify(result)).not.toContain("9001");
        expect(result.removedFromTemplate.map((removed) => removed.title)).toEqual(["Due"]);
    });
});

describe("planConvergence: what the template removed", () => {
    const to = edited(v1, (template) => {
        const sheet = sheetOf(template, "Risk Register");
        removeColumn(sheet, "Late");
        removeColumn(sheet, "Due");
        sheet.summaryFields = sheet.summaryFields.filter((field) => field.title !== "Open Risks" && field.title !== "Status");
    });
    const product = edited(provisioned(v1), (shape) => (columnOf(copyOf(shape, "Risk Register"), "Due").hasData = true));

    it("reports it and plans nothing without the opt-in", () => {
        const result = plan(to, product);
        expect(result.changes).toEqual([]);
        expect(result.removedFromTemplate).toEqual([
            { sheet: "Risk Register", kind: "column", title: "Due", position: 3, hasData: true, deleted: false },
            { sheet: "Risk Register", kind: "column", title: "Late", position: 4, hasData: false, deleted: false },
            { sheet: "Risk Register", kind: "summaryField", title: "Open Risks", hasData: false, deleted: false },
            { sheet: "Risk Register", kind: "summaryField", title: "Status", hasData: true, deleted: false },
        ]);
        expect(isEmptyPlan(result)).toBe(true);
    });

    it("with the opt-in, deletes only the columns and fields that hold no data", () => {
        const result = plan(to, product, { removeUnused: true });
        expect(result.changes).toEqual([
            { kind: "deleteColumn", sheet: "Risk Register", sheetId: 31, position: 4, columnId: 1105, title: "Late" },
            { kind: "deleteSummaryField", sheet: "Risk Register", sheetId: 31, fieldId: 1701, title: "Open Risks" },
        ]);
        expect(result.removedFromTemplate.map((removed) => [removed.title, removed.deleted])).toEqual([
            ["Due", false],
            ["Late", true],
            ["Open Risks", true],
            ["Status", false],
        ]);
        expect(result.calls).toEqual({ total: 2, byOperation: { deleteColumn: 1, deleteSummaryFields: 1 } });
    });

    it("reports a sheet removed from the template and keeps its copy", () => {
        const withoutRegister: TemplateShape = { sheets: [riskRegister, schedule] };
        expect(plan(withoutRegister, provisioned(v1))).toEqual({
            changes: [],
            conflicts: [],
            removedFromTemplate: [{ sheet: "Document Register", kind: "sheet", title: `${CODE} ${NAME} - Document Register`, deleted: false }],
            calls: { total: 0, byOperation: {} },
        });
    });
});

describe("planConvergence: sheets and references", () => {
    const issueLog = sheet({
        name: "Issue Log",
        sheetId: 14,
        columns: [
            { id: 401, index: 0, title: "Issue", type: "TEXT_NUMBER", primary: true },
            { id: 402, index: 1, title: "Risk Score", type: "TEXT_NUMBER", formula: "=INDEX({Risk Rows}, 1, 1)" },
            { id: 403, index: 2, title: "Raised By", type: "TEXT_NUMBER" },
        ],
        summaryFields: [
            { id: 731, title: "Open Issues", type: "TEXT_NUMBER", formula: "=COUNT({Risk Rows})" },
            { id: 732, title: "Product Code", type: "TEXT_NUMBER" },
        ],
        references: [
            { name: "Filing", sourceSheetId: 900 },
            { name: "Risk Rows", sourceSheetId: 11 },
        ],
        cellFormulaReferences: ["Risk Rows"],
    });
    const withIssueLog: TemplateShape = { sheets: [...v1.sheets, issueLog] };

    it("copies a sheet new in the template under its composed name, with the remap provisioning would give it, costing what provisioning's remap costs", () => {
        const result = plan(withIssueLog, provisioned(v1));
        expect(result.changes).toEqual([
            {
                kind: "addSheet",
                sheet: "Issue Log",
                name: `${CODE} ${NAME} - Issue Log`,
                templateSheetId: 14,
                references: [{ name: `${CODE} Risk Rows`, templateReference: "Risk Rows", sourceTemplate: "Risk Register" }],
                columnFormulas: ["Risk Score"],
                cellFormulas: true,
                summaryFormulas: true,
                stampsCode: true,
                registers: false,
            },
        ]);
        expect(result.calls).toEqual({
            total: 8,
            byOperation: { copySheet: 1, createCrossSheetReference: 1, getSheet: 2, getSummary: 1, updateColumn: 1, updateRows: 1, updateSummaryFields: 1 },
        });
        // Provisioning's remap reads, for the same sheet as its blueprint describes it.
        const analysed: TemplateSheet = {
            name: "Issue Log",
            templateSheetId: 14,
            references: [
                { name: "Filing", sourceSheetId: 900 },
                { name: "Risk Rows", sourceTemplate: "Risk Register", sourceSheetId: 11 },
            ],
            cellFormulas: [{ rowNumber: 1, columnTitle: "Raised By", formula: "=MAX({Risk Rows})" }],
            columnFormulas: [{ columnTitle: "Risk Score", formula: "=INDEX({Risk Rows}, 1, 1)" }],
            summaryFormulas: [{ title: "Open Issues", formula: "=COUNT({Risk Rows})" }],
            summaryTitles: ["Open Issues", "Product Code"],
        };
        const reads = blueprintReads({ remapped: [] }, { sheets: [analysed] } as Blueprint, { blueprintVersion: "v2", summaries: {} });
        expect([result.calls.byOperation.getSheet, result.calls.byOperation.getSummary]).toEqual([reads.sheets.size, reads.summaries.size]);
    });

    it("registers a Document Register new in the template: the Filing Index read, the product's row pointed at it", () => {
        const result = plan(v1, provisioned({ sheets: [riskRegister, schedule] }), undefined, { sheets: [riskRegister, schedule] });
        expect(result.changes.map((change) => change.kind === "addSheet" && [change.sheet, change.registers, change.stampsCode])).toEqual([["Document Register", true, true]]);
        expect(result.calls).toEqual({ total: 5, byOperation: { copySheet: 1, getSheet: 1, getSummary: 1, updateRows: 1, updateSummaryFields: 1 } });
    });

    it("gives an existing copy the product's own reference for a reference into the template that is new, and its formulas use it", () => {
        const to = edited(v1, (template) => {
            const sheet = sheetOf(template, "Schedule");
            sheet.references.push({ name: "Risks", sourceSheetId: 11 });
            insertColumn(sheet, { ...columnOf(sheet, "Finish"), id: 203, title: "Open Risks", type: "TEXT_NUMBER", formula: "=COUNT({Risks})" }, 2);
        });
        const result = plan(to, provisioned(v1));
        expect(result.changes).toEqual([
            { kind: "addReferences", sheet: "Schedule", sheetId: 32, references: [{ name: `${CODE} Risks`, templateReference: "Risks", sourceTemplate: "Risk Register" }] },
            {
                kind: "addColumn",
                sheet: "Schedule",
                sheetId: 32,
                position: 2,
                column: { index: 2, title: "Open Risks", type: "TEXT_NUMBER", primary: false, options: [], formula: `=COUNT({${CODE} Risks})`, validation: false, locked: false, hidden: false },
            },
        ]);
        expect(result.calls).toEqual({ total: 3, byOperation: { addColumn: 1, createCrossSheetReference: 1, getSheet: 1 } });
    });

    it("makes a product without its copy of a template sheet a conflict", () => {
        const product = edited(provisioned(v1), (shape) => (shape.sheets = shape.sheets.filter((copy) => copy.template !== "Schedule")));
        expect(plan(v1, product).conflicts).toEqual([{ kind: "sheetMissing", sheet: "Schedule" }]);
    });
});

/** A template change touching every rule at once, and a product a customer edited. */
const v2 = edited(v1, (template) => {
    const risks = sheetOf(template, "Risk Register");
    columnOf(risks, "Score").formula = scoreFixed;
    columnOf(risks, "Likelihood").options = ["Low", "Medium", "High"];
    columnOf(risks, "Due").title = "Due Date";
    columnOf(risks, "Late").formula = "=[Due Date]@row > MAX({Schedule Finish})";
    insertColumn(risks, { ...columnOf(risks, "Score"), id: 106, title: "Owner", type: "CONTACT_LIST", formula: undefined }, 1);
    fieldOf(risks, "Open Risks").formula = '=COUNTIF(Risk:Risk, <>"")';
    risks.summaryFields.push({ id: 704, title: "Reviewer", type: "TEXT_NUMBER", options: [], value: "PMO" });
    const programme = sheetOf(template, "Schedule");
    programme.references.push({ name: "Risks", sourceSheetId: 11 });
    insertColumn(programme, { ...columnOf(programme, "Finish"), id: 203, title: "Open Risks", type: "TEXT_NUMBER", formula: "=COUNT({Risks})" }, 2);
    removeColumn(programme, "Finish");
    sheetOf(template, "Document Register").summaryFields.push({ id: 712, title: "Revision Count", type: "TEXT_NUMBER", options: [], formula: "=COUNT(Revision:Revision)" });
    template.sheets.push(
        sheet({
            name: "Issue Log",
            sheetId: 14,
            columns: [
                { id: 401, index: 0, title: "Issue", type: "TEXT_NUMBER", primary: true },
                { id: 402, index: 1, title: "Risk Score", type: "TEXT_NUMBER", formula: "=INDEX({Risk Rows}, 1, 1)" },
            ],
            summaryFields: [{ id: 732, title: "Product Code", type: "TEXT_NUMBER" }],
            references: [{ name: "Risk Rows", sourceSheetId: 11 }],
        }),
    );
});

const customerEdited = edited(provisioned(v1), (shape) => {
    const copy = copyOf(shape, "Risk Register");
    insertColumn(copy, { ...columnOf(copy, "Due"), id: 9001, title: "Notes", hasData: true }, 1);
    columnOf(copy, "Likelihood").options = ["Low", "High", "Critical"];
});

describe("planConvergence: applying twice", () => {
    it("plans nothing more once the plan is applied: a product already converged gets an empty plan", () => {
        for (const product of [provisioned(v1), customerEdited]) {
            const first = plan(v2, product, { removeUnused: true });
            expect(first.changes.length).toBeGreaterThan(5);
            const converged = applied(product, v2, first.changes);
            const second = plan(v2, converged, { removeUnused: true });
            expect(second.changes).toEqual([]);
            expect(second.conflicts).toEqual(first.conflicts);
            expect(second.calls).toEqual({ total: 0, byOperation: {} });
        }
    });

    it("leaves a product nobody edited as provisioning would have made it from the new template", () => {
        const converged = applied(provisioned(v1), v2, plan(v2, provisioned(v1), { removeUnused: true }).changes);
        const withoutIds = (product: ProductShape) =>
            [...product.sheets]
                .sort((a, b) => a.template.localeCompare(b.template))
                .map((copy) => ({
                    template: copy.template,
                    name: copy.name,
                    columns: [...copy.columns].sort((a, b) => a.index - b.index).map(({ id: _, ...column }) => column),
                    summaryFields: [...copy.summaryFields].sort((a, b) => a.title.localeCompare(b.title)).map(({ id: _, ...field }) => field),
                    // The product's own references: a copy made now also keeps the template's, an existing copy never gets those.
                    references: copy.references.map((reference) => reference.name).filter((name) => name.startsWith(`${CODE} `)).sort(),
                }));
        expect(withoutIds(converged)).toEqual(withoutIds(provisioned(v2)));
    });

    it("keeps the customer's edit through a convergence: their column untouched, their options a named conflict", () => {
        const first = plan(v2, customerEdited, { removeUnused: true });
        expect(first.conflicts.map((conflict) => [conflict.kind, conflict.sheet, conflict.column, conflict.aspect])).toEqual([["edited", "Risk Register", "Likelihood", "type"]]);
        const converged = applied(customerEdited, v2, first.changes);
        const risks = copyOf(converged, "Risk Register");
        // The template's Owner goes right after the copy of the template column before it (Risk); Smartsheet shifts Notes.
        expect(risks.columns.map((column) => column.title)).toEqual(["Risk", "Owner", "Notes", "Likelihood", "Score", "Due Date", "Late"]);
        expect(columnOf(risks, "Notes")).toEqual({ ...columnOf(copyOf(customerEdited, "Risk Register"), "Notes"), index: 2 });
        expect(columnOf(risks, "Likelihood").options).toEqual(["Low", "High", "Critical"]);
    });
});

describe("planConvergence: determinism", () => {
    it("gives the same plan whatever order the shapes list their sheets, columns, fields and references in", () => {
        const shuffled = <S extends { sheets: Array<{ columns: unknown[]; summaryFields: unknown[]; references: unknown[] }> }>(shape: S): S =>
            edited(shape, (copy) => {
                copy.sheets.reverse();
                for (const each of copy.sheets) {
                    each.columns.reverse();
                    if (each.summaryFields.length > 0) each.summaryFields.push(each.summaryFields.shift()!);
                    each.references.reverse();
                }
            });
        const product = edited(customerEdited, (shape) => copyOf(shape, "Risk Register").summaryFields.push({ id: 9101, title: "Area", options: [], value: "North", hasData: true }));
        const expected = plan(v2, product, { removeUnused: true });
        expect(plan(shuffled(v2), shuffled(product), { removeUnused: true }, shuffled(v1))).toEqual(expected);
        expect(plan(v2, product, { removeUnused: true })).toEqual(expected);
    });

    it("orders the changes by sheet, then column position, then field title", () => {
        const result = plan(v2, provisioned(v1), { removeUnused: true });
        expect(result.changes.map((change) => [change.sheet, change.kind, change.kind === "addColumn" ? change.column.title : change.kind === "addSummaryField" ? change.field.title : "title" in change ? change.title : ""])).toEqual([
            ["Document Register", "addSummaryField", "Revision Count"],
            ["Issue Log", "addSheet", ""],
            ["Risk Register", "addColumn", "Owner"],
            ["Risk Register", "updateColumn", "Likelihood"],
            ["Risk Register", "updateColumn", "Score"],
            ["Risk Register", "updateColumn", "Due"],
            ["Risk Register", "updateColumn", "Late"],
            ["Risk Register", "updateSummaryField", "Open Risks"],
            ["Risk Register", "addSummaryField", "Reviewer"],
            ["Schedule", "addReferences", ""],
            ["Schedule", "deleteColumn", "Finish"],
            ["Schedule", "addColumn", "Open Risks"],
        ]);
    });
});

describe("planConvergence: calls", () => {
    it("counts one call per column write and one per summary field write (as the apply makes them), plus the added sheet's copy and remap", () => {
        const result = plan(v2, provisioned(v1), { removeUnused: true });
        const writes = writesOf(result.changes);
        expect(writes).toEqual({ addColumn: 2, updateColumn: 4, deleteColumn: 1, addSummaryFields: 2, updateSummaryFields: 1 });
        // Issue Log: copySheet, one reference, its column formula (one more updateColumn), its copy and the Risk Register's read, the code stamped.
        // Schedule: one reference into the Risk Register (read once for both).
        expect(result.calls.byOperation).toEqual({
            ...writes,
            updateColumn: writes.updateColumn! + 1,
            updateSummaryFields: writes.updateSummaryFields! + 1,
            copySheet: 1,
            createCrossSheetReference: 2,
            getSheet: 2,
            getSummary: 1,
        });
        expect(result.calls.total).toBe(Object.values(result.calls.byOperation).reduce((sum, count) => sum + count, 0));
    });
});

describe("describePlan", () => {
    it("renders each change, conflict and removal as one line, then the calls", () => {
        const to = edited(v1, (template) => {
            const sheet = sheetOf(template, "Risk Register");
            insertColumn(sheet, { ...columnOf(sheet, "Due"), id: 106, title: "Owner", type: "CONTACT_LIST" }, 4);
            columnOf(sheet, "Score").formula = scoreFixed;
            removeColumn(sheet, "Late");
            sheet.summaryFields.push({ id: 704, title: "Reviewer", type: "TEXT_NUMBER", options: [], value: "PMO" });
        });
        const product = edited(provisioned(v1), (shape) => (columnOf(copyOf(shape, "Risk Register"), "Score").formula = "=5"));
        expect(describePlan(plan(to, product))).toEqual([
            'sheet "Risk Register": add column "Owner" (CONTACT_LIST) at 4',
            'sheet "Risk Register": add summary field "Reviewer" (TEXT_NUMBER) = "PMO"',
            'conflict: sheet "Risk Register", column "Score", formula: the template had formula "=IF([Likelihood]@row = \\"High\\", 2, 1)", now has formula "=IF([Likelihood]@row = \\"High\\", 3, 1)"; the product has formula "=5"',
            'removed from the template: sheet "Risk Register", column "Late" (no data, kept unless removal is opted in)',
            "calls: addColumn 1, addSummaryFields 1 (2 in all)",
        ]);
    });

    it("renders several products' plans under their codes, and the total", () => {
        const to = edited(v1, (template) => insertColumn(sheetOf(template, "Risk Register"), { ...columnOf(sheetOf(template, "Risk Register"), "Due"), id: 106, title: "Owner", type: "CONTACT_LIST" }, 4));
        const customer = edited(provisioned(v1), (shape) => insertColumn(copyOf(shape, "Risk Register"), { ...columnOf(copyOf(shape, "Risk Register"), "Due"), id: 9001, title: "Owner", hasData: true }, 5));
        expect(
            describePlans([
                { productCode: "IND-1042", plan: plan(to, provisioned(v1)) },
                { productCode: "IND-1043", plan: plan(to, customer) },
                { productCode: "IND-1044", plan: plan(to, applied(provisioned(v1), to, plan(to, provisioned(v1)).changes)) },
            ]),
        ).toEqual([
            "product IND-1042: 1 change, 0 conflicts",
            '  sheet "Risk Register": add column "Owner" (CONTACT_LIST) at 4',
            "  calls: addColumn 1 (1 in all)",
            "product IND-1043: 0 changes, 1 conflict",
            '  conflict: sheet "Risk Register", column "Owner": the template adds it (type "CONTACT_LIST"), and the product has one of its own under that title (type "DATE")',
            "  calls: none",
            "product IND-1044: 0 changes, 0 conflicts",
            "  calls: none",
            "total: 3 products, 1 change, 1 conflict (1 product to park); calls: addColumn 1 (1 in all)",
        ]);
    });
});
