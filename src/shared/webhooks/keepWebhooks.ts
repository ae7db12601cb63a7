import { afterFailure, alertFailureOf, alertRetryPolicy, reportAlertGivenUp, type AlertFailure } from "../alerts/delivery";
import { NOTICES } from "../jobs/JobStore";
import { parkAlertClaimExpiredBefore } from "../provisioning/parkAlert";
import type { RecoveryDeps } from "../recovery/reconcile";
import { PermanentSmartsheetError } from "../smartsheet/errors";
import type { Webhook } from "../smartsheet/model";
import type { Site } from "../sites/Sites";
import type { SweepRequests } from "./SweepRequests";
import type { WebhookCreations } from "./WebhookCreations";
import type { WebhookDirectory } from "./WebhookDirectory";
import type { WebhookHealth } from "../intake/WebhookHealth";
import { callbackUrlFor, webhookNameFor } from "./webhookNames";

export interface KeeperDeps extends Pick<RecoveryDeps, "alerts" | "log" | "telemetry" | "jobs" | "sites" | "config" | "timing" | "now" | "newRunId"> {
    directory: WebhookDirectory;
    sweeps: SweepRequests;
    creations: WebhookCreations;
    /** The key Smartsheet's callbacks carry (WEBHOOK_FUNCTION_KEY); config refuses a webhook base URL without it. */
    functionKey?: string;
    /** The receiver's health figure, watched for a jump. */
    health?: WebhookHealth;
}

/** A week's unannounced finds that tell ops: at least this many, and more than three times the most of the three weeks before. */
const JUMP_AT_LEAST = 5;
const JUMP_FACTOR = 3;

/** What the keeper found and did for one site. */
export type WebhookKept =
    | "enabled" // as it should be: nothing to do
    | "created" // none was there: made and enabled
    | "re-enabled" // disabled by failed callbacks or verification, or pointing elsewhere: enabled again
    | "not verified" // enabling it failed verification: tried again next run
    | "creating elsewhere" // another run holds the creation claim
    | "off"; // disabled for good, or refused: ops told once

/** Statuses the app puts right itself, by enabling the webhook again (Smartsheet verifies it anew). */
const RE_ENABLE: ReadonlySet<string> = new Set(["NEW_NOT_VERIFIED", "DISABLED_CALLBACK_FAILED", "DISABLED_VERIFICATION_FAILED"]);

/**
 * Keeps exactly one enabled webhook on each webhook site's intake sheet, the app's by its
 * deterministic name: adopted when there, created (under a claim) and enabled when missing,
 * enabled again after failed callbacks or verification, a duplicate deleted; a status the app
 * cannot put right tells ops once. One listing per site; a second read only for a secret the
 * listing left out. Its secret goes to the directory (memory only). A site that fails is logged and
 * tried next run; it stops no other site.
 */
export async function keepWebhooks(deps: KeeperDeps, occasion: string): Promise<Map<string, WebhookKept>> {
    const kept = new Map<string, WebhookKept>();
    for (const site of deps.sites.all()) {
        if (!site.webhookBaseUrl || !deps.functionKey) continue;
        try {
            const outcome = await keepSiteWebhook(deps, site, site.webhookBaseUrl, deps.functionKey);
            kept.set(site.name, outcome);
            if (outcome !== "enabled") deps.log.info(`webhook keeper (${occasion}): site ${site.name}'s intake webhook ${outcome}`);
            await watchForJump(deps, site);
        } catch (error) {
            deps.log.warn(
                `webhook keeper (${occasion}): site ${site.name}'s intake webhook could not be looked after (${withoutKey(deps, error instanceof Error ? error.message : String(error))}); ` +
                    `its timer sweeps carry on, and the next reaper run tries again`,
            );
        }
    }
    return kept;
}

