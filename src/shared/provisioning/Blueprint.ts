import { createHash } from "node:crypto";
import { z } from "zod";
import { isSmartsheetError } from "../smartsheet/errors";
import type { FolderChild, Sheet } from "../smartsheet/model";
import type { SmartsheetPort } from "../smartsheet/SmartsheetPort";
import { TemplateShape, shapeOfTemplate } from "../convergence/TemplateShape";
import { NeedsPersonError } from "./errors";
import { readSheetForAnalysis, referencesIn, type SheetRead } from "./sheetReads";
import { isNamedLikeAProductSheet, isRemapped } from "./templateRules";

export { readSheetForAnalysis, referencesIn, type SheetRead } from "./sheetReads";

const Id = z.number().int().positive();

/** A cross-sheet reference of a template sheet, in terms that survive copying (titles, row numbers). */
export const TemplateReference = z.object({
    name: z.string(),
    /** Template sheet name when the reference points inside the template (and must be remapped). */
    sourceTemplate: z.string().optional(),
    sourceSheetId: Id,
    startColumnTitle: z.string().optional(),
    endColumnTitle: z.string().optional(),
    startRowNumber: z.number().int().optional(),
    endRowNumber: z.number().int().optional(),
});
export type TemplateReference = z.infer<typeof TemplateReference>;

export const TemplateSheet = z.object({
    name: z.string(),
    templateSheetId: Id,
    modifiedAt: z.string().optional(),
    references: z.array(TemplateReference),
    /** Only formulas that use a reference into the template: those are the ones to rewrite. */
    cellFormulas: z.array(z.object({ rowNumber: z.number().int(), columnTitle: z.string(), formula: z.string() })),
    columnFormulas: z.array(z.object({ columnTitle: z.string(), formula: z.string() })),
    summaryFormulas: z.array(z.object({ title: z.string(), formula: z.string() })),
    summaryTitles: z.array(z.string()),
    /**
     * The reference names the sheet's formulas use (cells, columns, summary): what its copy's
     * formulas reach besides those rewritten. Blueprints stored before it was recorded have none,
     * and count every reference of the sheet as used.
     */
    formulaReferences: z.array(z.string()).optional(),
});
export type TemplateSheet = z.infer<typeof TemplateSheet>;

/** A sheet outside the template that a template sheet's reference points at (never remapped). */
export const OutsideSheet = z.object({
    sheetId: Id,
    name: z.string(),
    /** Named like another product's copy of a template sheet: no product may refer to it. */
    ofAProduct: z.boolean(),
});
export type OutsideSheet = z.infer<typeof OutsideSheet>;

/**
 * What provisioning needs to know about the template folder, read once per template version
 * (not once per product): which sheets there are, and which of them hold formulas through
 * references to other template sheets.
 */
export const Blueprint = z.object({
    version: z.string(),
    templateFolderId: Id,
    builtAt: z.string(),
    sheets: z.array(TemplateSheet).min(1),
    /** Blueprints stored before outside sheets were named have none. */
    outsideSheets: z.array(OutsideSheet).default([]),
    /**
     * The analysis read the template more than a second (plus the clock skew allowed) after its
     * last edit. Smartsheet keeps `modifiedAt` in whole seconds, so an edit within the second of
     * an unsettled analysis leaves the version unchanged: such a blueprint may describe the
     * template as it was before the edit. Blueprints stored before this was known count as settled.
     */
    settled: z.boolean().default(true),
    /**
     * The template version's shape (columns, summary fields, references of every sheet), built
     * from the analysis's own reads: what convergence compares a product with. Blueprints stored
     * before it was recorded have none.
     */
    shape: TemplateShape.optional(),
});
export type Blueprint = z.infer<typeof Blueprint>;

/** The template folder's sheets decide the version: any edit changes a sheet's `modifiedAt`. */
export function blueprintVersion(templateSheets: readonly FolderChild[]): string {
    const identity = [...templateSheets]
        .sort((a, b) => a.id - b.id)
        .map((sheet) => `${sheet.id}|${sheet.name}|${sheet.modifiedAt ?? ""}`)
        .join("\n");
    return createHash("sha256").update(identity).digest("hex").slice(0, 20);
}

/**
 * Whether an analysis whose reads began at `readsFrom` (this instance's clock) saw the template
 * as it is for as long as its version lasts: every later edit then lands in a later second than
 * each sheet's listed `modifiedAt`, and so changes the version. A sheet listed without a
 * modification time cannot be judged, so its analysis is never settled.
 */
export function analysisSettles(templateSheets: readonly FolderChild[], readsFrom: Date, clockSkewMs: number): boolean {
    const modified = templateSheets.map((sheet) => (sheet.modifiedAt === undefined ? Number.NaN : Date.parse(sheet.modifiedAt)));
    if (modified.some((time) => Number.isNaN(time))) return false;
    return readsFrom.getTime() - clockSkewMs >= Math.max(...modified) + 1000;
}


/** Every template sheet as it is now, by template sheet id. */
export async function readTemplateSheets(smartsheet: SmartsheetPort, templateSheets: readonly FolderChild[]): Promise<Map<number, SheetRead>> {
    const reads = new Map<number, SheetRead>();
    for (const listed of templateSheets) reads.set(listed.id, await readSheetForAnalysis(smartsheet, listed.id));
    return reads;
}

/** Sheets whose references are remapped, by id: the template sheet's name and the sheet its ranges are read from. */
export type RemappableSheets = ReadonlyMap<number, { name: string; sheet: Sheet }>;

