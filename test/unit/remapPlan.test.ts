import { describe, expect, it } from "vitest";
import type { Blueprint, SheetRead, TemplateSheet } from "../../src/shared/provisioning/Blueprint";
import { NeedsPersonError } from "../../src/shared/provisioning/errors";
import { planRemap } from "../../src/shared/provisioning/remap/plan";
import { blueprintReads, copiesToRemap, problemsOfCopiesNotRead, referenceTargets } from "../../src/shared/provisioning/remap/sources";
import type { Sheet, SummaryField } from "../../src/shared/smartsheet/model";

/**
 * The remap's plan without Smartsheet: a product of two copies, the Document Register (22, from
 * template sheet 12) whose formulas read a range of the Schedule (21, from template sheet 11).
 */
const product = {
    productCode: "IND-1042",
    templates: ["Schedule", "Document Register"],
    copies: {
        Schedule: { templateSheetId: 11, sheetId: 21, name: "IND-1042 - Schedule" },
        "Document Register": { templateSheetId: 12, sheetId: 22, name: "IND-1042 - Document Register" },
    },
    remapped: [] as string[],
};
const OURS = "IND-1042 Schedule Range";

const register: TemplateSheet = {
    name: "Document Register",
    templateSheetId: 12,
    references: [
        { name: "Schedule Range", sourceTemplate: "Schedule", sourceSheetId: 11, startColumnTitle: "Task", endColumnTitle: "Finish", startRowNumber: 1, endRowNumber: 2 },
    ],
    cellFormulas: [{ rowNumber: 1, columnTitle: "Due", formula: "=MAX({Schedule Range})" }],
    columnFormulas: [{ columnTitle: "Count", formula: "=COUNT({Schedule Range})" }],
    summaryFormulas: [{ title: "Tasks", formula: "=COUNT({Schedule Range})" }],
    summaryTitles: ["Tasks", "Product Code"],
    formulaReferences: ["Schedule Range"],
};
const schedule: TemplateSheet = {
    name: "Schedule",
    templateSheetId: 11,
    references: [],
    cellFormulas: [],
    columnFormulas: [],
    summaryFormulas: [],
    summaryTitles: [],
    formulaReferences: [],
};

function scheduleCopy(rows: Array<[id: number, rowNumber: number, task: string]> = [[301, 1, "Design"], [302, 2, "Build"]]): Sheet {
    return {
        id: 21,
        name: "IND-1042 - Schedule",
        columns: [
            { id: 201, index: 0, title: "Task", type: "TEXT_NUMBER", primary: true },
            { id: 202, index: 1, title: "Finish", type: "DATE" },
        ],
        rows: rows.map(([id, rowNumber, task]) => ({ id, rowNumber, cells: [{ columnId: 201, value: task }] })),
        crossSheetReferences: [],
    };
}

/** The register's copy as read: its formulas as the template had them, or (`rewritten`) as an earlier run left them. */
function registerCopy(rewritten = false): Sheet {
    const name = rewritten ? OURS : "Schedule Range";
    return {
        id: 22,
        name: "IND-1042 - Document Register",
        columns: [
            { id: 401, index: 0, title: "Due", type: "DATE" },
            { id: 402, index: 1, title: "Count", type: "TEXT_NUMBER", formula: `=COUNT({${name}})` },
        ],
        rows: [{ id: 501, rowNumber: 1, cells: [{ columnId: 401, formula: `=MAX({${name}})` }] }],
        crossSheetReferences: [
            { name: "Schedule Range", sourceSheetId: 11 },
            ...(rewritten ? [{ name: OURS, sourceSheetId: 21 }] : []),
        ],
    };
}

function registerSummary(rewritten = false): SummaryField[] {
    return [
        { id: 601, title: "Tasks", formula: rewritten ? `=COUNT({${OURS}})` : "=COUNT({Schedule Range})" },
        { id: 602, title: "Product Code", objectValue: rewritten ? "IND-1042" : undefined },
    ];
}

