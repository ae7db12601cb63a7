import { createHash, createHmac, randomBytes, randomUUID } from "node:crypto";
import { apiErrors } from "./ApiError";
import type { WebhookTiming } from "./SimulatorOptions";
import { WebhookFaults, type WebhookFaultRule } from "./WebhookFaults";

/** Smartsheet's webhook statuses (Webhook.status; "Webhook status" in the API guide). */
export const WEBHOOK_STATUSES = [
    "ENABLED",
    "NEW_NOT_VERIFIED",
    "DISABLED_ADMINISTRATIVE",
    "DISABLED_APP_REVOKED",
    "DISABLED_BY_OWNER",
    "DISABLED_CALLBACK_FAILED",
    "DISABLED_SCOPE_INACCESSIBLE",
    "DISABLED_VERIFICATION_FAILED",
] as const;
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];

/** One change of a sheet as a callback reports it, before the webhook's own stamp. */
export interface SheetChange {
    objectType: "sheet" | "row" | "cell" | "column";
    eventType: "created" | "updated" | "deleted";
    /** The sheet, row or column; a cell has rowId and columnId instead. */
    id?: number;
    rowId?: number;
    columnId?: number;
}

/** An event of a callback: a change with who made it, when, and the write's change agent. */
export interface WebhookEvent extends SheetChange {
    userId: number;
    timestamp: string;
    changeAgent?: string;
}

export interface SimWebhook {
    id: number;
    /** The token that created it: only that token sees and manages it. */
    owner: string;
    name: string;
    callbackUrl: string;
    scopeObjectId: number;
    events: string[];
    version: number;
    sharedSecret: string;
    enabled: boolean;
    status: WebhookStatus;
    disabledDetails?: string;
    createdAt: number;
    modifiedAt: number;
    seq: number;
    stats: { lastCallbackAttempt?: number; lastCallbackAttemptRetryCount: number; lastSuccessfulCallback?: number };
}

/** One request the simulator sent to a callback URL, for tests and the admin API. */
export interface WebhookDelivery {
    webhookId: number;
    kind: "verification" | "event" | "status";
    /** The receiver's HTTP status; null when it did not answer (timeout, refused connection) or the request was never sent. */
    status: number | null;
    /** The retry this was (0 the first attempt). */
    retry: number;
    at: string;
    nonce?: string;
    fault?: WebhookFaultRule["kind"];
}

interface DeliveryState {
    pending: WebhookEvent[];
    windowTimer?: NodeJS.Timeout;
    windowClosed: boolean;
    busy: boolean;
    callbacksSinceVerification: number;
    /** A callback held back by a `reorder` fault: sent after the next one. */
    held?: string;
    /** Bumped whenever the webhook is disabled, re-enabled or deleted: a delivery of an older generation stops. */
    generation: number;
}

interface HookResponse {
    status: number | null;
    headers?: Headers;
    text?: string;
}

const MAX_DELIVERY_LOG = 10_000;
const ALLOWED_HTTPS_PORTS = new Set(["", "443", "8000", "8008", "8080", "8443"]);

/**
 * The account's webhooks and their delivery: verification, debounced signed event callbacks one
 * at a time per webhook, retries and disabling, status callbacks, and webhook faults. Timers and
 * requests in flight end with `stop()` (and `reset()`).
 */
export class Webhooks {
    private readonly hooks = new Map<number, SimWebhook & { delivery: DeliveryState }>();
    private readonly timers = new Set<NodeJS.Timeout>();
    private readonly inFlight = new Set<AbortController>();
    private readonly log: WebhookDelivery[] = [];
    private seq = 0;
    readonly faults = new WebhookFaults();

    constructor(
        private readonly timing: () => WebhookTiming,
        private readonly clock: () => number,
        private readonly nextId: () => number,
    ) {}

