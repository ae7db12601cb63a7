import type { JobRow, PlannedSummaryWrite } from "../../jobs/JobRow";
import { referenceName } from "../../naming/productNames";
import type { Sheet, SummaryField } from "../../smartsheet/model";
import type { NewCrossSheetReference, RowUpdate, SummaryFieldUpdate } from "../../smartsheet/SmartsheetPort";
import type { TemplateReference, TemplateSheet } from "../Blueprint";
import { NeedsPersonError } from "../errors";
import { formulasOf, referenceProblems, type ReferenceProblem, type ReferenceTargets } from "../productReferences";
import { isRemapped, PRODUCT_CODE_FIELD } from "../templateRules";

/** What a remap works from: the product's copies to remap and what was read of them, whichever source described them. */
interface RemapReads {
    /** Copies to remap, by the job's template sheet names. */
    holders: readonly TemplateSheet[];
    /** Copies read whole, with their references. */
    sheets: ReadonlyMap<string, Sheet>;
    /** Summaries read (their field ids are recorded on the row). */
    summaries: ReadonlyMap<string, SummaryField[]>;
    /** Summary requests an earlier run planned, for copies whose summary was not read now. */
    plannedSummaries: ReadonlyMap<string, PlannedSummaryWrite>;
    /** The references of copies not read whole, as the blueprint knows them. */
    blueprintReferences: ReadonlyMap<string, readonly TemplateReference[]>;
    targets: ReferenceTargets;
}

/** One copy's remap: every write it needs, in the order they are sent. */
export interface CopyRemap {
    template: string;
    sheetId: number;
    /** The product's references the copy's formulas use instead of the template's. */
    references: NewCrossSheetReference[];
    /** The names of the references the copy had when read whole: absent when it was not read. */
    referencesOnCopy?: ReadonlySet<string>;
    /** Cell formulas that do not read as rewritten already, one update per row. */
    rows: RowUpdate[];
    columns: { columnId: number; formula: string }[];
    /** The copy's summary request, planned now or by an earlier run. */
    summary?: PlannedSummaryWrite;
}

export interface ProductRemap {
    copies: CopyRemap[];
    /** Template sheet name → its copy's summary field ids by title, from the summaries read. */
    summaryFieldIds: Record<string, Record<string, number>>;
    /** The summary requests worked out now, from the summaries read. */
    summaryRequests: Record<string, PlannedSummaryWrite>;
}

type PlannedRemap = { remap: ProductRemap } | { problems: ReferenceProblem[] };

/**
 * Works out the product's references — columns matched by title, rows by row number — and what
 * every formula of the copies read becomes once it uses them; checks each of those formulas as it
 * will be; and only if none would point outside the product, the writes that make it so.
 */
export function planRemap(product: Pick<JobRow, "productCode" | "copies">, reads: RemapReads): PlannedRemap {
    const newReferences = new Map<string, NewCrossSheetReference[]>();
    const rewriters = new Map<string, (formula: string) => string>();
    for (const holder of reads.holders) {
        const created: NewCrossSheetReference[] = [];
        const renamed = new Map<string, string>();
        for (const reference of holder.references) {
            if (!isRemapped(reference)) continue;
            const target = reads.sheets.get(reference.sourceTemplate)!;
            const name = referenceName(product.productCode, reference.name);
            created.push({ name, ...rangeIn(target, reference, holder.name) });
            renamed.set(reference.name, name);
        }
        newReferences.set(holder.name, created);
        rewriters.set(holder.name, rewriterOf(renamed));
    }
    const rewrite = (template: string) => rewriters.get(template) ?? rewriterOf(new Map());

    const problems: ReferenceProblem[] = [];
    for (const template of new Set([...reads.sheets.keys(), ...reads.summaries.keys()])) {
        const sheet = reads.sheets.get(template);
        const existing = sheet ? (sheet.crossSheetReferences ?? []) : (reads.blueprintReferences.get(template) ?? []);
        const references = new Map<string, number>([
            ...existing.map((reference) => [reference.name, reference.sourceSheetId] as const),
            ...(newReferences.get(template) ?? []).map((reference) => [reference.name, reference.sourceSheetId] as const),
        ]);
        const formulas = formulasOf(sheet, reads.summaries.get(template)).map(rewrite(template));
        problems.push(...referenceProblems({ sheetName: product.copies[template]?.name ?? template, formulas, references }, reads.targets));
    }
    if (problems.length > 0) return { problems };

    const summaryRequests: Record<string, PlannedSummaryWrite> = {};
    for (const holder of reads.holders) {
        const summary = reads.summaries.get(holder.name);
        if (summary && holder.summaryFormulas.length > 0) summaryRequests[holder.name] = summaryWriteOf(holder, summary, rewrite(holder.name), product.productCode);
    }
    const copies = reads.holders.map((holder): CopyRemap => {
        const sheet = reads.sheets.get(holder.name);
        return {
            template: holder.name,
            sheetId: copyOf(product, holder.name),
            references: newReferences.get(holder.name)!,
            referencesOnCopy: sheet && new Set((sheet.crossSheetReferences ?? []).map((reference) => reference.name)),
            ...formulaUpdates(holder, sheet, rewrite(holder.name)),
            summary: summaryRequests[holder.name] ?? reads.plannedSummaries.get(holder.name),
        };
    });
    const summaryFieldIds = Object.fromEntries(
        [...reads.summaries].map(([template, fields]) => [template, Object.fromEntries(fields.map((field) => [field.title, field.id]))]),
    );
    return { remap: { copies, summaryFieldIds, summaryRequests } };
}