async function keepSiteWebhook(deps: KeeperDeps, site: Site, baseUrl: string, functionKey: string): Promise<WebhookKept> {
    const name = webhookNameFor(site, baseUrl);
    const callbackUrl = callbackUrlFor(baseUrl, functionKey);
    const ours = (await site.smartsheet.listWebhooks()).filter((hook) => hook.name === name && hook.scopeObjectId === site.intakeSheetId);
    if (ours.length === 0) return createWebhook(deps, site, name, callbackUrl);

    const [hook, ...duplicates] = [...ours].sort((a, b) => Number(b.enabled) - Number(a.enabled) || a.id - b.id) as [Webhook, ...Webhook[]];
    for (const duplicate of duplicates) {
        deps.directory.forget(duplicate.id);
        await site.smartsheet.deleteWebhook(duplicate.id);
        deps.log.warn(`webhook keeper: site ${site.name} had a second intake webhook (${duplicate.id}, ${duplicate.status}); deleted, ${hook.id} kept`);
    }
    if (hook.enabled && hook.callbackUrl === callbackUrl) {
        await remember(deps, site, hook);
        return "enabled";
    }
    if (hook.callbackUrl !== callbackUrl || RE_ENABLE.has(hook.status)) {
        return enable(deps, site, hook.id, hook.callbackUrl === callbackUrl ? { enabled: true } : { enabled: true, callbackUrl }, hook.status);
    }
    await tellOpsOnce(deps, site, hook.id, hook.status, hook.status, `Smartsheet reports site ${site.name}'s intake webhook ${hook.id} as ${hook.status}${hook.disabledDetails ? ` (${hook.disabledDetails})` : ""}`);
    return "off";
}

async function createWebhook(deps: KeeperDeps, site: Site, name: string, callbackUrl: string): Promise<WebhookKept> {
    const lapseMs = 2 * deps.config.SMARTSHEET_CALL_TIMEOUT_SECONDS * 1000 + deps.timing.clockSkewMs + 60_000;
    if (!(await deps.creations.claim(site.name, deps.now(), lapseMs))) return "creating elsewhere";
    let created: Webhook;
    try {
        created = await site.smartsheet.createWebhook({ name, callbackUrl, scopeObjectId: site.intakeSheetId });
    } catch (error) {
        if (!(error instanceof PermanentSmartsheetError)) throw error;
        await deps.creations.release(site.name);
        await tellOpsOnce(deps, site, undefined, "REFUSED", "REFUSED", `Smartsheet refused to create site ${site.name}'s intake webhook: ${error.message}`);
        return "off";
    }
    const outcome = await enable(deps, site, created.id, { enabled: true }, created.status);
    return outcome === "re-enabled" ? "created" : outcome;
}

async function enable(deps: KeeperDeps, site: Site, webhookId: number, change: { enabled: true; callbackUrl?: string }, was: string): Promise<WebhookKept> {
    let hook: Webhook;
    try {
        hook = await site.smartsheet.updateWebhook(webhookId, change);
    } catch (error) {
        if (!(error instanceof PermanentSmartsheetError)) throw error;
        await tellOpsOnce(deps, site, webhookId, "REFUSED", "REFUSED", `Smartsheet refused to enable site ${site.name}'s intake webhook ${webhookId} (it was ${was}): ${error.message}`);
        return "off";
    }
    if (!hook.enabled) {
        deps.log.warn(`webhook keeper: site ${site.name}'s intake webhook ${webhookId} failed Smartsheet's verification (${hook.status}); the receiver did not answer its challenge; the next reaper run tries again`);
        return "not verified";
    }
    await remember(deps, site, hook);
    // What changed while it was off was never announced: the site's sweep reads it now.
    await deps.sweeps.request(site.name);
    return "re-enabled";
}

async function remember(deps: KeeperDeps, site: Site, hook: Webhook): Promise<void> {
    const known = deps.directory.get(hook.id);
    const secret = hook.sharedSecret ?? known?.secret ?? (await site.smartsheet.getWebhook(hook.id)).sharedSecret;
    deps.directory.remember(site, { id: hook.id, sharedSecret: secret });
}