    /** Validates a callback URL as Smartsheet does; plain http is accepted to this machine only, for local receivers. */
    static checkCallbackUrl(callbackUrl: string): void {
        let url: URL;
        try {
            url = new URL(callbackUrl);
        } catch {
            throw apiErrors.invalidValue(callbackUrl, "callbackUrl");
        }
        if (url.protocol === "https:") {
            if (!ALLOWED_HTTPS_PORTS.has(url.port)) throw apiErrors.invalidValue(callbackUrl, "callbackUrl");
            return;
        }
        const host = url.hostname.replace(/^\[|\]$/g, "");
        const loopback = host === "localhost" || host === "::1" || /^127\./.test(host);
        if (url.protocol === "http:" && loopback) return;
        throw apiErrors.urlMustBeHttps();
    }

    create(owner: string, input: { name: string; callbackUrl: string; scopeObjectId: number; events: string[]; version: number }): SimWebhook {
        const now = this.clock();
        const hook = {
            id: this.nextId(),
            owner,
            ...input,
            sharedSecret: newSecret(),
            enabled: false,
            status: "NEW_NOT_VERIFIED" as WebhookStatus,
            createdAt: now,
            modifiedAt: now,
            seq: this.seq++,
            stats: { lastCallbackAttemptRetryCount: 0 },
            delivery: { pending: [], windowClosed: false, busy: false, callbacksSinceVerification: 0, generation: 0 },
        };
        this.hooks.set(hook.id, hook);
        return hook;
    }

    /** A token's webhook; another token's or an unknown id is 404. */
    get(owner: string, id: number): SimWebhook {
        const hook = this.hooks.get(id);
        if (!hook || hook.owner !== owner) throw apiErrors.notFound();
        return hook;
    }

    /** A token's webhooks, by name then creation. */
    list(owner?: string): SimWebhook[] {
        return [...this.hooks.values()]
            .filter((hook) => owner === undefined || hook.owner === owner)
            .sort((a, b) => a.name.localeCompare(b.name) || a.seq - b.seq);
    }

    delete(owner: string, id: number): void {
        const hook = this.get(owner, id) as SimWebhook & { delivery: DeliveryState };
        this.quiesce(hook);
        this.hooks.delete(id);
    }

    resetSharedSecret(owner: string, id: number): string {
        const hook = this.get(owner, id);
        hook.sharedSecret = newSecret();
        hook.modifiedAt = this.clock();
        return hook.sharedSecret;
    }

    /** `PUT /webhooks/{id}`: rename, a new callback URL, and `enabled`: true verifies before answering. */
    async update(owner: string, id: number, change: { name?: string; callbackUrl?: string; enabled?: boolean }): Promise<SimWebhook> {
        const hook = this.get(owner, id) as SimWebhook & { delivery: DeliveryState };
        if (change.enabled === true && hook.status === "DISABLED_ADMINISTRATIVE") throw apiErrors.webhookDisabledBySmartsheet();
        if (change.enabled === true && hook.status === "DISABLED_APP_REVOKED") throw apiErrors.webhookAppRevoked();
        if (change.name !== undefined) hook.name = change.name;
        const urlChanged = change.callbackUrl !== undefined && change.callbackUrl !== hook.callbackUrl;
        if (change.callbackUrl !== undefined) hook.callbackUrl = change.callbackUrl;
        hook.modifiedAt = this.clock();
        if (change.enabled === false) {
            this.disable(hook, "DISABLED_BY_OWNER", "Disabled by the owner.");
        } else if (change.enabled === true || (urlChanged && hook.enabled)) {
            this.quiesce(hook);
            const verified = await this.verify(hook);
            if (verified) this.enable(hook);
            else this.disable(hook, "DISABLED_VERIFICATION_FAILED", "The callback URL did not answer the verification challenge.");
        }
        return hook;
    }

    /** Changes made to a sheet by one write, stamped; each enabled webhook on the sheet collects them. */
    publish(sheetId: number, events: WebhookEvent[]): void {
        if (events.length === 0) return;
        const enabled = this.list().filter((hook) => hook.enabled && hook.scopeObjectId === sheetId).sort((a, b) => a.seq - b.seq);
        // Identical webhooks (same sheet, same callback URL) fire once, for the oldest enabled one.
        const seen = new Set<string>();
        for (const hook of enabled) {
            const key = hook.callbackUrl;
            if (seen.has(key)) continue;
            seen.add(key);
            const state = (hook as SimWebhook & { delivery: DeliveryState }).delivery;
            state.pending.push(...events);
            if (!state.windowTimer && !state.windowClosed) {
                state.windowTimer = this.after(this.timing().debounceMs, () => {
                    state.windowTimer = undefined;
                    state.windowClosed = true;
                    void this.pump(hook as SimWebhook & { delivery: DeliveryState });
                });
            }
        }
    }

