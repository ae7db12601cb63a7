import type {
    Column,
    CrossSheetReference,
    FolderChild,
    FolderRef,
    Row,
    Sheet,
    SheetRef,
    SummaryField,
    Webhook,
} from "./model";

/**
 * The `Smartsheet-Change-Agent` every request of the app carries: Smartsheet echoes it as
 * `changeAgent` on the webhook events of the app's own writes, so that they wake nothing.
 */
export const SHEETWRIGHT_CHANGE_AGENT = "sheetwright";

export type ChildKind = "sheets" | "folders";

/** What a sheet copy brings along besides columns and summary fields. */
export type CopyInclude = "data" | "cellLinks" | "attachments" | "discussions" | "filters" | "forms" | "rules";

export interface CopySheetRequest {
    destinationFolderId: number;
    /** The copy's final name: renaming is folded into the copy. */
    newName: string;
    include: CopyInclude[];
}

export interface GetSheetOptions {
    /** `crossSheetReferences` adds the sheet's references. */
    include?: Array<"crossSheetReferences" | "objectValue">;
    columnIds?: number[];
    rowIds?: number[];
    /** Only the rows changed since then (Smartsheet keeps whole seconds). */
    rowsModifiedSince?: Date;
    /** Read the rows in pages of this size (one call each) instead of all at once. */
    pageSize?: number;
}

/** A sheet as read, with when Smartsheet answered (its first page, when paged). */
export type SheetRead = Sheet & {
    /**
     * Smartsheet's clock when it answered: the response's `Date` header (whole seconds). Every
     * row changed after the read has a later `modifiedAt`, give or take Smartsheet's own servers'
     * skew. Absent when the answer carried no readable `Date`.
     */
    answeredAt?: string;
};

export type CellWrite =
    | { columnId: number; value: string | number | boolean | null; strict?: boolean }
    | { columnId: number; formula: string };

export interface RowUpdate {
    id: number;
    cells: CellWrite[];
}

/** A row Smartsheet refused in a bulk write (locked, no permission, a bad cell): which, and what it said. */
export interface RefusedRow {
    rowId: number;
    errorCode?: number;
    message: string;
}

/** A bulk row write where each row lands or is refused on its own. */
export interface RowsWritten {
    updated: Row[];
    refused: RefusedRow[];
}

export interface NewRow {
    toBottom?: true;
    toTop?: true;
    cells: CellWrite[];
}

export interface NewCrossSheetReference {
    name: string;
    sourceSheetId: number;
    startColumnId?: number;
    endColumnId?: number;
    startRowId?: number;
    endRowId?: number;
}

/** What a column is besides its title and place: the attributes a column add or update may set. */
interface ColumnAttributes {
    /** `TEXT_NUMBER`, `PICKLIST`, `CHECKBOX`… (Smartsheet's column types). */
    type: string;
    /** A `PICKLIST` or `MULTI_PICKLIST` column's choices; not with `symbol`. */
    options?: string[];
    /** A `CHECKBOX` or `PICKLIST` column shown as symbols (`STAR`, `FLAG`, `HARVEY_BALLS`…). */
    symbol?: string;
    /** `AUTO_NUMBER` (`TEXT_NUMBER`), `CREATED_BY`/`MODIFIED_BY` (`CONTACT_LIST`), `CREATED_DATE`/`MODIFIED_DATE` (`DATETIME`): one of each per sheet. */
    systemColumnType?: string;
    /** A column formula, starting with `=`: it overwrites every cell of the column. */
    formula?: string;
    description?: string;
    validation?: boolean;
    locked?: boolean;
    hidden?: boolean;
}

/**
 * A column to add at `index` (0 to the sheet's column count), shifting the columns from there on.
 * Never a primary column: a sheet has one, and Smartsheet refuses a second (1055).
 */
export interface NewColumn extends ColumnAttributes {
    index: number;
    title: string;
    primary?: never;
}

/**
 * What a column update changes; what it leaves out stays. `formula: ""` removes a column
 * formula (and `description: ""` the description): Smartsheet takes no `null`. `options`,
 * `symbol` and `systemColumnType` need `type` in the same update (else 1090), and a new `type`
 * keeps none of them the update does not say again. `index` moves the column. Setting a formula
 * or making the column a system column overwrites what its cells held.
 */
export interface ColumnUpdate extends Partial<ColumnAttributes> {
    title?: string;
    index?: number;
}

export interface NewSummaryField {
    title: string;
    /** A column type, as a column's: `TEXT_NUMBER`, `PICKLIST`, `CHECKBOX`, `DATE`… */
    type: string;
    /** A `PICKLIST` field's choices, and how they are shown (sent as given: the simulator keeps neither). */
    options?: string[];
    symbol?: string;
    /** A value or a formula, not both. */
    objectValue?: string | number | boolean;
    formula?: string;
}

export type SummaryFieldUpdate = { id: number; objectValue: string | number | null } | { id: number; formula: string };

/** A convergence's change of a summary field by id: what the template changed of it (a value or a formula, not both). */
export interface SummaryFieldChange {
    id: number;
    title?: string;
    type?: string;
    options?: string[];
    symbol?: string;
    formula?: string;
    objectValue?: string | number | boolean | null;
}

/**
 * The answer to a create whose name is its identity (a cross-sheet reference's name in its sheet,
 * a summary field's title, a column's title in its sheet): made now, or there already, which
 * Smartsheet answers with a refusal (1129 "already exists", 1193 "duplicate summary field title",
 * 1056 "column titles must be unique") and the adapter with this, so that no caller reads
 * Smartsheet's error codes. There already is as good as made for a create sent again after an
 * unanswered one, or after a crash.
 */