const targets = referenceTargets(product, [], [schedule, register], []);
type RemapReads = Parameters<typeof planRemap>[1];

function reads(patch: Partial<RemapReads> = {}): RemapReads {
    return {
        holders: [register],
        sheets: new Map([
            ["Schedule", scheduleCopy()],
            ["Document Register", registerCopy()],
        ]),
        summaries: new Map([["Document Register", registerSummary()]]),
        plannedSummaries: new Map(),
        blueprintReferences: new Map(),
        targets,
        ...patch,
    };
}

describe("the remap's plan", () => {
    it("points each holder at the product's own sheet (columns by title, rows by number) and rewrites every formula to use it, the code in the summary's request", () => {
        const planned = planRemap(product, reads());
        expect(planned).toEqual({
            remap: {
                copies: [
                    {
                        template: "Document Register",
                        sheetId: 22,
                        references: [{ name: OURS, sourceSheetId: 21, startColumnId: 201, endColumnId: 202, startRowId: 301, endRowId: 302 }],
                        referencesOnCopy: new Set(["Schedule Range"]),
                        rows: [{ id: 501, cells: [{ columnId: 401, formula: `=MAX({${OURS}})` }] }],
                        columns: [{ columnId: 402, formula: `=COUNT({${OURS}})` }],
                        summary: { updates: [{ id: 601, formula: `=COUNT({${OURS}})` }, { id: 602, objectValue: "IND-1042" }], stampsCode: true },
                    },
                ],
                summaryFieldIds: { "Document Register": { Tasks: 601, "Product Code": 602 } },
                summaryRequests: { "Document Register": { updates: [{ id: 601, formula: `=COUNT({${OURS}})` }, { id: 602, objectValue: "IND-1042" }], stampsCode: true } },
            },
        });
    });

    it("plans no formula write for a copy an earlier run rewrote already, and counts the code stamped when the summary shows it", () => {
        const planned = planRemap(product, reads({ sheets: new Map([["Schedule", scheduleCopy()], ["Document Register", registerCopy(true)]]), summaries: new Map([["Document Register", registerSummary(true)]]) }));
        if (!("remap" in planned)) throw new Error(`expected a plan, got ${JSON.stringify(planned)}`);
        const [copy] = planned.remap.copies;
        expect(copy).toMatchObject({ rows: [], columns: [], summary: { updates: [], stampsCode: true } });
        expect(copy!.referencesOnCopy).toEqual(new Set(["Schedule Range", OURS]));
    });

    it("sends the request an earlier run planned for a summary it does not read again", () => {
        const earlier = { updates: [{ id: 601, formula: `=COUNT({${OURS}})` }], stampsCode: false };
        const planned = planRemap(product, reads({ summaries: new Map(), plannedSummaries: new Map([["Document Register", earlier]]) }));
        if (!("remap" in planned)) throw new Error("expected a plan");
        expect(planned.remap.copies[0]!.summary).toEqual(earlier);
        expect(planned.remap).toMatchObject({ summaryFieldIds: {}, summaryRequests: {} });
    });

    it("plans nothing when a formula of a copy read would still point at a template sheet once rewritten, and says which", () => {
        const stray = scheduleCopy();
        stray.columns.push({ id: 203, index: 2, title: "Owner", type: "TEXT_NUMBER", formula: "=INDEX({Register Range}, 1)" });
        stray.crossSheetReferences = [{ name: "Register Range", sourceSheetId: 12 }];
        const planned = planRemap(product, reads({ sheets: new Map([["Schedule", stray], ["Document Register", registerCopy()]]) }));
        expect(planned).toEqual({ problems: [expect.objectContaining({ kind: "template", message: expect.stringContaining("{Register Range}") })] });
    });

    it("needs a person when the copy a reference reaches lacks a column or row of its range", () => {
        const shorter = scheduleCopy([[301, 1, "Design"]]);
        expect(() => planRemap(product, reads({ sheets: new Map([["Schedule", shorter], ["Document Register", registerCopy()]]) }))).toThrow(NeedsPersonError);
        expect(() => planRemap(product, reads({ sheets: new Map([["Schedule", shorter], ["Document Register", registerCopy()]]) }))).toThrow(/row 2 of "IND-1042 - Schedule"/);
    });
});

