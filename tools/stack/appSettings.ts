import { randomBytes } from "node:crypto";
import type { SimAnchors, SimSite } from "../smartsheet-sim";

/** A schedule that does not come round during a run: the harness fires the timer itself. */
export const NEVER = "0 0 0 1 1 *";

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

/**
 * What makes one app under test its own on storage it shares with others (a bench run's stacks, a
 * chaos run's schedules, the end-to-end tests): a Jobs table, provisioning queue and task hub
 * named `<prefix>…<random>`, its function key, and timers that run only when fired.
 */
export function ownAppSettings(prefix: string, functionKey: string): Record<string, string> {
    const unique = randomBytes(4).toString("hex");
    return {
        FUNCTIONS_HOST_KEY: functionKey,
        JOBS_TABLE: `${prefix}jobs${unique}`,
        PROVISION_QUEUE: `${prefix}-provision-${unique}`,
        TASK_HUB_NAME: `${prefix}hub${unique}`,
        INTAKE_SWEEP_SCHEDULE: NEVER,
        INTAKE_FULL_SWEEP_SCHEDULE: NEVER,
        REAPER_SCHEDULE: NEVER,
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