export type Created<T> = { created: true; value: T } | { created: false };

/** A webhook on one sheet, every event (Smartsheet's only choice), version 1. */
export interface NewWebhook {
    name: string;
    callbackUrl: string;
    scopeObjectId: number;
}

export interface WebhookChange {
    enabled?: boolean;
    callbackUrl?: string;
}

/** Calls made, counted by Smartsheet operation (one per HTTP request, retries included). */
export interface CallTally {
    total: number;
    byOperation: Record<string, number>;
    /** How many of those requests Smartsheet refused with 429. */
    rateLimited: number;
}

/**
 * What Sheetwright needs from Smartsheet: not the SDK surface. Every method either resolves
 * or rejects with a `SmartsheetError` (transient, permanent, or ambiguous write).
 */
export interface SmartsheetPort {
    /** All children of a folder, every page of `GET /folders/{id}/children`. */
    listFolderChildren(folderId: number, kinds?: ChildKind[]): Promise<FolderChild[]>;
    createFolder(parentFolderId: number, name: string): Promise<FolderRef>;
    /** Not idempotent: Smartsheet has no idempotency key for copies. */
    copySheet(sheetId: number, request: CopySheetRequest): Promise<SheetRef>;
    /** A sheet's new name (convergence, when the template renamed the sheet the copy is named for). */
    renameSheet(sheetId: number, name: string): Promise<SheetRef>;
    getSheet(sheetId: number, options?: GetSheetOptions): Promise<SheetRead>;
    /** `{ created: false }` when the sheet has a reference of that name already. */
    createCrossSheetReference(sheetId: number, reference: NewCrossSheetReference): Promise<Created<CrossSheetReference>>;
    getSummaryFields(sheetId: number): Promise<SummaryField[]>;
    /** `{ created: false }` when the summary has a field of one of those titles already: then none was added. */
    addSummaryFields(sheetId: number, fields: NewSummaryField[]): Promise<Created<SummaryField[]>>;
    updateSummaryFields(sheetId: number, fields: ReadonlyArray<SummaryFieldUpdate | SummaryFieldChange>): Promise<SummaryField[]>;
    /** Deletes summary fields by id; ids that are already gone are ignored, and no ids make no call. */
    deleteSummaryFields(sheetId: number, fieldIds: number[]): Promise<void>;
    updateRows(sheetId: number, rows: RowUpdate[]): Promise<Row[]>;
    /**
     * `updateRows` with Smartsheet's partial success: a row it refuses (locked, row-level
     * permission, a bad cell) is answered in `refused` and the others are written. The call as a
     * whole still fails as `updateRows` does (token, sheet, rate limit, server).
     */
    updateRowsEach(sheetId: number, rows: RowUpdate[]): Promise<RowsWritten>;
    addRows(sheetId: number, rows: NewRow[]): Promise<Row[]>;
    /** Every column of the sheet, in index order. */
    getColumns(sheetId: number): Promise<Column[]>;
    /**
     * One column, one call; the column made, at its index. Not re-sent on an unclear failure.
     * `{ created: false }` when the sheet has a column of that title already, in any case
     * (Smartsheet's 1056): then nothing was added, and the caller looks the column up by title
     * and checks that it is the one it meant to add.
     */
    addColumn(sheetId: number, column: NewColumn): Promise<Created<Column>>;
    updateColumn(sheetId: number, columnId: number, update: ColumnUpdate): Promise<Column>;
    /**
     * Deletes the column and its cells; one that is gone already (404) counts as deleted — as
     * does any column of a sheet that is gone, which Smartsheet answers alike. The primary
     * column cannot be deleted (1065).
     */
    deleteColumn(sheetId: number, columnId: number): Promise<void>;
    /** Deletes the sheet; one that is gone already (404) counts as deleted. */
    deleteSheet(sheetId: number): Promise<void>;
    /** Deletes the folder and everything in it; one that is gone already (404) counts as deleted. */
    deleteFolder(folderId: number): Promise<void>;
    /** Deletes rows by id; ids that are already gone are ignored. */
    deleteRows(sheetId: number, rowIds: number[]): Promise<void>;
    /** Every webhook the token owns, every page of `GET /webhooks`. */
    listWebhooks(): Promise<Webhook[]>;
    /** One webhook, its shared secret included. */
    getWebhook(webhookId: number): Promise<Webhook>;
    /** Not idempotent (a second POST makes a second webhook): list before creating again. Created disabled, `NEW_NOT_VERIFIED`. */
    createWebhook(webhook: NewWebhook): Promise<Webhook>;
    /** `enabled: true` answers only once Smartsheet has had the callback URL answer its verification challenge (or not: see `status`). */
    updateWebhook(webhookId: number, change: WebhookChange): Promise<Webhook>;
    /** Deletes the webhook; one that is gone already (404) counts as deleted. */
    deleteWebhook(webhookId: number): Promise<void>;
    /** The calls this port has made so far. */
    calls(): CallTally;
    /** A port sharing this one's connection and pacing that also counts its own calls, and logs (429 back-offs) to `log`. */
    withOwnTally(log?: (message: string) => void): SmartsheetPort;
    /** The same client for background work (a convergence): paced behind the foreground, within its share of the rate limit. */
    inBackground(): SmartsheetPort;
}
