/** In-memory state of the simulated Smartsheet account. Times are epoch milliseconds. */

export const COLUMN_TYPES = [
    "TEXT_NUMBER",
    "DATE",
    "DATETIME",
    "ABSTRACT_DATETIME",
    "CHECKBOX",
    "PICKLIST",
    "MULTI_PICKLIST",
    "CONTACT_LIST",
    "MULTI_CONTACT_LIST",
    "DURATION",
    "PREDECESSOR",
] as const;
export type ColumnType = (typeof COLUMN_TYPES)[number];

export const SYSTEM_COLUMN_TYPES = ["AUTO_NUMBER", "CREATED_BY", "CREATED_DATE", "MODIFIED_BY", "MODIFIED_DATE"] as const;
export type SystemColumnType = (typeof SYSTEM_COLUMN_TYPES)[number];

export type CellValue = string | number | boolean;

export interface SimContainer {
    kind: "workspace" | "folder";
    id: number;
    name: string;
    /** null for the workspace. */
    parentId: number | null;
    permalink: string;
    createdAt: number;
    modifiedAt: number;
    /** Creation order, shared by folders and sheets: the order children are listed in. */
    seq: number;
}

export interface SimColumn {
    id: number;
    title: string;
    type: ColumnType;
    primary: boolean;
    options?: string[];
    symbol?: string;
    /** A column formula: every cell of the column holds it. */
    formula?: string;
    systemColumnType?: SystemColumnType;
    description?: string;
    width: number;
    validation?: boolean;
    /** The API's tokens answer as the sheet's OWNER (accessLevel), for whom a locked column stays editable. */
    locked?: boolean;
    hidden?: boolean;
}

export interface SimCell {
    value?: CellValue;
    /** As written, when the caller sent a non-primitive objectValue. */
    objectValue?: unknown;
    formula?: string;
}

export interface SimRow {
    id: number;
    parentId?: number;
    createdAt: number;
    modifiedAt: number;
    cells: Map<number, SimCell>;
    /** Locked by a sheet admin: the API's tokens (none of them an admin) may not edit or delete it. */
    locked?: boolean;
}

export interface SimCrossSheetReference {
    id: number;
    name: string;
    sourceSheetId: number;
    startRowId?: number;
    endRowId?: number;
    startColumnId?: number;
    endColumnId?: number;
}

export interface SimSummaryField {
    id: number;
    title: string;
    type: ColumnType;
    objectValue?: unknown;
    formula?: string;
    createdAt: number;
    modifiedAt: number;
}

export interface SimSheet {
    id: number;
    name: string;
    containerId: number;
    permalink: string;
    version: number;
    createdAt: number;
    modifiedAt: number;
    seq: number;
    copiedFromSheetId?: number;
    /** In index order. */
    columns: SimColumn[];
    /** In row order; children follow their parent. */
    rows: SimRow[];
    crossSheetReferences: SimCrossSheetReference[];
    /** In index order. */
    summaryFields: SimSummaryField[];
}

/** The demo workspace's well-known ids. */
export interface SimAnchors {
    workspaceId: number;
    intakeSheetId: number;
    templateFolderId: number;
    productsFolderId: number;
    filingIndexSheetId: number;
}

/** One seeded customer workspace: what an app's SITES entry points at, and the token that reaches it. */
export interface SimSite {
    name: string;
    token: string;
    intakeSheetId: number;
    templateFolderId: number;
    productsFolderId: number;
    filingIndexSheetId: number;
}