    /** A sheet a webhook watches is gone: the webhook is disabled, and says so in a status callback. */
    checkScopes(sheetExists: (sheetId: number) => boolean): void {
        for (const hook of this.hooks.values()) {
            if (hook.enabled && !sheetExists(hook.scopeObjectId)) {
                this.setStatus(hook.id, "DISABLED_SCOPE_INACCESSIBLE");
            }
        }
    }

    /**
     * Smartsheet changes a webhook's status behind its owner's back (admin API): any disabled
     * status, or ENABLED again (access restored). Moving to or from DISABLED_SCOPE_INACCESSIBLE
     * sends a status callback (`newWebhookStatus`), as Smartsheet does when it disables or
     * re-enables a webhook by itself.
     */
    setStatus(id: number, status: WebhookStatus): SimWebhook {
        const hook = this.hooks.get(id);
        if (!hook) throw apiErrors.notFound();
        const wasScopeInaccessible = hook.status === "DISABLED_SCOPE_INACCESSIBLE";
        if (status === "ENABLED") this.enable(hook);
        else this.disable(hook, status, detailsOf(status));
        if (status === "DISABLED_SCOPE_INACCESSIBLE" || (status === "ENABLED" && wasScopeInaccessible)) {
            void this.sendStatusCallback(hook, status);
        }
        return hook;
    }

    deliveries(): WebhookDelivery[] {
        return this.log.map((entry) => ({ ...entry }));
    }

    /** Every webhook of every token, with its owner (admin view). */
    all(): SimWebhook[] {
        return this.list();
    }

    /** Forgets every webhook; timers stop and requests in flight are abandoned. */
    reset(): void {
        this.stop();
        this.hooks.clear();
        this.log.length = 0;
        this.faults.reset();
    }

    /** Stops every timer and abandons the requests in flight; nothing is delivered afterwards. */
    stop(): void {
        for (const timer of this.timers) clearTimeout(timer);
        this.timers.clear();
        for (const controller of this.inFlight) controller.abort();
        this.inFlight.clear();
        for (const hook of this.hooks.values()) {
            hook.delivery.generation += 1;
            hook.delivery.windowTimer = undefined;
            hook.delivery.busy = false;
        }
    }

    private enable(hook: SimWebhook & { delivery?: DeliveryState }): void {
        const state = (hook as SimWebhook & { delivery: DeliveryState }).delivery;
        this.quiesce(hook as SimWebhook & { delivery: DeliveryState });
        hook.enabled = true;
        hook.status = "ENABLED";
        delete hook.disabledDetails;
        hook.modifiedAt = this.clock();
        state.callbacksSinceVerification = 0;
    }

    /** Disabled: pending events are dropped (never delivered), the delivery in progress stops. */
    private disable(hook: SimWebhook, status: WebhookStatus, details: string): void {
        this.quiesce(hook as SimWebhook & { delivery: DeliveryState });
        hook.enabled = false;
        hook.status = status;
        hook.disabledDetails = details;
        hook.modifiedAt = this.clock();
    }

    /** Drops what was waiting and stops what is running for a webhook. */
    private quiesce(hook: SimWebhook & { delivery: DeliveryState }): void {
        const state = hook.delivery;
        state.generation += 1;
        state.pending = [];
        if (state.windowTimer) {
            clearTimeout(state.windowTimer);
            this.timers.delete(state.windowTimer);
        }
        state.windowTimer = undefined;
        state.windowClosed = false;
        state.busy = false;
        delete state.held;
    }

