import type { JobRow, RemapPlan } from "../../jobs/JobRow";
import { referenceName } from "../../naming/productNames";
import type { FolderChild } from "../../smartsheet/model";
import { analyseSheet, type Blueprint, type OutsideSheet, type RemappableSheets, type SheetRead, type TemplateSheet } from "../Blueprint";
import { NeedsPersonError } from "../errors";
import { referenceProblem, rowsLineUp, type ReferenceProblem, type ReferenceTargets } from "../productReferences";
import { isRemapped, referencesKeptAsTheyAre, sheetsToRemap } from "../templateRules";

/** What a copy-based remap needs to know of the product. */
type Product = Pick<JobRow, "productCode" | "templates" | "copies" | "remapped">;

/** Template sheets (listed now, analysed, or copied for this job) by id, the product's copies, the outside sheets. */
export function referenceTargets(
    row: Pick<JobRow, "copies">,
    listing: readonly FolderChild[],
    analysed: readonly TemplateSheet[],
    outsideSheets: readonly OutsideSheet[],
): ReferenceTargets {
    const templateSheets = new Map<number, string>([
        ...analysed.map((sheet) => [sheet.templateSheetId, sheet.name] as const),
        ...listing.map((sheet) => [sheet.id, sheet.name] as const),
        ...Object.entries(row.copies).map(([name, copy]) => [copy.templateSheetId, name] as const),
    ]);
    return {
        productSheetIds: new Set(Object.values(row.copies).map((copy) => copy.sheetId)),
        templateSheets,
        outsideSheets: new Map(outsideSheets.map((sheet) => [sheet.sheetId, sheet])),
    };
}

/**
 * What the remap reads of copies the blueprint describes: the copies still to remap, each read
 * whole if it has cell or column formulas to rewrite or a reference points into it, and its
 * summary if it has summary formulas the row's plan has no request for yet.
 */
export function blueprintReads(row: Pick<JobRow, "remapped">, blueprint: Blueprint, plan: RemapPlan): { holders: TemplateSheet[]; sheets: Set<string>; summaries: Set<string> } {
    const todo = sheetsToRemap(blueprint.sheets).filter((holder) => !row.remapped.includes(holder.name));
    const sheets = new Set<string>();
    const summaries = new Set<string>();
    for (const holder of todo) {
        if (holder.cellFormulas.length > 0 || holder.columnFormulas.length > 0) sheets.add(holder.name);
        if (holder.summaryFormulas.length > 0 && !plan.summaries[holder.name]) summaries.add(holder.name);
        for (const reference of holder.references.filter(isRemapped)) sheets.add(reference.sourceTemplate);
    }
    return { holders: todo, sheets, summaries };
}

/**
 * The blueprint describes every copy, also those the remap does not read: each reference their
 * formulas use that the remap does not point at the product's own sheets (one into a template
 * sheet is, in a holder) must reach a shared sheet, never another product's, a template sheet or
 * a sheet nobody named. The blueprint's analysis decides it, so this costs no call.
 */
export function problemsOfCopiesNotRead(row: Pick<JobRow, "copies">, blueprint: Blueprint, targets: ReferenceTargets): ReferenceProblem[] {
    // A name the sheet has no reference for is the read copies' check.
    return blueprint.sheets.flatMap((sheet) =>
        referencesKeptAsTheyAre(sheet).flatMap(
            (reference) => referenceProblem(row.copies[sheet.name]?.name ?? sheet.name, reference.name, reference.sourceSheetId, targets) ?? [],
        ),
    );
}

/**
 * The copies still to remap, analysed like template sheets: their references still carry the
 * template's row and column ids, which the template as it is now (`templateReads`, by sheet id)
 * turns into row numbers and titles.
 */
export function copiesToRemap(row: Product, templateReads: ReadonlyMap<number, SheetRead>, copies: ReadonlyMap<string, SheetRead>): TemplateSheet[] {
    const jobTemplateOf = new Map(row.templates.map((name) => [row.copies[name]!.templateSheetId, name]));
    const remappable: RemappableSheets = new Map(
        [...templateReads].flatMap(([id, read]) => {
            const name = jobTemplateOf.get(id);
            return name === undefined ? [] : [[id, { name, sheet: read.sheet }] as const];
        }),
    );
    const analysed = row.templates.map((name) => analyseSheet({ name, templateSheetId: row.copies[name]!.templateSheetId }, copies.get(name)!, remappable));
    const todo = sheetsToRemap(analysed).filter((sheet) => !row.remapped.includes(sheet.name));
    for (const holder of todo) assertRowsLineUp(row, holder, remappable, copies);
    return todo;
}

/** The sheets the copies' references point at that neither the job nor the template's analysis knows. */
export function unnamedSheetIds(copies: ReadonlyMap<string, SheetRead>, targets: ReferenceTargets): number[] {
    return [...copies.values()].flatMap(({ sheet }) =>
        (sheet.crossSheetReferences ?? [])
            .map((reference) => reference.sourceSheetId)
            .filter((id) => !targets.productSheetIds.has(id) && !targets.templateSheets.has(id) && !targets.outsideSheets.has(id)),
    );
}

/** A row range is matched by row number: the target copy must have its rows where the template has them now. */
function assertRowsLineUp(row: Product, holder: TemplateSheet, remappable: RemappableSheets, copies: ReadonlyMap<string, SheetRead>): void {
    for (const reference of holder.references) {
        if (!isRemapped(reference) || (reference.startRowNumber === undefined && reference.endRowNumber === undefined)) continue;
        const templateSheet = remappable.get(reference.sourceSheetId)!.sheet;
        const copy = copies.get(reference.sourceTemplate)!.sheet;
        if (!rowsLineUp(templateSheet, copy, [reference.startRowNumber, reference.endRowNumber])) {
            throw new NeedsPersonError(
                `"${row.copies[holder.name]?.name ?? holder.name}" refers to rows ${reference.startRowNumber}–${reference.endRowNumber} of ` +
                    `"${reference.sourceTemplate}" through {${reference.name}}, but the rows of that template sheet moved after the product's copy ` +
                    `of it was made; point {${referenceName(row.productCode, reference.name)}} at the right rows of "${copy.name}" by hand ` +
                    `(or delete the product's sheets so they are copied again), then unpark the job.`,
            );
        }
    }
}
