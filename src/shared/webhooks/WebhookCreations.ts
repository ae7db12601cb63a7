import { RestError, type TableClient } from "@azure/data-tables";

const PARTITION = "webhook-creation";

/**
 * Who may create a site's webhook now: Smartsheet's create has no idempotency key, so of two
 * instances (or a run and its retry) that both find none, only the one holding the claim creates;
 * the other adopts it on its next run. A claim lapses after `lapseMs` (its run may have died).
 */
export class WebhookCreations {
    constructor(private readonly table: TableClient) {}

    async claim(site: string, now: Date, lapseMs: number): Promise<boolean> {
        let current: { etag: string; claimedAt?: unknown } | undefined;
        try {
            current = await this.table.getEntity(PARTITION, site);
        } catch (error) {
            if (!(error instanceof RestError && error.statusCode === 404)) throw error;
        }
        if (current && typeof current.claimedAt === "string" && Date.parse(current.claimedAt) > now.getTime() - lapseMs) return false;
        const entity = { partitionKey: PARTITION, rowKey: site, kind: "webhookCreation", claimedAt: now.toISOString() };
        try {
            if (current) await this.table.updateEntity(entity, "Replace", { etag: current.etag });
            else await this.table.createEntity(entity);
            return true;
        } catch (error) {
            if (error instanceof RestError && (error.statusCode === 409 || error.statusCode === 412)) return false;
            throw error;
        }
    }

    /** Gives the claim back: Smartsheet refused the create, so nothing can be adopted and the next run may try again at once. */
    async release(site: string): Promise<void> {
        await this.table.deleteEntity(PARTITION, site).catch(() => undefined);
    }
}
