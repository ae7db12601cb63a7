import { z } from "zod";
import { composeProductNames } from "../naming/productNames";
import { referencesIn, type SheetRead } from "../provisioning/sheetReads";
import { PRODUCT_CODE_FIELD } from "../provisioning/templateRules";
import type { Column, Sheet, SummaryField } from "../smartsheet/model";

/**
 * What convergence compares of a template version and of a product: per sheet, its columns in
 * order and its summary fields, with the attributes a template edit can change. Built from what
 * the adapter reads (`getSheet`, `getSummaryFields`), with no call of its own.
 */

const Id = z.number().int().positive();

const Value = z.union([z.string(), z.number(), z.boolean()]);

export const ColumnShape = z.object({
    /**
     * The column's id in its sheet. A template column keeps its id across edits, renames
     * included, so two template versions' columns are paired by it. Absent from a shape
     * recorded without ids (then columns are paired by title, and by position and type).
     */
    id: Id.optional(),
    /** Position in the sheet, from 0. */
    index: z.number().int().nonnegative(),
    title: z.string(),
    type: z.string(),
    primary: z.boolean().default(false),
    options: z.array(z.string()).default([]),
    symbol: z.string().optional(),
    systemColumnType: z.string().optional(),
    /** The column formula, which every cell of the column shows. */
    formula: z.string().optional(),
    description: z.string().optional(),
    validation: z.boolean().default(false),
    locked: z.boolean().default(false),
    hidden: z.boolean().default(false),
});
export type ColumnShape = z.infer<typeof ColumnShape>;

export const SummaryFieldShape = z.object({
    /** The field's id in its summary; like a column's, it survives the field's edits. */
    id: Id.optional(),
    title: z.string(),
    type: z.string().optional(),
    options: z.array(z.string()).default([]),
    symbol: z.string().optional(),
    formula: z.string().optional(),
    /** Only what the template puts there: none for a field with a formula, nor for the Product Code the app stamps. */
    value: Value.optional(),
});
export type SummaryFieldShape = z.infer<typeof SummaryFieldShape>;

/** A cross-sheet reference by name and the sheet it reads: into a template sheet, it is remapped in a product's copy. */
export const ReferenceShape = z.object({ name: z.string(), sourceSheetId: Id });
export type ReferenceShape = z.infer<typeof ReferenceShape>;

export const SheetShape = z.object({
    /** The template sheet's name (`TemplateSheet.name`). */
    name: z.string(),
    sheetId: Id,
    columns: z.array(ColumnShape),
    summaryFields: z.array(SummaryFieldShape),
    references: z.array(ReferenceShape).default([]),
    /** The references its cell formulas use (cells of columns without a column formula): the remap rewrites those cells in a copy. */
    cellFormulaReferences: z.array(z.string()).default([]),
});
export type SheetShape = z.infer<typeof SheetShape>;

export const TemplateShape = z.object({ sheets: z.array(SheetShape) });
export type TemplateShape = z.infer<typeof TemplateShape>;

/** A product's column: its own id, and whether any of its cells holds something a person put there. */
export const ProductColumnShape = ColumnShape.extend({ id: Id, hasData: z.boolean() });
export type ProductColumnShape = z.infer<typeof ProductColumnShape>;

/** A product's summary field: its own id, and whether it holds a value (the Product Code field does). */
export const ProductSummaryFieldShape = SummaryFieldShape.extend({ id: Id, hasData: z.boolean() });
export type ProductSummaryFieldShape = z.infer<typeof ProductSummaryFieldShape>;

/** A product's copy of a template sheet. */
export const ProductSheetShape = z.object({
    /** The template sheet it is the copy of. */
    template: z.string(),
    sheetId: Id,
    /** Its name in the product folder. */
    name: z.string(),
    columns: z.array(ProductColumnShape),
    summaryFields: z.array(ProductSummaryFieldShape),
    references: z.array(ReferenceShape).default([]),
});
export type ProductSheetShape = z.infer<typeof ProductSheetShape>;

export const ProductShape = z.object({
    /** As on the job row: the product's sheet names are composed from it. */
    productName: z.string(),
    sheets: z.array(ProductSheetShape),
});
export type ProductShape = z.infer<typeof ProductShape>;

/** One sheet as read with its summary (`getSheet`, `getSummaryFields`). */
export function shapeOfSheet(sheet: Sheet, summary: readonly SummaryField[]): SheetShape {
    const withColumnFormula = new Set(sheet.columns.filter((column) => column.formula !== undefined).map((column) => column.id));
    const cellFormulas = sheet.rows.flatMap((row) => row.cells.filter((cell) => !withColumnFormula.has(cell.columnId)).map((cell) => cell.formula));
    return SheetShape.parse({
        name: sheet.name,
        sheetId: sheet.id,
        columns: inIndexOrder(sheet.columns).map(columnShape),
        summaryFields: [...summary].sort(byTitle).map(summaryFieldShape),
        references: (sheet.crossSheetReferences ?? [])
            .map((reference) => ({ name: reference.name, sourceSheetId: reference.sourceSheetId }))
            .sort((a, b) => compareText(a.name, b.name) || a.sourceSheetId - b.sourceSheetId),
        cellFormulaReferences: [...new Set(cellFormulas.flatMap((formula) => (formula === undefined ? [] : referencesIn(formula))))].sort(compareText),
    });
}

