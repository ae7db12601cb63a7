import type { SimAnchors, SimSite } from "../smartsheet-sim";

export interface StackEndpoints {
    /** The simulator's base URL, ending in `/2.0/`. */
    smartsheetBaseUrl: string;
    anchors: SimAnchors;
    storageConnectionString: string;
    /** Configure these simulated sites through SITES; without them, the first site through the single-site settings. */
    sites?: readonly SimSite[];
}

/** The app settings that point Sheetwright at the local stack (what local.settings.json would hold). */
export function appSettingsFor(endpoints: StackEndpoints, extra: Record<string, string> = {}): Record<string, string> {
    return {
        FUNCTIONS_WORKER_RUNTIME: "node",
        AzureWebJobsStorage: endpoints.storageConnectionString,
        SMARTSHEET_BASE_URL: endpoints.smartsheetBaseUrl,
        ...(endpoints.sites
            ? sitesSettingsFor(endpoints.sites)
            : {
                  SMARTSHEET_ACCESS_TOKEN: "sim-token",
                  INTAKE_SHEET_ID: String(endpoints.anchors.intakeSheetId),
                  TEMPLATE_FOLDER_ID: String(endpoints.anchors.templateFolderId),
                  PRODUCTS_FOLDER_ID: String(endpoints.anchors.productsFolderId),
                  FILING_INDEX_SHEET_ID: String(endpoints.anchors.filingIndexSheetId),
              }),
        TASK_HUB_NAME: "SheetwrightLocal",
        ...extra,
    };
}

/** The setting a simulated site's token is kept in: SMARTSHEET_TOKEN_DEMO_2 for site demo-2. */
export function tokenSettingOf(site: Pick<SimSite, "name">): string {
    return `SMARTSHEET_TOKEN_${site.name.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`;
}

/** SITES for the simulated sites, and one token setting per site, as a deployment serving them would have. */
export function sitesSettingsFor(sites: readonly SimSite[]): Record<string, string> {
    const entries = sites.map((site) => ({
        name: site.name,
        intakeSheetId: site.intakeSheetId,
        templateFolderId: site.templateFolderId,
        productsFolderId: site.productsFolderId,
        filingIndexSheetId: site.filingIndexSheetId,
        tokenSetting: tokenSettingOf(site),
    }));
    return { SITES: JSON.stringify(entries), ...Object.fromEntries(sites.map((site) => [tokenSettingOf(site), site.token])) };
}
