import { cleanText, fitText } from "../naming/productNames";

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
