import type { JobRow } from "../jobs/JobRow";
import { ClaimKey } from "../provisioning/claimKeys";
import { NeedsPersonError } from "../provisioning/errors";
import type { ProvisioningDeps } from "../provisioning/ProvisioningDeps";
import type { StepContext } from "../provisioning/runStep";
import { underClaim } from "../provisioning/underClaim";
import type { Column, SummaryField } from "../smartsheet/model";
import type { ColumnUpdate, NewColumn, NewCrossSheetReference, SummaryFieldChange } from "../smartsheet/SmartsheetPort";
import type { Attributes, ConvergenceChange } from "./plan";
import type { TemplateReference } from "../provisioning/Blueprint";

/** What one change needs beyond itself: where it stands in the run, and the target version's references (for their ranges). */
export interface ChangeAt {
    to: string;
    /** Its index among the run's changes (the plan's, then those a decision added): its claim and its mark on the row. */
    index: number;
    change: ConvergenceChange;
    /** The target version's references of the change's sheet, by name (an `addReferences` takes its ranges from them). */
    templateReferences: ReadonlyMap<string, TemplateReference>;
    /** Template sheet name → the product's copy of it: where a new reference reads. */
    sourceSheetIds: ReadonlyMap<string, number>;
}

/**
 * Carries out one change of a convergence, once across crashes, redeliveries and runs at once:
 * under a claim on the job row (`converge:<version>:<index>`), looking first whenever an earlier
 * claim shows the write may have been sent, and adopting what is there already: a column or
 * summary field of the planned title with the planned attributes, an update in effect, a
 * deletion done, the references by name. Smartsheet keeps titles unique in a sheet, so a write
 * landing late makes nothing twice; a column or field of the planned title that differs from the
 * template's is not adopted: the product parks with it named.
 */
export async function applyChange(deps: ProvisioningDeps, context: StepContext, at: ChangeAt): Promise<void> {
    const { index } = at;
    const { smartsheet } = context;
    const done = (latest: JobRow) => (latest.convergence?.to === at.to && latest.convergence.applied.includes(index) ? true : undefined);
    await underClaim<true>(deps, context, {
        key: ClaimKey.convergence(at.to, index),
        leaves: "nothing",
        recorded: done,
        look: async () => ((await inEffect(smartsheet, at)) ? true : undefined),
        write: async () => {
            await write(smartsheet, at);
            return true;
        },
        record: (latest) =>
            latest.convergence?.to === at.to
                ? { ...latest, convergence: { ...latest.convergence, applied: [...new Set([...latest.convergence.applied, index])], lastProgressAt: deps.now().toISOString() } }
                : latest,
    });
}

type Port = StepContext["smartsheet"];

/** Whether the change is in effect in the product already (an earlier run's write landed, or a person made it). */
async function inEffect(smartsheet: Port, { change }: ChangeAt): Promise<boolean> {
    switch (change.kind) {
        case "addColumn": {
            const found = (await smartsheet.getColumns(change.sheetId)).find((column) => column.title === change.column.title);
            return found !== undefined && adoptable(found, change);
        }
        case "updateColumn": {
            const found = (await smartsheet.getColumns(change.sheetId)).find((column) => column.id === change.columnId);
            if (!found) throw new NeedsPersonError(`Column "${change.title}" of sheet "${change.sheet}" is gone from the product; plan the convergence again.`);
            return holds(columnAttributes(found), change.set);
        }
        case "deleteColumn":
            return !(await smartsheet.getColumns(change.sheetId)).some((column) => column.id === change.columnId);
        case "addSummaryField": {
            const found = (await smartsheet.getSummaryFields(change.sheetId)).find((field) => field.title === change.field.title);
            return found !== undefined && fieldAdoptable(found, change);
        }
        case "updateSummaryField": {
            const found = (await smartsheet.getSummaryFields(change.sheetId)).find((field) => field.id === change.fieldId);
            if (!found) throw new NeedsPersonError(`Summary field "${change.title}" of sheet "${change.sheet}" is gone from the product; plan the convergence again.`);
            return holds(fieldAttributes(found), change.set);
        }
        case "deleteSummaryField":
            return !(await smartsheet.getSummaryFields(change.sheetId)).some((field) => field.id === change.fieldId);
        case "addReferences": {
            const sheet = await smartsheet.getSheet(change.sheetId, { include: ["crossSheetReferences"] });
            const names = new Set((sheet.crossSheetReferences ?? []).map((reference) => reference.name));
            return change.references.every((reference) => names.has(reference.name));
        }
        case "renameSheet":
            return (await smartsheet.getSheet(change.sheetId, {})).name === change.to;
        case "addSheet":
            throw new NeedsPersonError(addSheetRefusal(change.sheet));
    }
}

