import { describe, expect, it } from "vitest";
import { checkConvergence, World, type AuditedConvergence, type Finding, type JobEntity, type SimSheet, type SimState } from "../../tools/chaos/auditor";
import { CUSTOMER, SECOND_CHANGES, TEMPLATE_CHANGES, type CustomerEditMade } from "../../tools/chaos/convergenceActions";

/**
 * The auditor's convergence checks, fed a world with one defect planted at a time: a product
 * converged as it should passes; each way a convergence can go wrong is found, in its category.
 */

const TEMPLATES = ["Change Log", "Risk Register", "Specifications", "Suppliers", "Translations"];
const V1 = "aaaaaaaaaaaaaaaaaaaa";
const V2 = "bbbbbbbbbbbbbbbbbbbb";
const FOLDERS = { products: 1, line: 2, template: 3, product: 4 };
const APPROVAL_COLUMN = 501;
const MITIGATION = 502;
const CELL_ROW = 601;
const OWN_COLUMN = 503;

let nextId = 10_000;
function sheet(name: string, folderId: number, columns: Array<{ id?: number; title: string; formula?: string }>, fields: string[] = [], rows: SimSheet["rows"] = []): SimSheet {
    return {
        id: nextId++,
        name,
        folderId,
        columns: columns.map((column) => ({ id: column.id ?? nextId++, title: column.title, ...(column.formula ? { formula: column.formula } : {}) })),
        rows,
        crossSheetReferences: [],
        summaryFields: fields.map((title) => ({ title })),
    };
}

const CONVERGED_FORMULA = '=IF(COUNTIF({IND-1 Approvals Decision}, "Pending") > 0, "Awaiting approval", "All approved")';

/** A product converged to V1 with every change of the template (a column, a formula, a summary field), and a customer's own column and value. */
function convergedWorld(): { sheets: Record<string, SimSheet>; state: () => SimState } {
    const product = (template: string) => `IND-1 Pump - ${template}`;
    const sheets: Record<string, SimSheet> = {
        "Change Log": sheet(product("Change Log"), FOLDERS.product, [{ title: "Document" }, { id: APPROVAL_COLUMN, title: "Approval Status", formula: CONVERGED_FORMULA }]),
        "Risk Register": sheet(
            product("Risk Register"),
            FOLDERS.product,
            [{ title: "Risk" }, { title: TEMPLATE_CHANGES.addColumn.title }, { id: MITIGATION, title: "Mitigation" }],
            [],
            [{ id: CELL_ROW, cells: [{ columnId: MITIGATION, value: "Customer's own plan" }] }],
        ),
        Specifications: sheet(product("Specifications"), FOLDERS.product, [{ title: "Parameter" }, { id: OWN_COLUMN, title: CUSTOMER.ownColumn.title }], [TEMPLATE_CHANGES.addSummaryField.title]),
        Suppliers: sheet(product("Suppliers"), FOLDERS.product, [{ title: "Supplier" }]),
        Translations: sheet(product("Translations"), FOLDERS.product, [{ title: "Document" }]),
    };
    const state = (): SimState => ({
        intakeSheetId: 1000,
        templateFolderId: FOLDERS.template,
        productsFolderId: FOLDERS.products,
        filingIndexSheetId: 1001,
        folders: [
            { id: FOLDERS.products, name: "Products", parentId: null },
            { id: FOLDERS.line, name: "Industrial", parentId: FOLDERS.products },
            { id: FOLDERS.template, name: "Product Template", parentId: null },
            { id: FOLDERS.product, name: "IND-1 Pump", parentId: FOLDERS.line },
        ],
        sheets: Object.values(sheets),
    });
    return { sheets, state };
}

function job(fields: Partial<JobEntity> & { convergence?: string } = {}): JobEntity {
    return {
        partitionKey: "1000",
        rowKey: "7",
        kind: "job",
        state: "done",
        productCode: "IND-1",
        productName: "Pump",
        productLine: "Industrial",
        blueprintVersion: V1,
        convergence: JSON.stringify({ to: V1, state: "done", plan: { conflicts: [] } }),
        ...fields,
    };
}

function edits(sheets: Record<string, SimSheet>): CustomerEditMade[] {
    return [
        { rowId: 7, code: "IND-1", edit: "cellValue", sheet: "Risk Register", sheetId: sheets["Risk Register"]!.id, column: "Mitigation", columnId: MITIGATION, cellRowId: CELL_ROW, value: "Customer's own plan", when: "before" },
        { rowId: 7, code: "IND-1", edit: "ownColumn", sheet: "Specifications", sheetId: sheets.Specifications!.id, column: CUSTOMER.ownColumn.title, columnId: OWN_COLUMN, when: "during" },
    ];
}

