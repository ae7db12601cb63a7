import { createHash } from "node:crypto";
import { z } from "zod";
import type { FolderChild, Sheet, SummaryField } from "../smartsheet/model";
import type { SmartsheetPort } from "../smartsheet/SmartsheetPort";

/** The summary field every product gets its code written into. */
export const PRODUCT_CODE_FIELD = "Product Code";

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
});
export type TemplateSheet = z.infer<typeof TemplateSheet>;

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

export function referencesIn(formula: string): string[] {
    return [...formula.matchAll(/\{([^{}]+)\}/g)].map((match) => match[1]!);
}

/** Reads every template sheet (with its references and summary) and records what to remap. */
export async function readBlueprint(
    smartsheet: SmartsheetPort,
    templateFolderId: number,
    templateSheets: readonly FolderChild[],
    now: Date,
): Promise<Blueprint> {
    const sheets: Array<{ listed: FolderChild; sheet: Sheet; summary: SummaryField[] }> = [];
    for (const listed of templateSheets) {
        const sheet = await smartsheet.getSheet(listed.id, { include: ["crossSheetReferences"] });
        const summary = sheet.hasSummaryFields === false ? [] : await smartsheet.getSummaryFields(listed.id);
        sheets.push({ listed, sheet, summary });
    }
    const byId = new Map(sheets.map(({ sheet }) => [sheet.id, sheet]));

    const templateSheetsOut = sheets.map(({ listed, sheet, summary }): TemplateSheet => {
        const columnTitle = (sheet_: Sheet, columnId: number | undefined) =>
            columnId === undefined ? undefined : sheet_.columns.find((column) => column.id === columnId)?.title;
        const rowNumber = (sheet_: Sheet, rowId: number | undefined) =>
            rowId === undefined ? undefined : sheet_.rows.find((row) => row.id === rowId)?.rowNumber;

        const references = (sheet.crossSheetReferences ?? []).map((reference): TemplateReference => {
            const source = byId.get(reference.sourceSheetId);
            return {
                name: reference.name,
                sourceTemplate: source?.name,
                sourceSheetId: reference.sourceSheetId,
                startColumnTitle: source ? columnTitle(source, reference.startColumnId) : undefined,
                endColumnTitle: source ? columnTitle(source, reference.endColumnId) : undefined,
                startRowNumber: source ? rowNumber(source, reference.startRowId) : undefined,
                endRowNumber: source ? rowNumber(source, reference.endRowId) : undefined,
            };
        });
        const internal = new Set(references.filter((reference) => reference.sourceTemplate).map((reference) => reference.name));
        const usesInternal = (formula: string | undefined): formula is string =>
            formula !== undefined && referencesIn(formula).some((name) => internal.has(name));

        const titleOf = new Map(sheet.columns.map((column) => [column.id, column.title]));
        const columnFormulaIds = new Set(sheet.columns.filter((column) => column.formula).map((column) => column.id));
        return {
            name: listed.name,
            templateSheetId: listed.id,
            modifiedAt: listed.modifiedAt,
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
            summaryFormulas: summary
                .filter((field) => usesInternal(field.formula))
                .map((field) => ({ title: field.title, formula: field.formula! })),
            summaryTitles: summary.map((field) => field.title),
        };
    });

    return Blueprint.parse({
        version: blueprintVersion(templateSheets),
        templateFolderId,
        builtAt: now.toISOString(),
        sheets: templateSheetsOut,
    });
}

/** Template sheets whose copies hold formulas through references into the template. */
export function holders(blueprint: Blueprint): TemplateSheet[] {
    return blueprint.sheets.filter((sheet) => sheet.references.some((reference) => reference.sourceTemplate));
}
