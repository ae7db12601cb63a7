import type { HttpResponseInit } from "@azure/functions";
import type { Logger } from "../logger";
import { SHEETWRIGHT_CHANGE_AGENT } from "../smartsheet/SmartsheetPort";
import type { Telemetry } from "../telemetry/Telemetry";
import { signatureMatches, VerificationChallenge, WebhookCallback } from "./callbacks";
import type { SweepRequests } from "./SweepRequests";
import type { WebhookDirectory } from "./WebhookDirectory";

/** Callbacks are skinny (ids, not data); anything larger is not Smartsheet's. */
export const MAX_CALLBACK_BYTES = 1_000_000;

export interface ReceiverDeps {
    directory: WebhookDirectory;
    sweeps: SweepRequests;
    refusals: RefusalTally;
    log: Logger;
    telemetry?: Telemetry;
}

export interface CallbackRequest {
    header(name: string): string | null;
    /** The raw body, as signed; `undefined` when it was larger than `MAX_CALLBACK_BYTES`. */
    body: string | undefined;
}

/**
 * One request from Smartsheet to the receiver. A verification challenge is answered (it starts
 * nothing). A callback is believed only as far as "this site's intake sheet changed", and only
 * when its webhook is one of the app's and its HMAC matches that webhook's secret: then one
 * coalesced, key-only sweep request is sent and the answer is 200 — the sweep reads Smartsheet
 * itself. Events that all carry the app's own change agent (its `Queued` and `Done` writes) wake
 * nothing. Refusals (400, 401, 403) are counted and logged once a minute, never with the body.
 */
export async function receiveCallback(deps: ReceiverDeps, request: CallbackRequest): Promise<HttpResponseInit> {
    if (request.body === undefined) return deps.refusals.refuse(deps.log, 413, "a body larger than a callback");
    const challengeHeader = request.header("smartsheet-hook-challenge");
    if (challengeHeader !== null) return answerChallenge(deps, challengeHeader, request.body);

    const callback = parseCallback(request.body);
    if (!callback) return deps.refusals.refuse(deps.log, 400, "not a Smartsheet callback");
    let hook = deps.directory.get(callback.webhookId);
    if (!hook && (await refreshed(deps))) hook = deps.directory.get(callback.webhookId);
    if (!hook) return deps.refusals.refuse(deps.log, 403, "a webhook id that is not one of this app's");
    const signature = request.header("smartsheet-hmac-sha256");
    if (!signatureMatches(hook.secret, request.body, signature)) {
        // The secret may have been reset since it was read: read it again (throttled) before refusing.
        const again = (await refreshed(deps)) ? deps.directory.get(callback.webhookId) : undefined;
        if (!again || !signatureMatches(again.secret, request.body, signature)) return deps.refusals.refuse(deps.log, 401, "a signature that does not match the webhook's secret");
        hook = again;
    }

    const site = hook.site.name;
    if (callback.newWebhookStatus !== undefined) {
        deps.log.warn(`webhook ${hook.id} of site ${site} is now ${callback.newWebhookStatus}; the keeper looks after it on the reaper's schedule, and the next sweep reads what it missed`);
    } else if ((callback.events ?? []).every((event) => event.changeAgent === SHEETWRIGHT_CHANGE_AGENT)) {
        deps.telemetry?.count("sheetwright.webhook.callbacks", { site, outcome: "own writes" });
        return { status: 200 };
    }
    const outcome = await deps.sweeps.request(site);
    deps.telemetry?.count("sheetwright.webhook.callbacks", { site, outcome });
    if (outcome === "requested") deps.log.info(`webhook ${hook.id}: site ${site}'s intake sheet changed; its sweep is asked for`);
    return { status: 200 };
}

function answerChallenge(deps: ReceiverDeps, header: string, body: string): HttpResponseInit {
    const challenge = parseJson(body);
    const parsed = VerificationChallenge.safeParse(challenge);
    if (!parsed.success || parsed.data.challenge !== header) return deps.refusals.refuse(deps.log, 400, "a verification challenge that is not Smartsheet's");
    // Answering starts nothing; callbacks of a webhook that is not the app's are refused by id.
    return { status: 200, headers: { "Smartsheet-Hook-Response": parsed.data.challenge }, jsonBody: { smartsheetHookResponse: parsed.data.challenge } };
}

async function refreshed(deps: ReceiverDeps): Promise<boolean> {
    try {
        return await deps.directory.refresh();
    } catch {
        return false;
    }
}

function parseCallback(body: string): WebhookCallback | undefined {
    const parsed = WebhookCallback.safeParse(parseJson(body));
    return parsed.success ? parsed.data : undefined;
}

function parseJson(body: string): unknown {
    try {
        return JSON.parse(body) as unknown;
    } catch {
        return undefined;
    }
}

/**
 * Refused callbacks, counted by reason and logged at most once a minute per reason with the count
 * since the last line: a flood of forged requests is one line a minute, and never their bodies.
 */
export class RefusalTally {
    private readonly pending = new Map<string, { count: number; loggedAt: number }>();

    constructor(
        private readonly clock: () => number,
        private readonly everyMs = 60_000,
    ) {}

    refuse(log: Logger, status: number, reason: string): HttpResponseInit {
        const now = this.clock();
        const entry = this.pending.get(reason) ?? { count: 0, loggedAt: Number.NEGATIVE_INFINITY };
        entry.count += 1;
        if (now - entry.loggedAt >= this.everyMs) {
            log.warn(`webhook receiver refused ${entry.count} request${entry.count === 1 ? "" : "s"} (${status}) since its last line on this: ${reason}`);
            entry.count = 0;
            entry.loggedAt = now;
        }
        this.pending.set(reason, entry);
        return { status };
    }
}