describe("what each source says the remap must do", () => {
    const blueprint: Blueprint = { version: "v1", templateFolderId: 1, builtAt: "2026-12-01T00:00:00.000Z", sheets: [schedule, register], outsideSheets: [], settled: true };

    it("from the blueprint: reads the holders still to remap and the sheets their references reach, and a summary only without a planned request", () => {
        expect(blueprintReads(product, blueprint, { blueprintVersion: "v1", summaries: {} })).toEqual({
            holders: [register],
            sheets: new Set(["Document Register", "Schedule"]),
            summaries: new Set(["Document Register"]),
        });
        const planned = { blueprintVersion: "v1", summaries: { "Document Register": { updates: [], stampsCode: true } } };
        expect(blueprintReads(product, blueprint, planned).summaries).toEqual(new Set());
        expect(blueprintReads({ remapped: ["Document Register"] }, blueprint, planned)).toEqual({ holders: [], sheets: new Set(), summaries: new Set() });
    });

    it("from the blueprint: a copy not read whose formula reaches another product's sheet needs a person, at no call", () => {
        const theirs = { sheetId: 77, name: "IND-0999 - Schedule", ofAProduct: true };
        const log = { ...schedule, name: "Change Log", templateSheetId: 13, references: [{ name: "Their Range", sourceSheetId: 77 }], formulaReferences: ["Their Range"] };
        const withLog = { ...blueprint, sheets: [...blueprint.sheets, log], outsideSheets: [theirs] };
        const problems = problemsOfCopiesNotRead(product, withLog, referenceTargets(product, [], withLog.sheets, [theirs]));
        expect(problems).toEqual([expect.objectContaining({ kind: "otherProduct", message: expect.stringContaining("{Their Range}") })]);
    });

    it("from the copies: a copy's references, still into the template, become the holder to remap; rows that moved since the copy need a person", () => {
        const ids = (sheet: Sheet): Sheet => ({
            ...sheet,
            id: 11,
            columns: sheet.columns.map((column) => ({ ...column, id: column.id + 700 })),
            rows: sheet.rows.map((row) => ({ ...row, id: row.id + 600, cells: row.cells.map((cell) => ({ ...cell, columnId: cell.columnId + 700 })) })),
        });
        const templateSchedule = ids(scheduleCopy());
        const templateReads = new Map<number, SheetRead>([[11, { sheet: templateSchedule, summary: [] }]]);
        const copyOfRegister = registerCopy();
        copyOfRegister.crossSheetReferences = [{ name: "Schedule Range", sourceSheetId: 11, startColumnId: 901, endColumnId: 902, startRowId: 901, endRowId: 902 }];
        const copies = (scheduleRows: Array<[number, number, string]>) =>
            new Map<string, SheetRead>([
                ["Schedule", { sheet: scheduleCopy(scheduleRows), summary: [] }],
                ["Document Register", { sheet: copyOfRegister, summary: registerSummary() }],
            ]);

        const [holder, ...others] = copiesToRemap(product, templateReads, copies([[301, 1, "Design"], [302, 2, "Build"]]));
        expect(others).toEqual([]);
        expect(holder).toMatchObject({ name: "Document Register", references: [register.references[0]], cellFormulas: register.cellFormulas, columnFormulas: register.columnFormulas });

        expect(() => copiesToRemap(product, templateReads, copies([[301, 1, "Build"], [302, 2, "Design"]]))).toThrow(/the rows of that template sheet moved/);
    });
});
