import { cleanText } from "../naming/productNames";
import type { FolderChild } from "../smartsheet/model";
import { NeedsPersonError } from "./errors";

/**
 * What a template folder means for the products made from it: which sheets every product gets a
 * copy of, which copy is the Document Register, which takes the product code, and which of the
 * copies' references are pointed at the product's own sheets or left pointing outside it.
 */

/** The template sheet whose copy documents land in: the Filing Index points at it. */
export const DOCUMENT_REGISTER = "Document Register";

/** The summary field every product gets its code written into. */
export const PRODUCT_CODE_FIELD = "Product Code";

/** Every sheet of the template folder is a template sheet, refused when a person has to tidy the folder first. */
export function templateSheetsIn(templateFolderId: number, children: readonly FolderChild[]): FolderChild[] {
    const templateSheets = children.filter((child) => child.resourceType === "sheet");
    if (templateSheets.length === 0) {
        throw new NeedsPersonError(`The template folder ${templateFolderId} holds no sheets; put the template sheets back.`);
    }
    const names = templateSheets.map((sheet) => sheet.name.trim());
    const repeated = names.filter((name, index) => names.indexOf(name) !== index);
    if (repeated.length > 0) {
        throw new NeedsPersonError(`The template folder has two sheets named "${repeated[0]}"; template sheet names must be distinct.`);
    }
    return templateSheets;
}

/** The template sheets a product gets a copy of, by name: all of them. */
export function sheetsToCopy(templateSheets: ReadonlyArray<{ name: string }>): string[] {
    return templateSheets.map((sheet) => sheet.name);
}

/** The template sheet a job's copy of `template` is made from: the one of that name. */
export function templateSheetNamed<S extends { name: string }>(templateSheets: readonly S[], template: string): S | undefined {
    return templateSheets.find((sheet) => sheet.name === template);
}

/** The template sheet's copy gets the product code: the sheet has a `Product Code` summary field. */
export function takesProductCode(templateSheet: { summaryTitles: readonly string[] }): boolean {
    return templateSheet.summaryTitles.includes(PRODUCT_CODE_FIELD);
}

/** A reference of a template sheet, as the analysis names where it points. */
interface AnalysedReference {
    name: string;
    /** Set when the reference points at a template sheet. */
    sourceTemplate?: string;
    sourceSheetId: number;
}

/** A reference into a template sheet is remapped: the copy gets its own into the product's copy of that sheet. */
export function isRemapped<R extends AnalysedReference>(reference: R): reference is R & { sourceTemplate: string } {
    return Boolean(reference.sourceTemplate);
}

/** The template sheets whose copies are remapped: those with a reference into a template sheet. */
export function sheetsToRemap<S extends { references: readonly AnalysedReference[] }>(templateSheets: readonly S[]): S[] {
    return templateSheets.filter((sheet) => sheet.references.some(isRemapped));
}

/**
 * The references a template sheet's formulas use that its copy keeps as they are, pointing at a
 * sheet outside the template (a sheet analysed before the references its formulas use were
 * recorded counts every reference as used).
 */
export function referencesKeptAsTheyAre<R extends AnalysedReference>(templateSheet: { references: readonly R[]; formulaReferences?: readonly string[] }): R[] {
    const references = new Map(templateSheet.references.map((reference) => [reference.name, reference]));
    const used = templateSheet.formulaReferences ?? [...references.keys()];
    return used.flatMap((name) => {
        const reference = references.get(name);
        return reference && !isRemapped(reference) ? [reference] : [];
    });
}

/**
 * A sheet outside the template that a kept reference may point at is shared (the Filing Index,
 * say) unless it is named like a product's copy of a template sheet — `<code> <product name> -
 * <template sheet name>` (see composeProductNames) — which no product may refer to.
 */
export function isNamedLikeAProductSheet(name: string, templateSheetNames: readonly string[]): boolean {
    const clean = cleanText(name);
    return templateSheetNames.some((template) => {
        const suffix = ` - ${cleanText(template)}`;
        return clean.endsWith(suffix) && clean.length > suffix.length;
    });
}