/** The change's write alone, no claim (a trial on scratch copies, which nothing else touches). */
export async function write(smartsheet: Port, at: ChangeAt): Promise<void> {
    const { change } = at;
    switch (change.kind) {
        case "addColumn": {
            const made = await smartsheet.addColumn(change.sheetId, newColumnOf(change.column));
            if (made.created) return;
            // A column of that title is there: adopted if it is the template's, else a person decides.
            const found = (await smartsheet.getColumns(change.sheetId)).find((column) => column.title === change.column.title);
            if (found && adoptable(found, change)) return;
            throw new NeedsPersonError(
                `Sheet "${change.sheet}" of the product has a column "${change.column.title}" of its own since the plan was made; ` +
                    `the template adds one of that title: rename the product's column, then apply again.`,
            );
        }
        case "updateColumn":
            await smartsheet.updateColumn(change.sheetId, change.columnId, columnUpdateOf(change.set));
            return;
        case "deleteColumn":
            await smartsheet.deleteColumn(change.sheetId, change.columnId);
            return;
        case "addSummaryField": {
            const made = await smartsheet.addSummaryFields(change.sheetId, [newFieldOf(change.field)]);
            if (made.created) return;
            const found = (await smartsheet.getSummaryFields(change.sheetId)).find((field) => field.title === change.field.title);
            if (found && fieldAdoptable(found, change)) return;
            throw new NeedsPersonError(
                `Sheet "${change.sheet}" of the product has a summary field "${change.field.title}" of its own since the plan was made; ` +
                    `the template adds one of that title: rename the product's field, then apply again.`,
            );
        }
        case "updateSummaryField":
            await smartsheet.updateSummaryFields(change.sheetId, [fieldUpdateOf(change.fieldId, change.set)]);
            return;
        case "deleteSummaryField":
            await smartsheet.deleteSummaryFields(change.sheetId, [change.fieldId]);
            return;
        case "addReferences": {
            const sheet = await smartsheet.getSheet(change.sheetId, { include: ["crossSheetReferences"] });
            const made = new Set((sheet.crossSheetReferences ?? []).map((reference) => reference.name));
            for (const reference of change.references) {
                if (made.has(reference.name)) continue;
                await smartsheet.createCrossSheetReference(change.sheetId, await referenceOf(smartsheet, at, reference));
            }
            return;
        }
        case "renameSheet":
            await smartsheet.renameSheet(change.sheetId, change.to);
            return;
        case "addSheet":
            throw new NeedsPersonError(addSheetRefusal(change.sheet));
    }
}

export function addSheetRefusal(sheet: string): string {
    return `The template has a new sheet, "${sheet}": a trial does not try sheets added to the template (apply adds them as provisioning does); try a version without it, or apply.`;
}

/** The reference as the product gets it: the same name, read from the product's copy of its source sheet, over the template reference's range. */
async function referenceOf(
    smartsheet: Port,
    at: ChangeAt,
    reference: Extract<ConvergenceChange, { kind: "addReferences" }>["references"][number],
): Promise<NewCrossSheetReference> {
    const sourceSheetId = at.sourceSheetIds.get(reference.sourceTemplate);
    if (sourceSheetId === undefined) {
        throw new NeedsPersonError(`The product has no copy of "${reference.sourceTemplate}", which its new reference ${reference.name} reads.`);
    }
    const template = at.templateReferences.get(reference.templateReference);
    if (!template || (template.startColumnTitle === undefined && template.startRowNumber === undefined)) return { name: reference.name, sourceSheetId };
    const source = await smartsheet.getSheet(sourceSheetId, {});
    const columnId = (title: string | undefined) => {
        if (title === undefined) return undefined;
        const found = source.columns.find((column) => column.title === title);
        if (!found) throw new NeedsPersonError(`Reference ${reference.name} reads column "${title}" of "${source.name}", which the product's copy does not have.`);
        return found.id;
    };
    const rowId = (rowNumber: number | undefined) => {
        if (rowNumber === undefined) return undefined;
        const found = source.rows.find((row) => row.rowNumber === rowNumber);
        if (!found) throw new NeedsPersonError(`Reference ${reference.name} reads row ${rowNumber} of "${source.name}", which the product's copy does not have.`);
        return found.id;
    };
    return {
        name: reference.name,
        sourceSheetId,
        startColumnId: columnId(template.startColumnTitle),
        endColumnId: columnId(template.endColumnTitle),
        startRowId: rowId(template.startRowNumber),
        endRowId: rowId(template.endRowNumber),
    };
}

