import type { CellValue, ColumnType, SimCell, SimColumn, SimContainer, SimCrossSheetReference, SimRow, SimSheet, SimSummaryField, SystemColumnType } from "./model";

/** The JSON shapes Smartsheet answers with. */
export interface ApiColumn {
    id: number;
    /** 0 for the plain types, 1 MULTI_CONTACT_LIST, 2 MULTI_PICKLIST. */
    version: 0 | 1 | 2;
    index: number;
    title: string;
    type: ColumnType;
    primary?: true;
    options?: string[];
    symbol?: string;
    formula?: string;
    systemColumnType?: SystemColumnType;
    validation: boolean;
    width: number;
    locked?: true;
    lockedForUser?: false;
    hidden?: true;
    description?: string;
}

export interface ApiCell {
    columnId: number;
    value?: CellValue;
    objectValue?: unknown;
    displayValue?: string;
    formula?: string;
}

export interface ApiRow {
    id: number;
    rowNumber: number;
    parentId?: number;
    siblingId?: number;
    expanded: boolean;
    locked?: boolean;
    lockedForUser?: boolean;
    createdAt: string;
    modifiedAt: string;
    cells: ApiCell[];
}

export interface ApiCrossSheetReference extends SimCrossSheetReference {
    status: "OK" | "BROKEN";
}

export interface ApiSummaryField {
    id: number;
    index: number;
    title: string;
    type: ColumnType;
    locked: boolean;
    lockedForUser: boolean;
    objectValue?: unknown;
    displayValue?: string;
    formula?: string;
    createdAt: string;
    modifiedAt: string;
}

export interface ApiChild {
    id: number;
    name: string;
    accessLevel?: "OWNER";
    permalink: string;
    createdAt: string;
    modifiedAt: string;
    resourceType: "folder" | "sheet";
}

/** Smartsheet's timestamp format: ISO-8601 in UTC, whole seconds. */
export function isoTime(ms: number): string {
    return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

export function renderColumn(column: SimColumn, index: number): ApiColumn {
    return {
        id: column.id,
        version: column.type === "MULTI_CONTACT_LIST" ? 1 : column.type === "MULTI_PICKLIST" ? 2 : 0,
        index,
        title: column.title,
        type: column.type,
        ...(column.primary ? { primary: true as const } : {}),
        ...(column.options ? { options: [...column.options] } : {}),
        ...(column.symbol ? { symbol: column.symbol } : {}),
        ...(column.formula ? { formula: column.formula } : {}),
        ...(column.systemColumnType ? { systemColumnType: column.systemColumnType } : {}),
        validation: column.validation ?? false,
        width: column.width,
        ...(column.locked ? { locked: true as const, lockedForUser: false as const } : {}),
        ...(column.hidden ? { hidden: true as const } : {}),
        ...(column.description ? { description: column.description } : {}),
    };
}

export interface CellRenderOptions {
    objectValue?: boolean;
    skipEmpty?: boolean;
}

/** Formulas are never evaluated: a formula cell carries its formula and no value. */
export function renderCell(column: SimColumn, cell: SimCell | undefined, options: CellRenderOptions = {}): ApiCell | undefined {
    const formula = cell?.formula ?? column.formula;
    if (formula !== undefined) return { columnId: column.id, formula };
    if (cell?.value === undefined) return options.skipEmpty ? undefined : { columnId: column.id };
    return {
        columnId: column.id,
        value: cell.value,
        ...(options.objectValue ? { objectValue: cell.objectValue ?? cell.value } : {}),
        ...(column.type === "CHECKBOX" ? {} : { displayValue: String(cell.value) }),
    };
}

export interface RowPosition {
    rowNumber: number;
    siblingId?: number;
}

/** Row numbers and previous-sibling ids, which depend on the whole sheet. */
export function rowPositions(sheet: SimSheet): Map<number, RowPosition> {
    const positions = new Map<number, RowPosition>();
    const lastChild = new Map<number | undefined, number>();
    sheet.rows.forEach((row, index) => {
        const siblingId = lastChild.get(row.parentId);
        positions.set(row.id, { rowNumber: index + 1, ...(siblingId === undefined ? {} : { siblingId }) });
        lastChild.set(row.parentId, row.id);
    });
    return positions;
}

export function renderRow(
    row: SimRow,
    position: RowPosition | undefined,
    columns: readonly SimColumn[],
    options: CellRenderOptions = {},
): ApiRow {
    return {
        id: row.id,
        rowNumber: position?.rowNumber ?? 0,
        ...(row.parentId === undefined ? {} : { parentId: row.parentId }),
        ...(position?.siblingId === undefined ? {} : { siblingId: position.siblingId }),
        expanded: true,
        ...(row.locked ? { locked: true, lockedForUser: true } : {}),
        createdAt: isoTime(row.createdAt),
        modifiedAt: isoTime(row.modifiedAt),
        cells: columns.flatMap((column) => renderCell(column, row.cells.get(column.id), options) ?? []),
    };
}

export function renderRows(sheet: SimSheet, rows: readonly SimRow[], options: CellRenderOptions = {}): ApiRow[] {
    const positions = rowPositions(sheet);
    return rows.map((row) => renderRow(row, positions.get(row.id), sheet.columns, options));
}

/** A reference whose source sheet is gone is BROKEN, as in Smartsheet. */
export function renderReference(reference: SimCrossSheetReference, sourceExists: boolean): ApiCrossSheetReference {
    return {
        id: reference.id,
        name: reference.name,
        sourceSheetId: reference.sourceSheetId,
        ...(reference.startRowId === undefined ? {} : { startRowId: reference.startRowId }),
        ...(reference.endRowId === undefined ? {} : { endRowId: reference.endRowId }),
        ...(reference.startColumnId === undefined ? {} : { startColumnId: reference.startColumnId }),
        ...(reference.endColumnId === undefined ? {} : { endColumnId: reference.endColumnId }),
        status: sourceExists ? ("OK" as const) : ("BROKEN" as const),
    };
}

export function renderSummaryField(field: SimSummaryField, index: number, options: { displayValue?: boolean } = {}): ApiSummaryField {
    const hasValue = field.formula === undefined && field.objectValue !== undefined;
    const primitive = ["string", "number", "boolean"].includes(typeof field.objectValue);
    return {
        id: field.id,
        index,
        title: field.title,
        type: field.type,
        locked: false,
        lockedForUser: false,
        ...(hasValue ? { objectValue: structuredClone(field.objectValue) } : {}),
        ...(hasValue && primitive && options.displayValue !== false ? { displayValue: String(field.objectValue) } : {}),
        ...(field.formula === undefined ? {} : { formula: field.formula }),
        createdAt: isoTime(field.createdAt),
        modifiedAt: isoTime(field.modifiedAt),
    };
}

/** An item of `GET /folders/{id}/children`. */
export function renderChild(item: SimContainer | SimSheet): ApiChild {
    const isSheet = !("kind" in item);
    return {
        id: item.id,
        name: item.name,
        ...(isSheet ? { accessLevel: "OWNER" as const } : {}),
        permalink: item.permalink,
        createdAt: isoTime(item.createdAt),
        modifiedAt: isoTime(item.modifiedAt),
        resourceType: isSheet ? "sheet" : "folder",
    };
}
