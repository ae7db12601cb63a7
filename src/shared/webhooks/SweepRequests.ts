import { RestError, type TableClient } from "@azure/data-tables";
import { z } from "zod";

const PARTITION = "webhook-sweep";
const WRITE_ATTEMPTS = 4;

/** The key-only message that asks for one site's intake sweep: the site, and the slot it coalesces. */
export const SweepRequestMessage = z.object({ v: z.literal(1), site: z.string().min(1).max(40), slot: z.number().int().nonnegative() });
export type SweepRequestMessage = z.infer<typeof SweepRequestMessage>;

const RequestedSlot = z.object({ slot: z.number().int().nonnegative() });

export interface SweepRequestQueue {
    /** Sends the message, visible to the trigger only after `delaySeconds`. */
    send(message: SweepRequestMessage, delaySeconds: number): Promise<void>;
}

/**
 * "Sweep this site's intake now", coalesced: the callbacks of one site within one time slot send
 * one message, made visible at the slot's end, so that the sweep it starts reads every change the
 * slot's callbacks announced. One row per site in the Jobs table holds the last slot asked for,
 * written conditionally: of two instances receiving callbacks in one slot, one sends.
 */
export class SweepRequests {
    constructor(
        private readonly table: TableClient,
        private readonly queue: SweepRequestQueue,
        private readonly slotMs: number,
        private readonly clock: () => number,
    ) {}

    /** `requested`: this call sent the slot's message; `coalesced`: one was sent for the slot already. Throws when none could be sent. */
    async request(site: string): Promise<"requested" | "coalesced"> {
        const now = this.clock();
        const slot = Math.floor(now / this.slotMs);
        for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
            const stored = await this.read(site);
            if (stored && stored.slot >= slot) return "coalesced";
            const written = await this.claim(site, slot, stored?.etag);
            if (!written) continue;
            try {
                await this.queue.send({ v: 1, site, slot }, Math.max(1, Math.ceil(((slot + 1) * this.slotMs - now) / 1000)));
            } catch (error) {
                // Give the slot back, so that the callback Smartsheet sends again (it retries a 5xx) is not coalesced into nothing.
                if (stored) await this.table.updateEntity({ partitionKey: PARTITION, rowKey: site, slot: stored.slot }, "Replace", { etag: written }).catch(() => undefined);
                else await this.table.deleteEntity(PARTITION, site, { etag: written }).catch(() => undefined);
                throw error;
            }
            return "requested";
        }
        throw new Error(`The sweep request of site ${site} kept changing under ${WRITE_ATTEMPTS} conditional writes; Smartsheet's retry of the callback will ask again`);
    }

    private async read(site: string): Promise<{ slot: number; etag: string } | undefined> {
        try {
            const entity = await this.table.getEntity(PARTITION, site);
            const parsed = RequestedSlot.safeParse(entity);
            return { slot: parsed.success ? parsed.data.slot : 0, etag: entity.etag };
        } catch (error) {
            if (error instanceof RestError && error.statusCode === 404) return undefined;
            throw error;
        }
    }

    /** The new ETag, or `undefined` when another instance wrote first. */
    private async claim(site: string, slot: number, etag: string | undefined): Promise<string | undefined> {
        const entity = { partitionKey: PARTITION, rowKey: site, kind: "webhookSweepRequest", slot };
        try {
            const answer = etag === undefined ? await this.table.createEntity(entity) : await this.table.updateEntity(entity, "Replace", { etag });
            return answer.etag;
        } catch (error) {
            if (error instanceof RestError && (error.statusCode === 409 || error.statusCode === 412)) return undefined;
            throw error;
        }
    }
}