const COLUMN_ATTRIBUTES = ["title", "type", "options", "symbol", "systemColumnType", "formula", "description", "validation", "locked", "hidden"] as const;
const FIELD_ATTRIBUTES = ["title", "type", "options", "symbol", "formula", "value"] as const;

/** A column's attributes as the plan compares them (`null`: the column has none). */
function columnAttributes(column: Column): Attributes {
    return {
        title: column.title,
        type: column.type,
        options: column.options ?? [],
        symbol: column.symbol ?? null,
        systemColumnType: column.systemColumnType ?? null,
        formula: column.formula ?? null,
        description: column.description ?? null,
        validation: column.validation ?? false,
        locked: column.locked ?? false,
        hidden: column.hidden ?? false,
    };
}

function fieldAttributes(field: SummaryField): Attributes {
    const value = field.formula === undefined && ["string", "number", "boolean"].includes(typeof field.objectValue) ? (field.objectValue as string | number | boolean) : null;
    return { title: field.title, type: field.type ?? null, options: field.options ?? [], symbol: field.symbol ?? null, formula: field.formula ?? null, value };
}

/** Every attribute `set` names is as it says (an absent list is an empty one). */
function holds(actual: Attributes, set: Attributes): boolean {
    return Object.entries(set).every(([name, wanted]) => JSON.stringify(normal(actual[name])) === JSON.stringify(normal(wanted)));
}

function normal(value: Attributes[string] | undefined): Attributes[string] {
    if (value === undefined || value === "") return null;
    if (Array.isArray(value) && value.length === 0) return null;
    if (value === false) return null;
    return value;
}

/** A column found under the planned title is the planned one if its type and formula are the template's. */
function adoptable(found: Column, change: Extract<ConvergenceChange, { kind: "addColumn" }>): boolean {
    const planned = change.column;
    return holds(columnAttributes(found), { type: planned.type, formula: planned.formula ?? null, options: planned.options });
}

function fieldAdoptable(found: SummaryField, change: Extract<ConvergenceChange, { kind: "addSummaryField" }>): boolean {
    const planned = change.field;
    return holds(fieldAttributes(found), { formula: planned.formula ?? null, type: planned.type ?? null });
}

function newColumnOf(column: Extract<ConvergenceChange, { kind: "addColumn" }>["column"]): NewColumn {
    return {
        index: column.index,
        title: column.title,
        type: column.type,
        ...(column.options.length > 0 ? { options: column.options } : {}),
        ...(column.symbol !== undefined ? { symbol: column.symbol } : {}),
        ...(column.systemColumnType !== undefined ? { systemColumnType: column.systemColumnType } : {}),
        ...(column.formula !== undefined ? { formula: column.formula } : {}),
        ...(column.description !== undefined ? { description: column.description } : {}),
        ...(column.validation ? { validation: true } : {}),
        ...(column.locked ? { locked: true } : {}),
        ...(column.hidden ? { hidden: true } : {}),
    };
}

/** The update that makes a column's attributes `set`: a lost formula or description is sent empty (Smartsheet's way to clear it). */
function columnUpdateOf(set: Attributes): ColumnUpdate {
    const update: Record<string, unknown> = {};
    for (const name of COLUMN_ATTRIBUTES) {
        if (!(name in set)) continue;
        const value = set[name];
        if (value === null) {
            if (name === "formula" || name === "description") update[name] = "";
            else if (name === "options") update[name] = [];
            continue;
        }
        update[name] = value;
    }
    return update as ColumnUpdate;
}

function newFieldOf(field: Extract<ConvergenceChange, { kind: "addSummaryField" }>["field"]) {
    return {
        title: field.title,
        type: field.type ?? "TEXT_NUMBER",
        ...(field.options.length > 0 ? { options: field.options } : {}),
        ...(field.symbol !== undefined ? { symbol: field.symbol } : {}),
        ...(field.formula !== undefined ? { formula: field.formula } : {}),
        ...(field.value !== undefined && field.formula === undefined ? { objectValue: field.value } : {}),
    } as Parameters<Port["addSummaryFields"]>[1][number];
}

function fieldUpdateOf(id: number, set: Attributes): SummaryFieldChange {
    const update: Record<string, unknown> = { id };
    for (const name of FIELD_ATTRIBUTES) {
        if (!(name in set)) continue;
        const value = set[name];
        if (name === "value") {
            update.objectValue = value;
            continue;
        }
        if (value === null) {
            if (name === "formula") update.formula = "";
            else if (name === "options") update.options = [];
            continue;
        }
        update[name] = value;
    }
    return update as unknown as SummaryFieldChange;
}