/** The product's copy of a template sheet, as the copy stage recorded it. */
export function copyOf(product: Pick<JobRow, "copies">, template: string): number {
    const copy = product.copies[template];
    if (!copy) throw new Error(`The copy of "${template}" is not recorded; the copy stage has to finish first.`);
    return copy.sheetId;
}

/** Rewrites every `{name}` of a formula that `renamed` maps to another reference name. */
export function rewriterOf(renamed: ReadonlyMap<string, string>): (formula: string) => string {
    return (formula) => formula.replace(/\{([^{}]+)\}/g, (whole, name: string) => (renamed.has(name) ? `{${renamed.get(name)}}` : whole));
}

function rangeIn(target: Sheet, reference: TemplateReference, holder: string): Omit<NewCrossSheetReference, "name"> {
    const columnId = (title: string | undefined) => {
        if (title === undefined) return undefined;
        const column = target.columns.find((candidate) => candidate.title === title);
        if (!column) {
            throw new NeedsPersonError(`"${holder}" refers to column "${title}" of "${target.name}", which the copy does not have.`);
        }
        return column.id;
    };
    const rowId = (rowNumber: number | undefined) => {
        if (rowNumber === undefined) return undefined;
        const found = target.rows.find((candidate) => candidate.rowNumber === rowNumber);
        if (!found) throw new NeedsPersonError(`"${holder}" refers to row ${rowNumber} of "${target.name}", which the copy does not have.`);
        return found.id;
    };
    return {
        sourceSheetId: target.id,
        startColumnId: columnId(reference.startColumnTitle),
        endColumnId: columnId(reference.endColumnTitle),
        startRowId: rowId(reference.startRowNumber),
        endRowId: rowId(reference.endRowNumber),
    };
}

/** A copy's cell and column formulas, from the copy as read whole: those that do not read as rewritten already. */
function formulaUpdates(holder: TemplateSheet, sheet: Sheet | undefined, rewrite: (formula: string) => string): Pick<CopyRemap, "rows" | "columns"> {
    if (!sheet) return { rows: [], columns: [] };
    const rows = new Map<number, RowUpdate>();
    for (const cell of holder.cellFormulas) {
        const row = sheet.rows.find((candidate) => candidate.rowNumber === cell.rowNumber);
        const column = sheet.columns.find((candidate) => candidate.title === cell.columnTitle);
        if (!row || !column) continue;
        const formula = rewrite(cell.formula);
        if (row.cells.find((candidate) => candidate.columnId === column.id)?.formula === formula) continue;
        const update = rows.get(row.id) ?? { id: row.id, cells: [] };
        update.cells.push({ columnId: column.id, formula });
        rows.set(row.id, update);
    }
    const columns: CopyRemap["columns"] = [];
    for (const columnFormula of holder.columnFormulas) {
        const column = sheet.columns.find((candidate) => candidate.title === columnFormula.columnTitle);
        const formula = rewrite(columnFormula.formula);
        if (column && column.formula !== formula) columns.push({ columnId: column.id, formula });
    }
    return { rows: [...rows.values()], columns };
}

/** The one request that rewrites a copy's summary formulas as read (those not rewritten already), with the product code in it. */
function summaryWriteOf(holder: TemplateSheet, summary: readonly SummaryField[], rewrite: (formula: string) => string, productCode: string): PlannedSummaryWrite {
    const codeField = summary.find((field) => field.title === PRODUCT_CODE_FIELD && !field.formula);
    const updates: SummaryFieldUpdate[] = [];
    for (const summaryFormula of holder.summaryFormulas) {
        const field = summary.find((candidate) => candidate.title === summaryFormula.title);
        const formula = rewrite(summaryFormula.formula);
        if (field && field.formula !== formula) updates.push({ id: field.id, formula });
    }
    // Nothing left to rewrite: an earlier run's request landed, and the code with it.
    if (updates.length === 0) return { updates, stampsCode: codeField !== undefined && String(codeField.objectValue ?? codeField.displayValue ?? "") === productCode };
    // One request per summary: the product code goes with the formulas instead of in a call of its own.
    if (codeField) updates.push({ id: codeField.id, objectValue: productCode });
    return { updates, stampsCode: codeField !== undefined };
}
