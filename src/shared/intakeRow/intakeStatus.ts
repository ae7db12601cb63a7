import { keyOf, type JobRow } from "../jobs/JobRow";
import { cleanText, fitText } from "../naming/productNames";
import { columnIdsByTitle } from "../smartsheet/columns";
import type { SmartsheetPort } from "../smartsheet/SmartsheetPort";

/** Intake sheet columns, by title. `Status` and `Folder` are written by Sheetwright. */
export const IntakeColumns = {
    productCode: "Product Code",
    productName: "Product Name",
    productLine: "Product Line",
    approved: "Approved",
    status: "Status",
    folder: "Folder",
} as const;

const MAX_REASON = 300;

/** One line, no control or invisible formatting characters (the reason may quote what a customer typed), at most 300 characters. */
function shorten(reason: string): string {
    return fitText(cleanText(reason), MAX_REASON);
}

/** What the customer reads in the intake row's `Status` cell. */
export const IntakeStatus = {
    queued: "Queued",
    /** Written only when an unparked job runs again, over its `Stalled` status; a job's first run goes from Queued to Done. */
    inProgress: "In progress",
    done: "Done",
    stalled: (reason: string) => `Stalled — ${shorten(reason)}`,
    isStalled: (status: string | undefined) => status?.startsWith("Stalled — ") ?? false,
    rejected: (reason: string) => `Rejected — ${shorten(reason)}`,
} as const;

/**
 * Writes the job's intake row `Status` (and `Folder`), finding the columns once if the row does
 * not know them; returns the column ids for the caller to record with the status.
 */
export async function writeIntakeStatus(
    smartsheet: SmartsheetPort,
    row: JobRow,
    status: string,
    folderLink?: string,
): Promise<{ intakeStatusColumnId: number; intakeFolderColumnId?: number }> {
    const { pk, rk } = keyOf(row);
    let statusColumnId = row.intakeStatusColumnId;
    let folderColumnId = row.intakeFolderColumnId;
    if (!statusColumnId) {
        const read = await readIntakeRow(smartsheet, row);
        statusColumnId = read.statusColumnId;
        folderColumnId = read.folderColumnId;
        if (!statusColumnId) throw new Error(`The intake sheet has no "${IntakeColumns.status}" column.`);
    }
    const cells = [{ columnId: statusColumnId, value: status }];
    if (folderLink && folderColumnId) cells.push({ columnId: folderColumnId, value: folderLink });
    await smartsheet.updateRows(Number(pk), [{ id: Number(rk), cells }]);
    return { intakeStatusColumnId: statusColumnId, intakeFolderColumnId: folderColumnId };
}

/**
 * Whether the job's intake row already shows `status` (and `folderLink`, when one is written with
 * it): one read of that row. The column ids come back too, for the caller to record.
 */
export async function intakeRowShows(
    smartsheet: SmartsheetPort,
    row: JobRow,
    status: string,
    folderLink?: string,
): Promise<{ shows: boolean; intakeStatusColumnId?: number; intakeFolderColumnId?: number }> {
    const { intakeRow, statusColumnId, folderColumnId } = await readIntakeRow(smartsheet, row);
    const text = (columnId: number | undefined) => String(intakeRow?.cells.find((cell) => cell.columnId === columnId)?.value ?? "");
    const shows =
        intakeRow !== undefined &&
        statusColumnId !== undefined &&
        text(statusColumnId) === status &&
        (!folderLink || !folderColumnId || text(folderColumnId) === folderLink);
    return { shows, intakeStatusColumnId: statusColumnId, intakeFolderColumnId: folderColumnId };
}

/** The job's intake row, read alone, and the ids of the intake sheet's `Status` and `Folder` columns. */
async function readIntakeRow(smartsheet: SmartsheetPort, row: JobRow) {
    const { pk, rk } = keyOf(row);
    const sheet = await smartsheet.getSheet(Number(pk), { rowIds: [Number(rk)] });
    const { ids } = columnIdsByTitle(sheet, { status: IntakeColumns.status, folder: IntakeColumns.folder });
    return { intakeRow: sheet.rows.find((candidate) => candidate.id === Number(rk)), statusColumnId: ids.status, folderColumnId: ids.folder };
}
