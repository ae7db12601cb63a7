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

function shorten(reason: string): string {
    const oneLine = reason.replace(/\s+/g, " ").trim();
    return oneLine.length <= MAX_REASON ? oneLine : `${oneLine.slice(0, MAX_REASON - 1)}…`;
}

/** What the customer reads in the intake row's `Status` cell. */
export const IntakeStatus = {
    queued: "Queued",
    copying: (done: number, total: number) => `In progress — copy ${done}/${total}`,
    renaming: "In progress — rename",
    done: "Done",
    stalled: (reason: string) => `Stalled — ${shorten(reason)}`,
    rejected: (reason: string) => `Rejected — ${shorten(reason)}`,
} as const;
