import { RestError, type TableClient } from "@azure/data-tables";
import { z } from "zod";

const PARTITION = "webhook-health";
const WRITE_ATTEMPTS = 5;

/**
 * How long after a row changed its webhook sweep may still be on its way (Smartsheet's one-minute
 * debounce, the coalescing slot, the queue): a timer sweep that finds a row changed longer ago than
 * this found something no webhook announced.
 */
export const WEBHOOK_GRACE_MS = 3 * 60_000;

const WeekCount = z.object({ found: z.number().int().nonnegative() });

/** One site's week: how many rows the timer sweeps found that no webhook had announced. */
export interface WeekFigure {
    site: string;
    /** ISO week, e.g. 2026-W49. */
    week: string;
    found: number;
}

/**
 * The receiver's health figure, per site and ISO week in the Jobs table: what the timer sweeps
 * (the safety net) found that no webhook announced. Healthy is (almost) zero; a jump means the
 * webhook is off or callbacks are lost.
 */
export class WebhookHealth {
    constructor(private readonly table: TableClient) {}

    /** Adds `found` to the site's week (a conditional read-modify-write: no count is lost to a concurrent sweep). */
    async add(site: string, at: Date, found: number): Promise<void> {
        if (found <= 0) return;
        const rowKey = `${site}|${isoWeek(at)}`;
        for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
            const current = await this.read(rowKey);
            const entity = { partitionKey: PARTITION, rowKey, kind: "webhookHealth", site, week: isoWeek(at), found: (current?.found ?? 0) + found };
            try {
                if (current) await this.table.updateEntity(entity, "Replace", { etag: current.etag });
                else await this.table.createEntity(entity);
                return;
            } catch (error) {
                if (error instanceof RestError && (error.statusCode === 409 || error.statusCode === 412)) continue;
                throw error;
            }
        }
        throw new Error(`The webhook health count of site ${site} kept changing under ${WRITE_ATTEMPTS} conditional writes`);
    }

    /** The last `weeks` ISO weeks up to `at`, per site, oldest first; a week without finds counts 0. */
    async weeks(sites: readonly string[], at: Date, weeks = 4): Promise<WeekFigure[]> {
        const figures: WeekFigure[] = [];
        for (const site of sites) {
            for (let back = weeks - 1; back >= 0; back--) {
                const week = isoWeek(new Date(at.getTime() - back * 7 * 86_400_000));
                figures.push({ site, week, found: (await this.read(`${site}|${week}`))?.found ?? 0 });
            }
        }
        return figures;
    }

    private async read(rowKey: string): Promise<{ found: number; etag: string } | undefined> {
        try {
            const entity = await this.table.getEntity(PARTITION, rowKey);
            const parsed = WeekCount.safeParse(entity);
            return { found: parsed.success ? parsed.data.found : 0, etag: entity.etag };
        } catch (error) {
            if (error instanceof RestError && error.statusCode === 404) return undefined;
            throw error;
        }
    }
}

/** The ISO 8601 week of a UTC instant: `2026-W49`. */
export function isoWeek(at: Date): string {
    const day = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
    const weekday = day.getUTCDay() || 7;
    day.setUTCDate(day.getUTCDate() + 4 - weekday);
    const yearStart = Date.UTC(day.getUTCFullYear(), 0, 1);
    const week = Math.ceil(((day.getTime() - yearStart) / 86_400_000 + 1) / 7);
    return `${day.getUTCFullYear()}-W${String(week).padStart(2, "0")}`;
}
