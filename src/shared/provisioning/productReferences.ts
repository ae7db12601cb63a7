import type { Sheet, SummaryField } from "../smartsheet/model";
import { referencesIn, type OutsideSheet } from "./Blueprint";

/** Where a product's formulas may point: the product's own sheets, or shared sheets outside the template. */
export interface ReferenceTargets {
    /** The product's copies (`row.copies[template].sheetId`). */
    productSheetIds: ReadonlySet<number>;
    /** Template sheet id → its name: never a target for a product. */
    templateSheets: ReadonlyMap<number, string>;
    /** Sheets outside the template and the product that template references point at, by id. */
    outsideSheets: ReadonlyMap<number, OutsideSheet>;
}

/** One sheet of the product as the step knows it, formulas as they will be once rewritten. */
export interface SheetFormulas {
    /** The copy's name, for people. */
    sheetName: string;
    formulas: readonly string[];
    /** The sheet's references by name: the source sheet each one points at. */
    references: ReadonlyMap<string, number>;
}

export interface ReferenceProblem {
    /** `outsideUnknown`: a sheet outside the template nobody has named yet; it may be another product's. */
    kind: "missing" | "template" | "otherProduct" | "outsideUnknown";
    message: string;
}

/**
 * Every reference a formula of the sheet uses must point at one of the product's sheets or at
 * a shared sheet outside the template. A reference into a template sheet or into another
 * product's sheet is a problem, and so is a name the sheet has no reference for.
 */
export function referenceProblems(sheet: SheetFormulas, targets: ReferenceTargets): ReferenceProblem[] {
    const problems = new Map<string, ReferenceProblem>();
    for (const formula of sheet.formulas) {
        for (const name of referencesIn(formula)) {
            if (problems.has(name)) continue;
            const problem = referenceProblem(sheet.sheetName, name, sheet.references.get(name), targets);
            if (problem) problems.set(name, problem);
        }
    }
    return [...problems.values()];
}

/** What is wrong with a formula of `sheetName` using the reference `name` that points at `sourceSheetId`, if anything. */
export function referenceProblem(sheetName: string, name: string, sourceSheetId: number | undefined, targets: ReferenceTargets): ReferenceProblem | undefined {
    if (sourceSheetId === undefined) {
        return {
            kind: "missing",
            message: `"${sheetName}" has a formula using {${name}}, a reference the sheet does not have; fix the formula in the template sheet.`,
        };
    }
    if (targets.productSheetIds.has(sourceSheetId)) return undefined;
    const template = targets.templateSheets.get(sourceSheetId);
    if (template !== undefined) {
        return {
            kind: "template",
            message:
                `"${sheetName}" has a formula using {${name}}, which points at the template sheet "${template}" ` +
                `and cannot be pointed at a sheet of this product (the product has no copy of "${template}"); ` +
                `point that reference at a sheet copied with the product or remove it from the template, then unpark the job.`,
        };
    }
    const outside = targets.outsideSheets.get(sourceSheetId);
    if (!outside) {
        return { kind: "outsideUnknown", message: `"${sheetName}" has a formula using {${name}}, which points at sheet ${sourceSheetId} outside the template.` };
    }
    if (outside.ofAProduct) {
        return {
            kind: "otherProduct",
            message:
                `"${sheetName}" has a formula using {${name}}, which points at "${outside.name}", a sheet of another product; ` +
                `remove the formulas using it from the template sheet and from this copy (or point the reference at a sheet of the template), ` +
                `then unpark the job.`,
        };
    }
    return undefined;
}

/** Every formula of a sheet read whole and of its summary: cells, columns and summary fields. */
export function formulasOf(sheet: Sheet | undefined, summary: readonly SummaryField[] | undefined): string[] {
    return [
        ...(sheet?.rows.flatMap((row) => row.cells.map((cell) => cell.formula)) ?? []),
        ...(sheet?.columns.map((column) => column.formula) ?? []),
        ...(summary?.map((field) => field.formula) ?? []),
    ].filter((formula): formula is string => formula !== undefined);
}

/** A template row's place in a copy made from an older version of that sheet is not its place now. */
export function rowsLineUp(templateSheet: Sheet, copy: Sheet, rowNumbers: ReadonlyArray<number | undefined>): boolean {
    const primary = (sheet: Sheet, rowNumber: number) => {
        const primaryColumn = sheet.columns.find((column) => column.primary) ?? sheet.columns[0];
        const row = sheet.rows.find((candidate) => candidate.rowNumber === rowNumber);
        return row ? { value: row.cells.find((cell) => cell.columnId === primaryColumn?.id)?.value ?? null } : undefined;
    };
    return rowNumbers.every((rowNumber) => {
        if (rowNumber === undefined) return true;
        const inTemplate = primary(templateSheet, rowNumber);
        const inCopy = primary(copy, rowNumber);
        return inTemplate !== undefined && inCopy !== undefined && inTemplate.value === inCopy.value;
    });
}