    /** Sends the collected events once the window has closed and no callback of this webhook is running. */
    private async pump(hook: SimWebhook & { delivery: DeliveryState }): Promise<void> {
        const state = hook.delivery;
        if (state.busy || !state.windowClosed || !hook.enabled) return;
        if (state.pending.length === 0) {
            state.windowClosed = false;
            return;
        }
        state.busy = true;
        state.windowClosed = false;
        const generation = state.generation;
        const events = state.pending.splice(0);
        try {
            await this.deliver(hook, events, generation);
        } finally {
            if (state.generation === generation) {
                state.busy = false;
                // Events that came while this callback ran: their window may have closed meanwhile.
                if (state.pending.length > 0 && !state.windowTimer) state.windowClosed = true;
                void this.pump(hook);
            }
        }
    }

    private async deliver(hook: SimWebhook & { delivery: DeliveryState }, events: WebhookEvent[], generation: number): Promise<void> {
        const state = hook.delivery;
        const timing = this.timing();
        if (state.callbacksSinceVerification >= timing.verifyEvery) {
            const verified = await this.verify(hook);
            if (state.generation !== generation) return;
            if (!verified) {
                this.disable(hook, "DISABLED_VERIFICATION_FAILED", "The callback URL did not answer the verification challenge.");
                return;
            }
            state.callbacksSinceVerification = 0;
        }
        const nonce = randomUUID();
        const body = JSON.stringify({
            nonce,
            timestamp: new Date(this.clock()).toISOString(),
            webhookId: hook.id,
            scope: "sheet",
            scopeObjectId: hook.scopeObjectId,
            events,
        });
        const fault = this.faults.take(hook.id);
        if (fault?.kind === "drop") {
            this.record({ webhookId: hook.id, kind: "event", status: null, retry: 0, nonce, fault: "drop" });
            state.callbacksSinceVerification += 1;
            return;
        }
        if (fault?.kind === "delay") {
            this.after(fault.delayMs, () => void this.sendOnce(hook, body, nonce, "delay"));
            state.callbacksSinceVerification += 1;
            return;
        }
        if (fault?.kind === "reorder") {
            state.held = body;
            state.callbacksSinceVerification += 1;
            return;
        }

        for (let retry = 0; ; retry++) {
            hook.stats.lastCallbackAttempt = this.clock();
            hook.stats.lastCallbackAttemptRetryCount = retry;
            const response = await this.postSigned(hook, body);
            if (state.generation !== generation) return;
            this.record({ webhookId: hook.id, kind: "event", status: response.status, retry, nonce, ...(fault ? { fault: fault.kind } : {}) });
            const status = response.status;
            if (status === 200) {
                hook.stats.lastSuccessfulCallback = this.clock();
                state.callbacksSinceVerification += 1;
                if (fault?.kind === "duplicate") await this.sendOnce(hook, body, nonce, "duplicate");
                const held = state.held;
                if (held !== undefined && state.generation === generation) {
                    delete state.held;
                    await this.sendOnce(hook, held, JSON.parse(held).nonce, "reorder");
                }
                return;
            }
            if (status !== null && ((status > 200 && status < 400) || status === 410)) {
                this.disable(hook, "DISABLED_CALLBACK_FAILED", `The callback URL answered ${status}; a webhook's callbacks must be answered 200.`);
                return;
            }
            if (retry >= timing.maxRetries) {
                this.disable(hook, "DISABLED_CALLBACK_FAILED", `The callback URL failed ${retry + 1} attempts (last: ${status ?? "no answer"}).`);
                return;
            }
            await this.wait(retry < 7 ? timing.retryBaseMs * 2 ** retry : timing.retryLongMs);
            if (state.generation !== generation) return;
        }
    }

    /** One signed attempt outside the retry loop (duplicates, delayed and reordered callbacks). */
    private async sendOnce(hook: SimWebhook, body: string, nonce: string, fault: WebhookFaultRule["kind"]): Promise<void> {
        if (!hook.enabled || !this.hooks.has(hook.id)) return;
        const response = await this.postSigned(hook, body);
        this.record({ webhookId: hook.id, kind: "event", status: response.status, retry: 0, nonce, fault });
    }

    private async sendStatusCallback(hook: SimWebhook, status: WebhookStatus): Promise<void> {
        const nonce = randomUUID();
        const body = JSON.stringify({
            nonce,
            timestamp: new Date(this.clock()).toISOString(),
            webhookId: hook.id,
            scope: "sheet",
            scopeObjectId: hook.scopeObjectId,
            newWebhookStatus: status,
        });
        const response = await this.postSigned(hook, body);
        this.record({ webhookId: hook.id, kind: "status", status: response.status, retry: 0, nonce });
    }

