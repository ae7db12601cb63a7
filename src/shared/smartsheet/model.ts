import { z } from "zod";

/** Smartsheet ids are JSON numbers; real ones have 16 digits and stay within safe integers. */
const SmartsheetId = z.number().int().positive().refine(Number.isSafeInteger, "id beyond 2^53");
type SmartsheetId = z.infer<typeof SmartsheetId>;

export const FolderChild = z.object({
    id: SmartsheetId,
    name: z.string(),
    resourceType: z.string(),
    permalink: z.string().optional(),
    createdAt: z.string().optional(),
    modifiedAt: z.string().optional(),
});
export type FolderChild = z.infer<typeof FolderChild>;

export const FolderChildrenPage = z.object({
    data: z.array(FolderChild),
    lastKey: z.string().optional(),
});

export const FolderRef = z.object({ id: SmartsheetId, name: z.string(), permalink: z.string().optional() });
export type FolderRef = z.infer<typeof FolderRef>;

export const SheetRef = z.object({
    id: SmartsheetId,
    name: z.string(),
    permalink: z.string().optional(),
    accessLevel: z.string().optional(),
});
export type SheetRef = z.infer<typeof SheetRef>;

export const Column = z.object({
    id: SmartsheetId,
    index: z.number().int(),
    title: z.string(),
    type: z.string(),
    primary: z.boolean().optional(),
    formula: z.string().optional(),
    options: z.array(z.string()).optional(),
    /** A CHECKBOX or PICKLIST column shown as symbols (`STAR`, `FLAG`, `HARVEY_BALLS`…). */
    symbol: z.string().optional(),
    /** A column Smartsheet fills itself: `AUTO_NUMBER`, `CREATED_BY`, `CREATED_DATE`, `MODIFIED_BY`, `MODIFIED_DATE`. */
    systemColumnType: z.string().optional(),
    description: z.string().optional(),
    /** Smartsheet refuses a cell value its type does not allow. */
    validation: z.boolean().optional(),
    locked: z.boolean().optional(),
    hidden: z.boolean().optional(),
});
export type Column = z.infer<typeof Column>;

/** `GET /sheets/{id}/columns?includeAll=true`: one IndexResult with every column. */
export const ColumnsPage = z
    .object({
        data: z.array(Column).default([]),
        totalCount: z.number().int().nonnegative().optional(),
    })
    .refine((page) => page.totalCount === undefined || page.data.length === page.totalCount, "fewer columns than totalCount: a page, not all");

const CellValue = z.union([z.string(), z.number(), z.boolean()]);

const Cell = z.object({
    columnId: SmartsheetId,
    value: CellValue.optional(),
    displayValue: z.string().optional(),
    formula: z.string().optional(),
});
type Cell = z.infer<typeof Cell>;

export const Row = z.object({
    id: SmartsheetId,
    rowNumber: z.number().int(),
    createdAt: z.string().optional(),
    modifiedAt: z.string().optional(),
    cells: z.array(Cell).default([]),
});
export type Row = z.infer<typeof Row>;

export const CrossSheetReference = z.object({
    id: SmartsheetId.optional(),
    name: z.string(),
    sourceSheetId: SmartsheetId,
    startRowId: SmartsheetId.optional(),
    endRowId: SmartsheetId.optional(),
    startColumnId: SmartsheetId.optional(),
    endColumnId: SmartsheetId.optional(),
    status: z.string().optional(),
});
export type CrossSheetReference = z.infer<typeof CrossSheetReference>;

export const Sheet = z.object({
    id: SmartsheetId,
    name: z.string(),
    version: z.number().int().optional(),
    totalRowCount: z.number().int().nonnegative().optional(),
    permalink: z.string().optional(),
    /** When anything in the sheet last changed, by Smartsheet's clock (whole seconds). */
    modifiedAt: z.string().optional(),
    hasSummaryFields: z.boolean().optional(),
    columns: z.array(Column).default([]),
    rows: z.array(Row).default([]),
    crossSheetReferences: z.array(CrossSheetReference).optional(),
});
export type Sheet = z.infer<typeof Sheet>;

export const SummaryField = z.object({
    id: SmartsheetId,
    index: z.number().int().optional(),
    title: z.string(),
    type: z.string().optional(),
    objectValue: z.unknown().optional(),
    displayValue: z.string().optional(),
    formula: z.string().optional(),
    /** A PICKLIST field's choices, and how they are shown. */
    options: z.array(z.string()).optional(),
    symbol: z.string().optional(),
});
export type SummaryField = z.infer<typeof SummaryField>;

export const SheetSummary = z.object({ fields: z.array(SummaryField).default([]) });

/** Write envelope: `{ message, resultCode, result }`. */
export function writeResult<T extends z.ZodType>(result: T) {
    return z.object({ message: z.string(), resultCode: z.number(), result });
}

export const WriteAck = z.object({ message: z.string(), resultCode: z.number() });

/** One row a bulk write with `allowPartialSuccess=true` refused: where it was in the request, and Smartsheet's error. */
const FailedItem = z.object({
    index: z.number().int().nonnegative(),
    rowId: SmartsheetId.nullable().optional(),
    error: z.object({ errorCode: z.number().optional(), message: z.string().default(""), refId: z.string().optional() }),
});

/** A bulk row write with partial success allowed: `SUCCESS` (0), or `PARTIAL_SUCCESS` (3) with the refused rows in `failedItems`. */
export const PartialRowsResult = z.object({
    message: z.string(),
    resultCode: z.number(),
    result: z.array(Row).default([]),
    failedItems: z.array(FailedItem).nullable().optional(),
});

/** Where a webhook stands (Smartsheet's `status`); every `DISABLED_*` one sends no callbacks. */
export const WebhookStatus = z.string().min(1);

/** A webhook as `GET /webhooks` and `GET /webhooks/{id}` describe it (what the app reads of it). */
export const Webhook = z.object({
    id: SmartsheetId,
    name: z.string(),
    scope: z.string(),
    scopeObjectId: SmartsheetId,
    callbackUrl: z.string(),
    /** Secret: never logged. Present on Smartsheet's reads of a webhook the token owns. */
    sharedSecret: z.string().optional(),
    enabled: z.boolean(),
    status: WebhookStatus,
    disabledDetails: z.string().optional(),
});
export type Webhook = z.infer<typeof Webhook>;

export const WebhooksPage = z.object({
    data: z.array(Webhook).default([]),
    pageNumber: z.number().int().optional(),
    totalPages: z.number().int().optional(),
});
