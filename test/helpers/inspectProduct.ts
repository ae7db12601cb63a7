import type { SimState, SimSheetState } from "../../tools/smartsheet-sim";

export interface ProductInspection {
    folder: SimState["folders"][number] | undefined;
    folders: SimState["folders"];
    sheets: SimSheetState[];
    /** Formulas (in any of the product's sheets) that reach a sheet outside the product folder. */
    foreignFormulas: string[];
    /** Formulas that use a reference name the sheet does not have. */
    brokenFormulas: string[];
    formulaCount: number;
    productCodeValues: unknown[];
    filingRows: Array<Record<string, unknown>>;
}

/** What the simulator holds for one product: its folder, sheets, formulas and its row in the (first site's) Filing Index. */
export function inspectProduct(state: SimState, productCode: string, filingIndexSheetId = state.filingIndexSheetId): ProductInspection {
    const folders = state.folders.filter((folder) => folder.name === productCode || folder.name.startsWith(`${productCode} `));
    const folder = folders[0];
    const sheets = folder ? state.sheets.filter((sheet) => sheet.folderId === folder.id) : [];
    const ids = new Set(sheets.map((sheet) => sheet.id));
    const foreignFormulas: string[] = [];
    const brokenFormulas: string[] = [];
    let formulaCount = 0;
    for (const sheet of sheets) {
        const formulas = [
            ...sheet.rows.flatMap((row) => row.cells.map((cell) => cell.formula)),
            ...sheet.columns.map((column) => column.formula),
            ...sheet.summaryFields.map((field) => field.formula),
        ].filter((formula): formula is string => typeof formula === "string");
        for (const formula of formulas) {
            const names = [...formula.matchAll(/\{([^{}]+)\}/g)].map((match) => match[1]!);
            if (names.length === 0) continue;
            formulaCount += 1;
            for (const name of names) {
                const reference = sheet.crossSheetReferences.find((candidate) => candidate.name === name);
                if (!reference) brokenFormulas.push(`${sheet.name}: ${formula}`);
                else if (!ids.has(reference.sourceSheetId)) foreignFormulas.push(`${sheet.name}: ${formula}`);
            }
        }
    }
    const filing = state.sheets.find((sheet) => sheet.id === filingIndexSheetId)!;
    const titleOf = new Map(filing.columns.map((column) => [column.id, column.title]));
    const filingRows = filing.rows
        .map((row) => Object.fromEntries(row.cells.map((cell) => [titleOf.get(cell.columnId) ?? String(cell.columnId), cell.value])))
        .filter((row) => row["Product Code"] === productCode);
    return {
        folder,
        folders,
        sheets,
        foreignFormulas,
        brokenFormulas,
        formulaCount,
        productCodeValues: sheets.flatMap((sheet) =>
            sheet.summaryFields.filter((field) => field.title === "Product Code").map((field) => field.objectValue),
        ),
        filingRows,
    };
}

/** The intake row of a product code, by column title, on the (first site's) intake sheet. */
export function intakeRow(state: SimState, productCode: string, intakeSheetId = state.intakeSheetId): Record<string, unknown> | undefined {
    const intake = state.sheets.find((sheet) => sheet.id === intakeSheetId)!;
    const titleOf = new Map(intake.columns.map((column) => [column.id, column.title]));
    return intake.rows
        .map((row): Record<string, unknown> => ({
            rowId: row.id,
            ...Object.fromEntries(row.cells.map((cell) => [titleOf.get(cell.columnId) ?? "", cell.value])),
        }))
        .find((row) => row["Product Code"] === productCode);
}