    /** The challenge: 200 with the value echoed in the Smartsheet-Hook-Response header or `smartsheetHookResponse`. */
    private async verify(hook: SimWebhook): Promise<boolean> {
        const challenge = randomUUID();
        const response = await this.post(hook, JSON.stringify({ challenge, webhookId: hook.id }), { "Smartsheet-Hook-Challenge": challenge });
        this.record({ webhookId: hook.id, kind: "verification", status: response.status, retry: 0 });
        if (response.status !== 200) return false;
        if (response.headers?.get("smartsheet-hook-response") === challenge) return true;
        try {
            return (JSON.parse(response.text ?? "") as { smartsheetHookResponse?: unknown } | null)?.smartsheetHookResponse === challenge;
        } catch {
            return false;
        }
    }

    /** An event or status callback, signed with the webhook's shared secret. */
    private postSigned(hook: SimWebhook, body: string): Promise<HookResponse> {
        return this.post(hook, body, { "Smartsheet-Hmac-SHA256": sign(hook.sharedSecret, body) });
    }

    private async post(hook: SimWebhook, body: string, headers: Record<string, string>): Promise<HookResponse> {
        const controller = new AbortController();
        this.inFlight.add(controller);
        const timer = setTimeout(() => controller.abort(), this.timing().callbackTimeoutMs);
        try {
            const response = await fetch(hook.callbackUrl, {
                method: "POST",
                headers: { "Content-Type": "application/json", "User-Agent": "Smartsheet-sim-webhooks", ...headers },
                body,
                redirect: "manual",
                signal: controller.signal,
            });
            const text = await response.text();
            return { status: response.status, headers: response.headers, text };
        } catch {
            return { status: null };
        } finally {
            clearTimeout(timer);
            this.inFlight.delete(controller);
        }
    }

    private wait(ms: number): Promise<void> {
        return new Promise((resolve) => this.after(ms, resolve));
    }

    /** A timer `stop()` clears (its callback then never runs). */
    private after(ms: number, run: () => void): NodeJS.Timeout {
        const timer = setTimeout(() => {
            this.timers.delete(timer);
            run();
        }, ms);
        this.timers.add(timer);
        return timer;
    }

    private record(entry: Omit<WebhookDelivery, "at">): void {
        this.log.push({ ...entry, at: new Date().toISOString() });
        if (this.log.length > MAX_DELIVERY_LOG) this.log.splice(0, this.log.length - MAX_DELIVERY_LOG);
    }
}

/** The hex HMAC-SHA256 of a callback's raw body with the webhook's shared secret (Smartsheet-Hmac-SHA256). */
export function sign(secret: string, body: string): string {
    return createHmac("sha256", secret).update(body, "utf8").digest("hex");
}

/** The user a token acts as: a stable 16-digit id per token. */
export function userIdOf(token: string): number {
    const digest = createHash("sha256").update(token).digest();
    return 1_000_000_000_000_000 + (digest.readUIntBE(0, 6) % 8_000_000_000_000_000);
}

function newSecret(): string {
    // Smartsheet's look like "216ejjzdnq17mq1q8xs7d4hu8b": 26 lowercase letters and digits.
    return [...randomBytes(26)].map((byte) => "abcdefghijklmnopqrstuvwxyz0123456789"[byte % 36]).join("");
}

function detailsOf(status: WebhookStatus): string {
    switch (status) {
        case "DISABLED_ADMINISTRATIVE":
            return "Disabled by Smartsheet support.";
        case "DISABLED_APP_REVOKED":
            return "The third-party app's access was revoked.";
        case "DISABLED_SCOPE_INACCESSIBLE":
            return "The webhook's owner can no longer reach the scope object.";
        case "DISABLED_CALLBACK_FAILED":
            return "Callbacks failed.";
        case "DISABLED_VERIFICATION_FAILED":
            return "The callback URL did not answer the verification challenge.";
        case "DISABLED_BY_OWNER":
            return "Disabled by the owner.";
        default:
            return "Not verified.";
    }
}