/** The template folder's sheets as read (`readTemplateSheets`, `analyseTemplate`'s reads), by name. */
export function shapeOfTemplate(reads: Iterable<SheetRead>): TemplateShape {
    return { sheets: [...reads].map(({ sheet, summary }) => shapeOfSheet(sheet, summary)).sort((a, b) => compareText(a.name, b.name)) };
}

export interface ProductReads {
    productCode: string;
    productName: string;
    /** The template sheet names the product's copies were named from (the job row's `templates`). */
    templates: readonly string[];
    /** Sheets of the product folder as read; those not named as one of its copies (a customer's own) are left out. */
    reads: Iterable<SheetRead>;
}

/**
 * The product's copies, each recognised as provisioning names it (`composeProductNames`, as
 * `namesOf` does for the copy stage and the final audit), with what its columns and fields hold.
 */
export function shapeOfProduct({ productCode, productName, templates, reads }: ProductReads): ProductShape {
    const composed = composeProductNames(productCode, productName, templates).sheets;
    const templateNamed = new Map(Object.entries(composed).map(([template, name]) => [name, template]));
    const sheets = new Map<string, ProductSheetShape>();
    for (const { sheet, summary } of reads) {
        const template = templateNamed.get(sheet.name);
        if (template === undefined) continue;
        if (sheets.has(template)) {
            throw new Error(`Two sheets of the product are named "${sheet.name}" (${sheets.get(template)!.sheetId}, ${sheet.id}); the copy stage's verification keeps one.`);
        }
        const shape = shapeOfSheet(sheet, summary);
        const holding = columnsHoldingData(sheet);
        sheets.set(template, {
            template,
            sheetId: sheet.id,
            name: sheet.name,
            columns: shape.columns.map((column) => ({ ...column, id: column.id!, hasData: holding.has(column.id!) })),
            summaryFields: [...summary].sort(byTitle).map((field) => ({ ...summaryFieldShape(field), id: field.id, hasData: fieldHoldsData(field) })),
            references: shape.references,
        });
    }
    return { productName, sheets: [...sheets.values()].sort((a, b) => compareText(a.template, b.template)) };
}

function columnShape(column: Column, index: number): ColumnShape {
    return ColumnShape.parse({
        id: column.id,
        index,
        title: column.title,
        type: column.type,
        primary: column.primary,
        options: column.options,
        symbol: column.symbol,
        systemColumnType: column.systemColumnType,
        formula: column.formula,
        description: column.description,
        validation: column.validation,
        locked: column.locked,
        hidden: column.hidden,
    });
}

function summaryFieldShape(field: SummaryField): SummaryFieldShape {
    const templateContent = field.formula === undefined && field.title !== PRODUCT_CODE_FIELD;
    return SummaryFieldShape.parse({
        id: field.id,
        title: field.title,
        type: field.type,
        options: field.options,
        symbol: field.symbol,
        formula: field.formula,
        value: templateContent ? valueOf(field) : undefined,
    });
}

function valueOf(field: SummaryField): string | number | boolean | undefined {
    const { objectValue, displayValue } = field;
    if (typeof objectValue === "string" || typeof objectValue === "number" || typeof objectValue === "boolean") return isEmpty(objectValue) ? undefined : objectValue;
    return displayValue ? displayValue : undefined;
}

/** An unchecked box or an empty string is what a cell holds before anyone writes it. */
function isEmpty(value: unknown): boolean {
    return value === undefined || value === null || value === "" || value === false;
}

/** Cells with a value or a formula of their own; a column formula's cells are computed, not held. */
function columnsHoldingData(sheet: Sheet): Set<number> {
    const computed = new Set(sheet.columns.filter((column) => column.formula !== undefined).map((column) => column.id));
    const holding = new Set<number>();
    for (const row of sheet.rows) {
        for (const cell of row.cells) {
            if (computed.has(cell.columnId)) continue;
            if (cell.formula !== undefined || !isEmpty(cell.value) || !isEmpty(cell.displayValue)) holding.add(cell.columnId);
        }
    }
    return holding;
}

function fieldHoldsData(field: SummaryField): boolean {
    return field.formula === undefined && (!isEmpty(field.objectValue) || !isEmpty(field.displayValue));
}

function inIndexOrder(columns: readonly Column[]): Column[] {
    return [...columns].sort((a, b) => a.index - b.index || a.id - b.id);
}

function byTitle(a: { title: string }, b: { title: string }): number {
    return compareText(a.title, b.title);
}

/** Code-unit order: the same on every machine, whatever its locale. */
export function compareText(a: string, b: string): number {
    return a < b ? -1 : a > b ? 1 : 0;
}