/**
 * One sheet's references and the formulas that use references into `remappable` sheets, in
 * terms that survive copying (column titles, row numbers). The same analysis serves a template
 * sheet and a product's copy of one (whose references still point at the template's sheets).
 */
export function analyseSheet(
    identity: { name: string; templateSheetId: number; modifiedAt?: string },
    { sheet, summary }: SheetRead,
    remappable: RemappableSheets,
): TemplateSheet {
    const columnTitle = (source: Sheet, columnId: number | undefined) =>
        columnId === undefined ? undefined : source.columns.find((column) => column.id === columnId)?.title;
    const rowNumber = (source: Sheet, rowId: number | undefined) =>
        rowId === undefined ? undefined : source.rows.find((row) => row.id === rowId)?.rowNumber;

    const references = (sheet.crossSheetReferences ?? []).map((reference): TemplateReference => {
        const source = remappable.get(reference.sourceSheetId);
        return {
            name: reference.name,
            sourceTemplate: source?.name,
            sourceSheetId: reference.sourceSheetId,
            startColumnTitle: source ? columnTitle(source.sheet, reference.startColumnId) : undefined,
            endColumnTitle: source ? columnTitle(source.sheet, reference.endColumnId) : undefined,
            startRowNumber: source ? rowNumber(source.sheet, reference.startRowId) : undefined,
            endRowNumber: source ? rowNumber(source.sheet, reference.endRowId) : undefined,
        };
    });
    const internal = new Set(references.filter(isRemapped).map((reference) => reference.name));
    const usesInternal = (formula: string | undefined): formula is string =>
        formula !== undefined && referencesIn(formula).some((name) => internal.has(name));

    const everyFormula = [
        ...sheet.rows.flatMap((row) => row.cells.map((cell) => cell.formula)),
        ...sheet.columns.map((column) => column.formula),
        ...summary.map((field) => field.formula),
    ].filter((formula): formula is string => formula !== undefined);

    const titleOf = new Map(sheet.columns.map((column) => [column.id, column.title]));
    const columnFormulaIds = new Set(sheet.columns.filter((column) => column.formula).map((column) => column.id));
    return {
        name: identity.name,
        templateSheetId: identity.templateSheetId,
        modifiedAt: identity.modifiedAt,
        references,
        // Cells of a column with a column formula show that formula; it is rewritten once, on the column.
        cellFormulas: sheet.rows.flatMap((row) =>
            row.cells
                .filter((cell) => !columnFormulaIds.has(cell.columnId) && usesInternal(cell.formula))
                .map((cell) => ({ rowNumber: row.rowNumber, columnTitle: titleOf.get(cell.columnId) ?? "", formula: cell.formula! })),
        ),
        columnFormulas: sheet.columns
            .filter((column) => usesInternal(column.formula))
            .map((column) => ({ columnTitle: column.title, formula: column.formula! })),
        summaryFormulas: summary.filter((field) => usesInternal(field.formula)).map((field) => ({ title: field.title, formula: field.formula! })),
        summaryTitles: summary.map((field) => field.title),
        formulaReferences: [...new Set(everyFormula.flatMap(referencesIn))].sort(),
    };
}

/** The blueprint of template sheets already read: each analysed against all the others. */
export function blueprintOf(
    templateFolderId: number,
    templateSheets: readonly FolderChild[],
    reads: ReadonlyMap<number, SheetRead>,
    outsideSheets: readonly OutsideSheet[],
    now: Date,
    settled: boolean,
): Blueprint {
    const remappable: RemappableSheets = new Map(templateSheets.map((listed) => [listed.id, { name: listed.name, sheet: reads.get(listed.id)!.sheet }]));
    return Blueprint.parse({
        version: blueprintVersion(templateSheets),
        templateFolderId,
        builtAt: now.toISOString(),
        sheets: templateSheets.map((listed) =>
            analyseSheet({ name: listed.name, templateSheetId: listed.id, modifiedAt: listed.modifiedAt }, reads.get(listed.id)!, remappable),
        ),
        outsideSheets,
        settled,
        shape: shapeOfTemplate(templateSheets.map((listed) => reads.get(listed.id)!)),
    });
}

/** Sheets outside the template that the template sheets' references point at. */
export function outsideSheetIds(templateSheets: readonly FolderChild[], reads: ReadonlyMap<number, SheetRead>): number[] {
    const templateIds = new Set(templateSheets.map((listed) => listed.id));
    return [...reads.values()].flatMap(({ sheet }) =>
        (sheet.crossSheetReferences ?? []).map((reference) => reference.sourceSheetId).filter((id) => !templateIds.has(id)),
    );
}

/**
 * Names the sheets outside the template that references point at (one read each, once per
 * template version), and tells a product's sheet from a shared one by its name.
 */
export async function readOutsideSheets(
    smartsheet: SmartsheetPort,
    sheetIds: readonly number[],
    templateSheetNames: readonly string[],
): Promise<OutsideSheet[]> {
    const found: OutsideSheet[] = [];
    for (const sheetId of new Set(sheetIds)) {
        let name: string;
        try {
            name = (await smartsheet.getSheet(sheetId)).name;
        } catch (error) {
            if (!(isSmartsheetError(error) && error.kind === "permanent")) throw error;
            throw new NeedsPersonError(
                `A template formula refers to sheet ${sheetId} outside the template, which Sheetwright cannot read (${error.message}); ` +
                    `share that sheet with Sheetwright's account or remove the reference from the template, then unpark the job.`,
            );
        }
        found.push({ sheetId, name, ofAProduct: isNamedLikeAProductSheet(name, templateSheetNames) });
    }
    return found;
}
