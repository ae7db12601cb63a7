import type { Webhook } from "../smartsheet/model";
import type { SmartsheetPort } from "../smartsheet/SmartsheetPort";
import type { Site } from "../sites/Sites";
import { webhookNameFor } from "./webhookNames";

/** One of the app's webhooks: whose intake sheet it watches, and the secret its callbacks are signed with (never logged). */
export interface KnownWebhook {
    readonly id: number;
    readonly site: Site;
    readonly secret: string;
}

/**
 * The app's webhooks as this process knows them, by id: the only thing a callback is trusted for
 * is which site's intake sheet changed, and only when its id is here and its signature matches
 * the secret here. Held in memory only; filled by the keeper, and read afresh from Smartsheet when
 * a callback names an id not known yet (a webhook made by another instance) or fails its
 * signature (a secret reset) — at most once per `refreshEveryMs`, so that forged callbacks cannot
 * spend the sites' rate budget.
 */
export class WebhookDirectory {
    private readonly byId = new Map<number, KnownWebhook>();
    private lastReadAt = Number.NEGATIVE_INFINITY;
    private reading?: Promise<void>;

    constructor(
        private readonly sites: readonly Site[],
        private readonly clock: () => number,
        private readonly refreshEveryMs = 30_000,
    ) {}

    get(webhookId: number): KnownWebhook | undefined {
        return this.byId.get(webhookId);
    }

    /** The id of the webhook known for `site`, if any. */
    idOf(site: string): number | undefined {
        for (const known of this.byId.values()) if (known.site.name === site) return known.id;
        return undefined;
    }

    /** The keeper's webhook of `site`, with its secret; forgets any other the site had. */
    remember(site: Site, hook: Pick<Webhook, "id" | "sharedSecret">): void {
        for (const [id, known] of this.byId) if (known.site.name === site.name && id !== hook.id) this.byId.delete(id);
        if (hook.sharedSecret) this.byId.set(hook.id, { id: hook.id, site, secret: hook.sharedSecret });
    }

    forget(webhookId: number): void {
        this.byId.delete(webhookId);
    }

    /**
     * Reads every webhook site's webhooks again (one listing per token, and a read of each one
     * whose secret the listing left out); `false` without a call when the last read was less than
     * `refreshEveryMs` ago. A site whose read fails keeps what was known of it.
     */
    async refresh(): Promise<boolean> {
        if (this.reading) {
            await this.reading;
            return true;
        }
        if (this.clock() - this.lastReadAt < this.refreshEveryMs) return false;
        this.lastReadAt = this.clock();
        this.reading = this.readAll().finally(() => (this.reading = undefined));
        await this.reading;
        return true;
    }

    private async readAll(): Promise<void> {
        const listings = new Map<SmartsheetPort, Promise<Webhook[]>>();
        for (const site of this.sites) {
            if (!site.webhookBaseUrl) continue;
            let listing = listings.get(site.smartsheet);
            if (!listing) listings.set(site.smartsheet, (listing = site.smartsheet.listWebhooks()));
            try {
                const name = webhookNameFor(site, site.webhookBaseUrl);
                const ours = (await listing).filter((hook) => hook.name === name && hook.scopeObjectId === site.intakeSheetId && hook.enabled);
                for (const hook of ours) {
                    const secret = hook.sharedSecret ?? (await site.smartsheet.getWebhook(hook.id)).sharedSecret;
                    if (secret) this.byId.set(hook.id, { id: hook.id, site, secret });
                }
                for (const [id, known] of this.byId) if (known.site.name === site.name && !ours.some((hook) => hook.id === id)) this.byId.delete(id);
            } catch {
                // Unreadable now: what was known of the site stays, and the next refresh tries again.
            }
        }
    }
}
