/** The Smartsheet calls the simulator serves, named after the official SDK's methods. */
export const SIM_OPERATIONS = [
    "getFolderChildren",
    "createFolder",
    "deleteFolder",
    "copySheet",
    "updateSheet",
    "getSheet",
    "deleteSheet",
    "addRows",
    "updateRows",
    "deleteRows",
    "getColumns",
    "addColumn",
    "updateColumn",
    "deleteColumn",
    "listCrossSheetReferences",
    "getCrossSheetReference",
    "createCrossSheetReference",
    "getSummary",
    "getSummaryFields",
    "addSummaryFields",
    "updateSummaryFields",
    "deleteSummaryFields",
    "listWebhooks",
    "getWebhook",
    "createWebhook",
    "updateWebhook",
    "deleteWebhook",
    "resetSharedSecret",
] as const;

export type SimOperation = (typeof SIM_OPERATIONS)[number];

const READ_OPERATIONS: ReadonlySet<SimOperation> = new Set<SimOperation>([
    "getFolderChildren",
    "getSheet",
    "getColumns",
    "listCrossSheetReferences",
    "getCrossSheetReference",
    "getSummary",
    "getSummaryFields",
    "listWebhooks",
    "getWebhook",
]);

export function isReadOperation(op: SimOperation): boolean {
    return READ_OPERATIONS.has(op);
}
