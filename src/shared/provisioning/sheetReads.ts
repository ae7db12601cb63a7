import type { Sheet, SummaryField } from "../smartsheet/model";
import type { SmartsheetPort } from "../smartsheet/SmartsheetPort";

/** The names of the cross-sheet references a formula uses: `{Schedule Finish}` → `Schedule Finish`. */
export function referencesIn(formula: string): string[] {
    return [...formula.matchAll(/\{([^{}]+)\}/g)].map((match) => match[1]!);
}

/** A sheet as the analysis reads it: with its cross-sheet references, and its summary fields. */
export interface SheetRead {
    sheet: Sheet;
    summary: SummaryField[];
}

/** `getSheet` with the sheet's references, and `getSummaryFields` unless the sheet says it has none. */
export async function readSheetForAnalysis(smartsheet: SmartsheetPort, sheetId: number): Promise<SheetRead> {
    const sheet = await smartsheet.getSheet(sheetId, { include: ["crossSheetReferences"] });
    const summary = sheet.hasSummaryFields === false ? [] : await smartsheet.getSummaryFields(sheetId);
    return { sheet, summary };
}
