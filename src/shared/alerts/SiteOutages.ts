import type { TableClient } from "@azure/data-tables";
import { z } from "zod";
import { afterFailure, type AfterFailure, type AlertFailure, type AlertRetryPolicy } from "./delivery";
import { storageErrorStatus } from "../storage";

/** The Jobs table partition that remembers each site's open outage, one entity per site and kind of run. */
const OUTAGES = "site-outage";

/** How long a run's claim to send an outage's alert holds: longer than one alert may take (its 10 s timeout). */
const OUTAGE_CLAIM_MS = 60_000;

const Timestamp = z.iso.datetime();

/** A site's open outage as stored: since when, why, and where its two alerts (failed, then recovered) stand. */
const Outage = z.object({
    site: z.string(),
    /** The kind of run that fails for the site (`intake sweep`, `reaper`, `reconciliation`): each has its own outage. */
    runKind: z.string(),
    /** The run that failed first, and when. */
    run: z.string(),
    since: Timestamp,
    reason: z.string(),
    /** `site.failed`: owed, told (sent, or no webhook), or given up. */
    failedAlert: z.enum(["owed", "told", "givenUp"]),
    /** Set once the site ran again while its failure had been told: the `site.recovered` alert is owed. */
    recoveredAt: Timestamp.optional(),
    recoveredBy: z.string().optional(),
    /** Failed tries of the alert owed now, and when the next may be made. */
    tries: z.number().int().min(0),
    retryAt: Timestamp.optional(),
    claimedAt: Timestamp.optional(),
    claimedBy: z.string().optional(),
});
type Outage = z.infer<typeof Outage>;

interface Stored {
    outage: Outage;
    etag: string;
}

/** What a run is to do about an outage's alert: send it (it holds the claim), or nothing. */
export type OutageTurn = { send: "site.failed" | "site.recovered"; outage: Outage } | undefined;

/**
 * Each site's open outage, in its own partition of the Jobs table, every write conditional on
 * the ETag read: of runs at once (two instances, an overlapping sweep) one sends an outage's
 * alert. `site.failed` is sent once per outage (tried again with back-off while it fails in a
 * way that may pass), and `site.recovered` once the site runs again, if its failure was told.
 */
export class SiteOutages {
    constructor(
        private readonly table: TableClient,
        private readonly policy: AlertRetryPolicy,
    ) {}

    /**
     * A run failed for the site: opens its outage (or notes the reason on the open one). Returns
     * the alert this run is to send: `site.failed` when it is owed, due, and nobody else is at it.
     */
    async failed(site: string, run: string, reason: string, now: Date, by: string): Promise<OutageTurn> {
        const runKind = runKindOf(run);
        const stored = await this.read(site, runKind);
        let outage: Outage;
        if (!stored) {
            outage = { site, runKind, run, since: now.toISOString(), reason, failedAlert: "owed", tries: 0 };
        } else if (stored.outage.recoveredAt !== undefined) {
            // It failed again before its recovery was told: the same outage goes on, nothing new to say.
            outage = { ...stored.outage, reason, recoveredAt: undefined, recoveredBy: undefined, tries: stored.outage.failedAlert === "owed" ? stored.outage.tries : 0, retryAt: undefined };
        } else {
            outage = { ...stored.outage, reason };
        }
        const sends = outage.failedAlert === "owed" && this.due(outage, now);
        if (sends) outage = { ...outage, claimedAt: now.toISOString(), claimedBy: by };
        const written = await this.write(outage, stored?.etag);
        return written && sends ? { send: "site.failed", outage } : undefined;
    }

    /**
     * A run succeeded for the site: one point read when no outage is open. An open one whose
     * failure was never told closes silently (returned as `closed`); one whose failure was told
     * owes `site.recovered`, which this run is to send when it is due and nobody else is at it.
     */
    async succeeded(site: string, run: string, now: Date, by: string): Promise<{ turn: OutageTurn; closed?: Outage }> {
        const stored = await this.read(site, runKindOf(run));
        if (!stored) return { turn: undefined };
        if (stored.outage.failedAlert !== "told") {
            await this.remove(stored);
            return { turn: undefined, closed: stored.outage };
        }
        let outage = stored.outage.recoveredAt
            ? stored.outage
            : { ...stored.outage, recoveredAt: now.toISOString(), recoveredBy: run, tries: 0, retryAt: undefined, claimedAt: undefined, claimedBy: undefined };
        const sends = this.due(outage, now);
        if (sends) outage = { ...outage, claimedAt: now.toISOString(), claimedBy: by };
        const written = await this.write(outage, stored.etag);
        return { turn: written && sends ? { send: "site.recovered", outage } : undefined };
    }

