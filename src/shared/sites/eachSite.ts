import type { AlertChannel } from "../alerts/AlertChannel";
import type { Logger } from "../logger";
import { isSmartsheetError } from "../smartsheet/errors";
import type { Site, Sites } from "./Sites";
import type { Telemetry } from "../telemetry/Telemetry";
import { siteEvents } from "../telemetry/siteEvents";

/** A site whose run failed, and why (with what to do about it). */
export interface SiteFailure {
    site: string;
    reason: string;
}

export interface EachSiteDeps {
    sites: Sites;
    log: Logger;
    alerts?: AlertChannel;
    telemetry?: Telemetry;
    now(): Date;
}

/**
 * Runs `work` for every site, one after the other. A site that fails (its token refused, its
 * template folder gone, storage failing for it) is reported in an error line and alerted, and
 * never stops the sites after it. `run` names the run in both (`intake sweep`, `reaper`).
 */
export async function forEachSite<R>(
    deps: EachSiteDeps,
    run: string,
    work: (site: Site) => Promise<R>,
    sites: readonly Site[] = deps.sites.all(),
): Promise<{ results: R[]; failed: SiteFailure[] }> {
    const results: R[] = [];
    const failed: SiteFailure[] = [];
    for (const site of sites) {
        try {
            results.push(await work(site));
            siteEvents.succeeded(deps.telemetry, site.name, run);
        } catch (error) {
            const reason = siteFailureReason(site, error);
            deps.log.error(`${run}: site ${site.name} failed: ${reason}; the other sites carry on`);
            siteEvents.failed(deps.telemetry, site.name, run, reason);
            failed.push({ site: site.name, reason });
            try {
                await deps.alerts?.send({ event: "site.failed", site: site.name, run, reason, failedAt: deps.now().toISOString() });
            } catch (alertError) {
                deps.telemetry?.event("alert.failed", { site: site.name, run, reason: alertError instanceof Error ? alertError.message : String(alertError) });
                deps.log.error(
                    `${run}: the alert that site ${site.name} failed did not go through (${alertError instanceof Error ? alertError.message : String(alertError)}); ` +
                        `the line above is the alert, and the next run tries again`,
                );
            }
        }
    }
    return { results, failed };
}

/** What went wrong for a site, and what a person does about it. */
export function siteFailureReason(site: Site, error: unknown): string {
    const message = error instanceof Error ? error.message : String(error);
    if (!isSmartsheetError(error)) return message;
    if (error.statusCode === 401) {
        return `Smartsheet refused the site's token (${message}); put a valid token into the app setting ${site.tokenSetting}`;
    }
    if (error.statusCode === 403) {
        return `the site's token may not do this (${message}); share the site's sheets and folders with the token's user (app setting ${site.tokenSetting})`;
    }
    if (error.statusCode === 404) {
        return (
            `a sheet or folder of the site is gone (${message}); restore it, or correct the site's ids in SITES ` +
            `(intake sheet ${site.intakeSheetId}, template folder ${site.templateFolderId}, products folder ${site.productsFolderId}, Filing Index ${site.filingIndexSheetId})`
        );
    }
    return message;
}
