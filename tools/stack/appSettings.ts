import type { SimAnchors } from "../smartsheet-sim";

export interface StackEndpoints {
    /** The simulator's base URL, ending in `/2.0/`. */
    smartsheetBaseUrl: string;
    anchors: SimAnchors;
    storageConnectionString: string;
}

/** The app settings that point Sheetwright at the local stack (what local.settings.json would hold). */
export function appSettingsFor(endpoints: StackEndpoints, extra: Record<string, string> = {}): Record<string, string> {
    return {
        FUNCTIONS_WORKER_RUNTIME: "node",
        AzureWebJobsStorage: endpoints.storageConnectionString,
        SMARTSHEET_ACCESS_TOKEN: "sim-token",
        SMARTSHEET_BASE_URL: endpoints.smartsheetBaseUrl,
        INTAKE_SHEET_ID: String(endpoints.anchors.intakeSheetId),
        TEMPLATE_FOLDER_ID: String(endpoints.anchors.templateFolderId),
        PRODUCTS_FOLDER_ID: String(endpoints.anchors.productsFolderId),
        FILING_INDEX_SHEET_ID: String(endpoints.anchors.filingIndexSheetId),
        TASK_HUB_NAME: "SheetwrightLocal",
        ...extra,
    };
}