function input(overrides: Partial<AuditedConvergence> = {}, sheets?: Record<string, SimSheet>): AuditedConvergence {
    return {
        targets: [V1],
        applies: [{ status: 202, versions: [V1] }],
        changes: ["addColumn", "columnFormula", "addSummaryField"],
        changesAgain: [],
        customerEdits: sheets ? edits(sheets) : [],
        decisions: {},
        convergedRows: [7],
        ...overrides,
    };
}

function check(state: SimState, jobs: JobEntity[], audited: AuditedConvergence) {
    const findings: Finding[] = [];
    const tally = checkConvergence(new World(state), jobs, audited, TEMPLATES, (category, subject, detail) => findings.push({ category, subject, detail }));
    return { findings, tally, categories: findings.map((finding) => finding.category) };
}

describe("the auditor's convergence checks", () => {
    it("passes a product converged to the version the apply targeted, its customer's edits intact", () => {
        const world = convergedWorld();
        const { findings, tally } = check(world.state(), [job()], input({}, world.sheets));
        expect(findings).toEqual([]);
        expect(tally).toEqual({ targets: [V1], converged: 1, parked: 0, lost: 0, unparked: 0 });
    });

    it("counts a product that neither converged nor parked as lost: no convergence at all, or a version no apply targeted", () => {
        const world = convergedWorld();
        const untouched = check(world.state(), [job({ convergence: undefined })], input());
        expect(untouched.categories).toEqual(["lost"]);
        expect(untouched.findings[0]!.detail).toMatch(/neither converged to aaaa+ nor parked: job done, blueprintVersion aaaa+, convergence none/);
        const elsewhere = check(world.state(), [job({ blueprintVersion: V2, convergence: JSON.stringify({ to: V2, state: "done" }) })], input());
        expect(elsewhere.categories).toEqual(["lost"]);
        expect(elsewhere.tally.lost).toBe(1);
        const applying = check(world.state(), [job({ convergence: JSON.stringify({ to: V1, state: "applying" }) })], input());
        expect(applying.categories).toEqual(["lost"]);
    });

    it("accepts a product parked on its convergence with a reason, and finds one parked without", () => {
        const world = convergedWorld();
        const named = check(world.state(), [job({ convergence: JSON.stringify({ to: V1, state: "parked", parkReason: "1 conflict between the template's change and the product's own edits" }) })], input({ changes: [] }));
        expect(named.findings).toEqual([]);
        expect(named.tally.parked).toBe(1);
        const unnamed = check(world.state(), [job({ convergence: JSON.stringify({ to: V1, state: "parked", parkReason: " " }) })], input({ changes: [] }));
        expect(unnamed.categories).toEqual(["silent"]);
    });

    it("finds a column title or summary field title twice in a copy, and the template's field added twice under a renamed title", () => {
        const world = convergedWorld();
        world.sheets["Risk Register"]!.columns.push({ id: 777, title: TEMPLATE_CHANGES.addColumn.title });
        world.sheets.Suppliers!.summaryFields.push({ title: "Owner" }, { title: "Owner" });
        world.sheets.Specifications!.summaryFields.push({ title: `${TEMPLATE_CHANGES.addSummaryField.title} (1)` });
        const { findings, categories } = check(world.state(), [job()], input());
        expect(categories).toEqual(["duplicates", "duplicates", "duplicates"]);
        expect(findings.map((finding) => finding.detail).join("\n")).toMatch(/2 columns titled "Severity"[\s\S]*2 summary fields titled "Owner"[\s\S]*"Review Cycle" 2 times/);
    });

    it("finds a converged product without the template's column, field or changed formula", () => {
        const world = convergedWorld();
        world.sheets["Risk Register"]!.columns.splice(1, 1);
        world.sheets.Specifications!.summaryFields = [];
        world.sheets["Change Log"]!.columns[1]!.formula = '=IF(COUNTIF({IND-1 Approvals Decision}, "Pending") > 0, "Awaiting approval", "Clear")';
        const { findings, categories } = check(world.state(), [job()], input());
        expect(categories).toEqual(["invariantFailures", "invariantFailures", "invariantFailures"]);
        expect(findings.map((finding) => finding.detail).join("\n")).toMatch(/no column "Severity"[\s\S]*not the template's changed formula[\s\S]*no summary field "Review Cycle"/);
    });

    it("finds the template's second change, made mid-way, in a product converging to the first: a product on two versions", () => {
        const world = convergedWorld();
        world.sheets.Suppliers!.columns.push({ id: 778, title: SECOND_CHANGES.addColumn.title });
        world.sheets.Translations!.summaryFields.push({ title: SECOND_CHANGES.addSummaryField.title });
        const parked = job({ convergence: JSON.stringify({ to: V1, state: "parked", parkReason: "a conflict" }) });
        const { findings, categories } = check(world.state(), [parked], input({ changesAgain: ["addColumn", "addSummaryField", "columnFormula"] }));
        expect(categories).toEqual(["invariantFailures", "invariantFailures"]);
        expect(findings.every((finding) => /second change.*two versions/.test(finding.detail))).toBe(true);
        world.sheets["Change Log"]!.columns[1]!.formula = SECOND_CHANGES.columnFormula.formula.replace("{Approvals Decision}", "{IND-1 Approvals Decision}");
        expect(check(world.state(), [parked], input({ changesAgain: ["columnFormula"] })).categories).toEqual(["invariantFailures"]);
    });

    it("finds a customer's value changed or own column gone", () => {
        const world = convergedWorld();
        world.sheets["Risk Register"]!.rows[0]!.cells[0]!.value = "Qualify a second seal supplier";
        world.sheets.Specifications!.columns.splice(1, 1);
        const { findings, categories } = check(world.state(), [job()], input({}, world.sheets));
        expect(categories).toEqual(["invariantFailures", "invariantFailures"]);
        expect(findings[0]!.detail).toMatch(/customer's value in "Mitigation" .* was "Customer's own plan", and is now "Qualify a second seal supplier"/);
        expect(findings[1]!.detail).toMatch(/customer's own column in "Customer Notes" .* is gone/);
    });

    it("regression (chaos seeds 4224006664, 2262383340, 2696531955, 2596204699): a cell the customer edited twice holds its last value, not the first", () => {
        const world = convergedWorld();
        world.sheets["Risk Register"]!.rows[0]!.cells[0]!.value = "Customer's second plan";
        const twice = [...edits(world.sheets)];
        twice.push({ ...twice[0]!, value: "Customer's second plan", when: "during" });
        const { findings } = check(world.state(), [job()], input({ customerEdits: twice }, world.sheets));
        expect(findings).toEqual([]);
        // The last value changed behind the customer's back is still found.
        world.sheets["Risk Register"]!.rows[0]!.cells[0]!.value = "Customer's own plan";
        expect(check(world.state(), [job()], input({ customerEdits: twice }, world.sheets)).findings.map((finding) => finding.detail)).toEqual([
            expect.stringMatching(/was "Customer's second plan", and is now "Customer's own plan"/),
        ]);
    });

    it("keeps a customer's edited formula unless a take-template decision was for that very conflict", () => {
        const world = convergedWorld();
        const customers = '=IF(COUNTIF({IND-1 Approvals Decision}, "Pending") > 0, "Waiting on approvals", "Clear")';
        const edit: CustomerEditMade = { rowId: 7, code: "IND-1", edit: "columnFormula", sheet: "Change Log", sheetId: world.sheets["Change Log"]!.id, column: "Approval Status", columnId: APPROVAL_COLUMN, value: customers, when: "before" };
        const conflict = { kind: "edited", sheet: "Change Log", column: "Approval Status", aspect: "formula" };
        const decided = job({ convergence: JSON.stringify({ to: V1, state: "done", decision: "take-template", plan: { conflicts: [conflict] } }) });
        // The template's formula written over the customer's without a decision for it: found.
        const overwritten = check(world.state(), [job({ convergence: JSON.stringify({ to: V1, state: "done", plan: { conflicts: [conflict] } }) })], input({ customerEdits: [edit], decisions: { "1000-7": ["keep-product"] } }));
        expect(overwritten.categories).toEqual(["invariantFailures"]);
        expect(overwritten.findings[0]!.detail).toMatch(/customer's formula .* though no take-template decision was for it/);
        // A take-template for another conflict does not cover it.
        const otherConflict = job({ convergence: JSON.stringify({ to: V1, state: "done", decision: "take-template", plan: { conflicts: [{ ...conflict, column: "Change" }] } }) });
        expect(check(world.state(), [otherConflict], input({ customerEdits: [edit], decisions: { "1000-7": ["take-template"] } })).categories).toEqual(["invariantFailures"]);
        // Taken for that conflict: the template's formula is right.
        expect(check(world.state(), [decided], input({ customerEdits: [edit], decisions: { "1000-7": ["take-template"] } })).findings).toEqual([]);
        // Kept: the customer's formula stands, and is not the template's — no finding either way.
        world.sheets["Change Log"]!.columns[1]!.formula = customers;
        expect(check(world.state(), [job()], input({ customerEdits: [edit], decisions: { "1000-7": ["keep-product"] } })).findings).toEqual([]);
    });

    it("finds applies of one template that answered different versions, and an apply never answered", () => {
        const world = convergedWorld();
        expect(check(world.state(), [job()], input({ targets: [V1, V2] })).categories).toEqual(["invariantFailures"]);
        const none = check(world.state(), [job({ convergence: undefined })], input({ targets: [], applies: [{ status: null, versions: [] }] }));
        expect(none.categories).toEqual(["invariantFailures", "lost"]);
    });
});
