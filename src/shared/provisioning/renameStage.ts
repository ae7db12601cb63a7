import type { JobRow } from "../jobs/JobRow";
import { referenceName } from "../naming/productNames";
import { AmbiguousWriteError, isSmartsheetError } from "../smartsheet/errors";
import type { Sheet, SummaryField } from "../smartsheet/model";
import type { NewCrossSheetReference, RowUpdate, SmartsheetPort, SummaryFieldUpdate } from "../smartsheet/SmartsheetPort";
import { holders, PRODUCT_CODE_FIELD, type TemplateReference, type TemplateSheet } from "./Blueprint";
import type { StepInput, StepOutcome } from "./contracts";
import { NeedsPersonError } from "./errors";
import type { ProvisioningDeps } from "./ProvisioningDeps";
import { runStep, type StepContext } from "./runStep";

/** Smartsheet's "The resource you tried to create already exists." */
const ALREADY_EXISTS = 1129;

/**
 * Copies keep their cross-sheet references pointing at the template's sheets. For every copy
 * whose formulas use such a reference, create the same reference (deterministic name) to the
 * product's own copy of that sheet — columns matched by title, rows by row number — and
 * rewrite its cell, column and summary-field formulas to use it. Each sheet it needs is read
 * once; a reference that already exists is adopted.
 */
export function remapReferences(deps: ProvisioningDeps, input: StepInput): Promise<StepOutcome> {
    return runStep(deps, input, "remapReferences", async (context) => {
        const { row, smartsheet } = context;
        const blueprint = await context.blueprint(row);
        const todo = holders(blueprint).filter((holder) => !row.remapped.includes(holder.name));
        if (todo.length === 0) return;

        const toRead = new Set<string>();
        const summariesToRead = new Set<string>();
        for (const holder of todo) {
            if (holder.cellFormulas.length > 0 || holder.columnFormulas.length > 0) toRead.add(holder.name);
            if (holder.summaryFormulas.length > 0) summariesToRead.add(holder.name);
            for (const reference of holder.references) if (reference.sourceTemplate) toRead.add(reference.sourceTemplate);
        }
        const copyOf = (template: string) => {
            const copy = row.copies[template];
            if (!copy) throw new Error(`The copy of "${template}" is not recorded; the copy stage has to finish first.`);
            return copy.sheetId;
        };
        const sheets = new Map<string, Sheet>();
        for (const template of toRead) sheets.set(template, await smartsheet.getSheet(copyOf(template)));
        const summaries = new Map<string, SummaryField[]>();
        for (const template of summariesToRead) summaries.set(template, await smartsheet.getSummaryFields(copyOf(template)));
        await context.update((latest) => ({
            ...latest,
            summaryFieldIds: {
                ...latest.summaryFieldIds,
                ...Object.fromEntries([...summaries].map(([template, fields]) => [template, Object.fromEntries(fields.map((field) => [field.title, field.id]))])),
            },
        }));

        for (const holder of todo) {
            const renamed = new Map<string, string>();
            for (const reference of holder.references) {
                if (!reference.sourceTemplate) continue;
                const target = sheets.get(reference.sourceTemplate)!;
                const name = referenceName(row.productCode, reference.name);
                await createReference(deps, smartsheet, copyOf(holder.name), { name, ...rangeIn(target, reference, holder.name) });
                renamed.set(reference.name, name);
            }
            const rewrite = (formula: string) =>
                formula.replace(/\{([^{}]+)\}/g, (whole, name: string) => (renamed.has(name) ? `{${renamed.get(name)}}` : whole));
            await rewriteFormulas(smartsheet, copyOf(holder.name), holder, sheets.get(holder.name), summaries.get(holder.name), rewrite);
            await context.update((latest) => ({ ...latest, remapped: [...new Set([...latest.remapped, holder.name])] }));
        }
    });
}

/** The `Product Code` summary field of every copy that has one gets the product's code. */
export function stampSummary(deps: ProvisioningDeps, input: StepInput): Promise<StepOutcome> {
    return runStep(deps, input, "stampSummary", async (context: StepContext) => {
        const { row, smartsheet } = context;
        if (row.summaryStamped) return;
        const blueprint = await context.blueprint(row);
        for (const template of blueprint.sheets.filter((sheet) => sheet.summaryTitles.includes(PRODUCT_CODE_FIELD))) {
            const copy = row.copies[template.name];
            if (!copy) throw new Error(`The copy of "${template.name}" is not recorded; the copy stage has to finish first.`);
            const fieldId =
                row.summaryFieldIds[template.name]?.[PRODUCT_CODE_FIELD] ??
                (await smartsheet.getSummaryFields(copy.sheetId)).find((field) => field.title === PRODUCT_CODE_FIELD)?.id;
            if (fieldId) {
                await smartsheet.updateSummaryFields(copy.sheetId, [{ id: fieldId, objectValue: row.productCode }]);
            } else {
                // Titles are unique in a summary: if an earlier attempt added it, this is refused (1193).
                await smartsheet
                    .addSummaryFields(copy.sheetId, [{ title: PRODUCT_CODE_FIELD, type: "TEXT_NUMBER", objectValue: row.productCode }])
                    .catch((error: unknown) => {
                        if (!(isSmartsheetError(error) && error.errorCode === 1193)) throw error;
                    });
            }
        }
        await context.update((latest: JobRow) => ({ ...latest, summaryStamped: true }));
    });
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

/** Reference names are unique per sheet, so re-sending a create is safe: "exists" means done. */
async function createReference(deps: ProvisioningDeps, smartsheet: SmartsheetPort, sheetId: number, reference: NewCrossSheetReference) {
    for (let attempt = 1; ; attempt++) {
        try {
            await smartsheet.createCrossSheetReference(sheetId, reference);
            return;
        } catch (error) {
            if (isSmartsheetError(error) && error.errorCode === ALREADY_EXISTS) return;
            if (!(error instanceof AmbiguousWriteError) || attempt >= 3) throw error;
            await deps.sleep(deps.timing.settleMs);
        }
    }
}

async function rewriteFormulas(
    smartsheet: SmartsheetPort,
    sheetId: number,
    holder: TemplateSheet,
    sheet: Sheet | undefined,
    summary: SummaryField[] | undefined,
    rewrite: (formula: string) => string,
): Promise<void> {
    if (sheet && holder.cellFormulas.length > 0) {
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
        if (rows.size > 0) await smartsheet.updateRows(sheetId, [...rows.values()]);
    }
    if (sheet) {
        for (const columnFormula of holder.columnFormulas) {
            const column = sheet.columns.find((candidate) => candidate.title === columnFormula.columnTitle);
            const formula = rewrite(columnFormula.formula);
            if (column && column.formula !== formula) await smartsheet.updateColumn(sheetId, column.id, { formula });
        }
    }
    if (summary && holder.summaryFormulas.length > 0) {
        const updates: SummaryFieldUpdate[] = [];
        for (const summaryFormula of holder.summaryFormulas) {
            const field = summary.find((candidate) => candidate.title === summaryFormula.title);
            const formula = rewrite(summaryFormula.formula);
            if (field && field.formula !== formula) updates.push({ id: field.id, formula });
        }
        if (updates.length > 0) await smartsheet.updateSummaryFields(sheetId, updates);
    }
}
