import { randomUUID } from "node:crypto";
import type { AlertChannel } from "../alerts/AlertChannel";
import { failureKind, type FailureKind } from "../failures";
import { reportAlertGivenUp, alertFailureOf, type AlertFailure } from "../alerts/delivery";
import type { OutageTurn, SiteOutages } from "../alerts/SiteOutages";
import type { Logger } from "../logger";
import { isSmartsheetError } from "../smartsheet/errors";
import type { Telemetry } from "../telemetry/Telemetry";
import { siteEvents } from "../telemetry/siteEvents";
import type { Site, Sites } from "./Sites";

/** A site whose run failed, and why (with what to do about it). */
export interface SiteFailure {
    site: string;
    reason: string;
    /** What the error said about trying again (`failureKind`). */
    kind: FailureKind;
}

interface EachSiteDeps {
    sites: Sites;
    log: Logger;
    alerts?: AlertChannel;
    /** Each site's open outage, so that `site.failed` is sent once per outage; absent, every failed run alerts. */
    siteOutages?: SiteOutages;
    telemetry?: Telemetry;
    now(): Date;
}

interface EachSiteOptions {
    /** A success of this pass ends no outage (the reaper's listing: only its reaping says the site is well again). */
    endsNoOutage?: boolean;
}

/**
 * Runs `work` for every site, one after the other. A site that fails (its token refused, its
 * template folder gone, storage failing for it) is reported in an error line every run, and
 * alerted once per outage (`site.failed`); it never stops the sites after it. A site that runs
 * again after an outage ops was told of is alerted too (`site.recovered`). `run` names the run
 * in both (`intake sweep`, `reaper`).
 */
export async function forEachSite<R>(
    deps: EachSiteDeps,
    run: string,
    work: (site: Site) => Promise<R>,
    sites: readonly Site[] = deps.sites.all(),
    options: EachSiteOptions = {},
): Promise<{ results: R[]; failed: SiteFailure[] }> {
    const results: R[] = [];
    const failed: SiteFailure[] = [];
    for (const site of sites) {
        let result: R;
        try {
            result = await work(site);
        } catch (error) {
            const reason = siteFailureReason(site, error);
            deps.log.error(`${run}: site ${site.name} failed: ${reason}; the other sites carry on`);
            siteEvents.failed(deps.telemetry, site.name, run, reason);
            failed.push({ site: site.name, reason, kind: failureKind(error) });
            await tellOfFailure(deps, run, site, reason);
            continue;
        }
        results.push(result);
        siteEvents.succeeded(deps.telemetry, site.name, run);
        if (!options.endsNoOutage) await tellOfRecovery(deps, run, site);
    }
    return { results, failed };
}

/** `site.failed`, once per outage: sent by the run that opened it, or tried again (with back-off) by later failing runs. */
async function tellOfFailure(deps: EachSiteDeps, run: string, site: Site, reason: string): Promise<void> {
    const now = deps.now();
    if (!deps.siteOutages) {
        await sendSiteAlert(deps, run, site, { event: "site.failed", site: site.name, run, reason, failedAt: now.toISOString() });
        return;
    }
    const by = randomUUID();
    let turn: OutageTurn;
    try {
        turn = await deps.siteOutages.failed(site.name, run, reason, now, by);
    } catch (error) {
        // Storage failing may be the very outage: better the alert every run than none.
        deps.log.error(`${run}: the outage of site ${site.name} could not be recorded (${messageOf(error)}); its alert is sent unrecorded`);
        await sendSiteAlert(deps, run, site, { event: "site.failed", site: site.name, run, reason, failedAt: now.toISOString() });
        return;
    }
    if (!turn) return;
    const failure = await sendSiteAlert(deps, run, site, { event: "site.failed", site: site.name, run, reason, failedAt: turn.outage.since });
    await recordAnswer(deps, run, site, turn, by, failure);
}

/** `site.recovered`, once, when a site whose failure ops was told of runs again. */
async function tellOfRecovery(deps: EachSiteDeps, run: string, site: Site): Promise<void> {
    if (!deps.siteOutages) return;
    const now = deps.now();
    const by = randomUUID();
    try {
        const { turn, closed } = await deps.siteOutages.succeeded(site.name, run, now, by);
        if (closed) deps.log.info(`${run}: site ${site.name} runs again (failing since ${closed.since}); its failure alert had not gone through, so no recovery alert is sent`);
        if (!turn) return;
        deps.log.info(`${run}: site ${site.name} runs again (failing since ${turn.outage.since})`);
        const failure = await sendSiteAlert(deps, run, site, {
            event: "site.recovered",
            site: site.name,
            run,
            failedAt: turn.outage.since,
            recoveredAt: turn.outage.recoveredAt ?? now.toISOString(),
        });
        await recordAnswer(deps, run, site, turn, by, failure);
    } catch (error) {
        deps.log.error(`${run}: the end of site ${site.name}'s outage could not be recorded (${messageOf(error)}); the next run tries again`);
    }
}

type SiteAlert = Parameters<AlertChannel["send"]>[0] & { event: "site.failed" | "site.recovered" };

async function sendSiteAlert(deps: EachSiteDeps, run: string, site: Site, alert: SiteAlert): Promise<AlertFailure | undefined> {
    try {
        await deps.alerts?.send(alert);
        return undefined;
    } catch (error) {
        const failure = alertFailureOf(error);
        const what = alert.event === "site.failed" ? "failed" : "runs again";
        deps.telemetry?.event("alert.failed", { site: site.name, run, reason: failure.reason });
        deps.log.error(`${run}: the alert that site ${site.name} ${what} did not go through (${failure.reason}); the line above is the alert`);
        return failure;
    }
}

async function recordAnswer(deps: EachSiteDeps, run: string, site: Site, turn: NonNullable<OutageTurn>, by: string, failure: AlertFailure | undefined): Promise<void> {
    const next = await deps.siteOutages!.answered(turn.outage, by, failure, deps.now());
    if (next && "givenUp" in next) reportAlertGivenUp(deps, { alert: turn.send, about: `site ${site.name}`, ...next.givenUp });
    else if (next) deps.log.warn(`${run}: the ${turn.send} alert of site ${site.name} is tried again by a run after ${next.retryAt} (try ${next.tries} failed)`);
}

function messageOf(error: unknown): string {
    return error instanceof Error ? error.message : String(error);
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