/** Smartsheet's error messages may quote the callback URL, and so the function key in it: never in a line or an alert. */
function withoutKey(deps: Pick<KeeperDeps, "functionKey">, text: string): string {
    const key = deps.functionKey;
    if (!key) return text;
    return [key, encodeURIComponent(key)].reduce((redacted, secret) => redacted.split(secret).join("***"), text);
}

/**
 * A jump in the receiver's health figure (callbacks lost, or the webhook quietly off): this week's
 * rows found by timer sweeps that no webhook announced, against the most of the three weeks before.
 */
async function watchForJump(deps: KeeperDeps, site: Site): Promise<void> {
    if (!deps.health) return;
    const weeks = await deps.health.weeks([site.name], deps.now(), 4);
    const current = weeks.at(-1)!;
    const before = Math.max(...weeks.slice(0, -1).map((week) => week.found));
    if (current.found < JUMP_AT_LEAST || current.found <= JUMP_FACTOR * before) return;
    await tellOpsOnce(
        deps,
        site,
        deps.directory.idOf(site.name),
        "UNANNOUNCED",
        `UNANNOUNCED|${current.week}`,
        `the timer sweeps found ${current.found} intake rows of site ${site.name} this week (${current.week}) that no webhook announced, against at most ${before} a week in the three weeks before: callbacks are being lost or the webhook is off`,
    );
}

/** `webhook.disabled`, once per site, webhook and occasion (claimed in the Jobs table first), retried with back-off as the other one-off alerts are. */
async function tellOpsOnce(deps: KeeperDeps, site: Site, webhookId: number | undefined, status: string, occasion: string, what: string): Promise<void> {
    const key = `${site.name}|${webhookId ?? "none"}|${occasion}`;
    const reason =
        `${withoutKey(deps, what)}. Site ${site.name} runs on its timer sweeps until it is on again: give the token's user access to the intake sheet, ` +
        `ask Smartsheet support (DISABLED_ADMINISTRATIVE), or fix WEBHOOK_BASE_URL and WEBHOOK_FUNCTION_KEY; the keeper enables it on the reaper's schedule once it can`;
    const by = deps.newRunId();
    if (!(await deps.jobs.claimNotice(NOTICES.webhook, key, by, deps.now(), parkAlertClaimExpiredBefore(deps)))) return;
    deps.log.error(`webhook keeper: ${reason}`);
    let failure: AlertFailure | undefined;
    try {
        await deps.alerts?.send({ event: "webhook.disabled", site: site.name, ...(webhookId === undefined ? {} : { webhookId }), status, reason, foundAt: deps.now().toISOString() });
    } catch (error) {
        failure = alertFailureOf(error);
    }
    const now = deps.now();
    const next = await deps.jobs.recordNotice(NOTICES.webhook, key, by, failure ? undefined : now, (tries) => afterFailure(failure!, tries, now, alertRetryPolicy(deps.config.STALE_AFTER_MINUTES)));
    if (failure && next && "givenUp" in next) reportAlertGivenUp(deps, { alert: "webhook.disabled", about: `site ${site.name}`, ...next.givenUp });
    else if (failure) deps.log.error(`webhook keeper: the alert about site ${site.name}'s webhook did not go through (${failure.reason}); a reaper run tries again`);
}

/** The start-up line on the fast path: which sites have webhooks, and which run on timer sweeps alone. */
export function webhookPlanLine(sites: ReadonlyArray<Pick<Site, "name" | "webhookBaseUrl">>): string {
    const hooked = sites.filter((site) => site.webhookBaseUrl).map((site) => `${site.name} (${new URL(site.webhookBaseUrl!).host})`);
    const timerOnly = sites.filter((site) => !site.webhookBaseUrl).map((site) => site.name);
    if (hooked.length === 0) return "webhooks: off (WEBHOOK_BASE_URL not set): every site runs on its timer sweeps alone, so an approval waits for the next sweep";
    return `webhooks: on for ${hooked.join(", ")}; approvals start their products within about a minute` + (timerOnly.length > 0 ? `; on timer sweeps alone: ${timerOnly.join(", ")}` : "");
}