    /**
     * The answer to the alert a run claimed: told, or a failed try (tried again later, or given
     * up). A told recovery, or a given-up one, closes the outage. Returns what follows a failed
     * try, once recorded; nothing when another run replaced the claim.
     */
    async answered(claimed: Outage, by: string, failure: AlertFailure | undefined, now: Date): Promise<AfterFailure | undefined> {
        const stored = await this.read(claimed.site, claimed.runKind);
        if (!stored || stored.outage.claimedBy !== by) return undefined;
        const recovering = stored.outage.recoveredAt !== undefined;
        const next = failure ? afterFailure(failure, stored.outage.tries + 1, now, this.policy) : undefined;
        if (recovering && (!next || "givenUp" in next)) {
            await this.remove(stored);
            return next;
        }
        const released = { ...stored.outage, claimedAt: undefined, claimedBy: undefined };
        const outage: Outage = !next
            ? { ...released, failedAlert: "told", tries: 0, retryAt: undefined }
            : "givenUp" in next
              ? { ...released, failedAlert: "givenUp", tries: next.givenUp.tries, retryAt: undefined }
              : { ...released, tries: next.tries, retryAt: next.retryAt };
        return (await this.write(outage, stored.etag)) ? next : undefined;
    }

    /** The outages open now, for ops' eyes and tests. */
    async open(): Promise<Outage[]> {
        const found: Outage[] = [];
        for await (const entity of this.table.listEntities({ queryOptions: { filter: `PartitionKey eq '${OUTAGES}'` } })) found.push(Outage.parse(entity));
        return found;
    }

    private due(outage: Outage, now: Date): boolean {
        if (outage.claimedAt !== undefined && now.getTime() - Date.parse(outage.claimedAt) < OUTAGE_CLAIM_MS) return false;
        return outage.retryAt === undefined || Date.parse(outage.retryAt) <= now.getTime();
    }

    private async read(site: string, runKind: string): Promise<Stored | undefined> {
        try {
            const entity = await this.table.getEntity<Record<string, unknown>>(OUTAGES, rowKeyOf(site, runKind));
            return { outage: Outage.parse(entity), etag: entity.etag };
        } catch (error) {
            if (storageErrorStatus(error) === 404) return undefined;
            throw error;
        }
    }

    /** False when another run wrote first (it decides). */
    private async write(outage: Outage, etag: string | undefined): Promise<boolean> {
        const entity = { partitionKey: OUTAGES, rowKey: rowKeyOf(outage.site, outage.runKind), ...withoutUndefined(outage) };
        try {
            if (etag) await this.table.updateEntity(entity, "Replace", { etag });
            else await this.table.createEntity(entity);
            return true;
        } catch (error) {
            if (storageErrorStatus(error) === 409 || storageErrorStatus(error) === 412) return false;
            throw error;
        }
    }

    private async remove(stored: Stored): Promise<void> {
        await this.table.deleteEntity(OUTAGES, rowKeyOf(stored.outage.site, stored.outage.runKind), { etag: stored.etag }).catch((error: unknown) => {
            if (storageErrorStatus(error) !== 404 && storageErrorStatus(error) !== 412) throw error;
        });
    }
}

/** Runs of one kind share an outage: a full sweep's failure is the routine sweep's too; a reconciliation is one whatever its occasion. */
function runKindOf(run: string): string {
    return run.replace(/^full /, "").replace(/ \(.*\)$/, "");
}

function rowKeyOf(site: string, runKind: string): string {
    return `${site}:${runKind}`;
}

function withoutUndefined(value: object): Record<string, unknown> {
    return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined));
}

