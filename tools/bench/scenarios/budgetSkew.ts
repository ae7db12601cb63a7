import { BudgetTable } from "../../../src/shared/smartsheet/BudgetTable";
import { RateLimiter, systemClock, type Clock } from "../../../src/shared/smartsheet/RateLimiter";
import { SharedTokenBudget } from "../../../src/shared/smartsheet/SharedTokenBudget";
import { createTableClient } from "../../../src/shared/storage";
import { startSimulator, type CallLogEntry } from "../../smartsheet-sim";
import type { Measured } from "../figures";
import { COMPRESSED_RATE_LIMIT } from "../timings";
import { mostInAnyWindow } from "../windows";

/** The clock differences measured, in production's seconds (the run compresses them with the window). */
export const SKEWS_SECONDS = [0, 0.75, 2, 8, 20, 30] as const;
/** Production's minute over the compressed window: 4. */
const COMPRESSION = 60_000 / COMPRESSED_RATE_LIMIT.windowMs;
/** Three of production's minutes, compressed. */
const RUN_MS = (3 * 60_000) / COMPRESSION;
/** Callers per instance sending one request after another (a busy host's activities). */
const CALLERS = 8;
const INSTANCES = ["A", "B"] as const;

export interface SkewPoint {
    skewSeconds: number;
    /** Accepted requests in the busiest rolling window of the simulator's log ÷ the limit. */
    busiestWindow: number;
    busiestWindowRequests: number;
    /** Each instance's part of the accepted requests, A (on time) then B (its clock ahead by the skew). */
    shares: number[];
    answered429: number;
    requests: number;
}

/**
 * Two busy instances on one token, the second's clock ahead of the first's by each of
 * SKEWS_SECONDS, against the simulator's rate limit: each instance is the app's own
 * SharedTokenBudget and RateLimiter on a BudgetTable in Azurite (whose clock is the machine's, as
 * a storage account's is the true time), its callers sending a cheap GET after another for three
 * minutes. Time is compressed four times, as in the other rate-limit scenarios: a 15 s window of
 * 300, so 0.375 s slices, and each skew ÷ 4, which keeps the skew's ratio to a slice (what the
 * budget's guarantee depends on); the storage round trips are not compressed (a few ms on
 * Azurite), so the run is harder on the budget than production. The skews run side by side, each
 * on a simulator and a token of its own. The busiest window and the shares come from each
 * simulator's call log (the request's instance rides in its query string), not from the budget.
 */
export async function budgetSkew(storage: string): Promise<Measured> {
    const tableName = `budgetskew${Date.now().toString(36)}`;
    await createTableClient(storage, tableName).createTable();
    const points = await Promise.all(SKEWS_SECONDS.map((skewSeconds) => measureSkew(storage, tableName, skewSeconds)));
    return {
        figures: {
            budgetSkewBusiestWindow: Math.max(...points.map((point) => point.busiestWindow)),
            budgetSkewLeastShare: Math.min(...points.flatMap((point) => point.shares)),
        },
        details: { budgetSkew: points },
        notes: points.map(
            (point) =>
                `budget, two instances ${point.skewSeconds} s apart (÷ ${COMPRESSION} in the run): busiest window ${point.busiestWindowRequests} ` +
                `(${point.busiestWindow.toFixed(2)} of the limit), shares ${point.shares.map((share) => share.toFixed(2)).join(" / ")}, ` +
                `${point.answered429} answered 429 of ${point.requests}`,
        ),
    };
}

async function measureSkew(storage: string, tableName: string, skewSeconds: number): Promise<SkewPoint> {
    const token = `bench-skew-${skewSeconds}`;
    const sim = await startSimulator({ port: 0, tokens: [token], rateLimit: COMPRESSED_RATE_LIMIT, seed: false, latencyMs: { getSheet: 3 } });
    try {
        const end = Date.now() + RUN_MS;
        await Promise.all(
            INSTANCES.map(async (name, index) => {
                const skewMs = index === 0 ? 0 : (skewSeconds * 1000) / COMPRESSION;
                const clock: Clock = { now: () => Date.now() + skewMs, sleep: systemClock.sleep };
                const budget = new SharedTokenBudget({
                    accessToken: token,
                    limit: COMPRESSED_RATE_LIMIT.requests,
                    windowMs: COMPRESSED_RATE_LIMIT.windowMs,
                    leaseSize: 5,
                    fallbackInstances: 4,
                    rows: new BudgetTable(createTableClient(storage, tableName, { retryOptions: { maxRetries: 0 } })),
                    clock,
                });
                const limiter = new RateLimiter(COMPRESSED_RATE_LIMIT.requests, COMPRESSED_RATE_LIMIT.windowMs, clock, budget);
                const caller = async () => {
                    while (Date.now() < end) {
                        await limiter.acquire();
                        if (Date.now() >= end) return;
                        const answer = await fetch(`${sim.baseUrl}sheets/1?instance=${name}`, { headers: { Authorization: `Bearer ${token}` } });
                        await answer.arrayBuffer();
                        if (answer.status === 429) limiter.pauseFor(2_000 / COMPRESSION);
                    }
                };
                await Promise.all(Array.from({ length: CALLERS }, caller));
            }),
        );
        return pointOf(skewSeconds, sim.core.calls().log);
    } finally {
        await sim.close();
    }
}

function pointOf(skewSeconds: number, log: readonly CallLogEntry[]): SkewPoint {
    const accepted = log.filter((call) => call.status !== 429);
    const busiest = mostInAnyWindow(accepted.map((call) => Date.parse(call.at)), COMPRESSED_RATE_LIMIT.windowMs);
    return {
        skewSeconds,
        busiestWindow: busiest / COMPRESSED_RATE_LIMIT.requests,
        busiestWindowRequests: busiest,
        shares: INSTANCES.map((name) => accepted.filter((call) => call.query === `instance=${name}`).length / Math.max(1, accepted.length)),
        answered429: log.length - accepted.length,
        requests: log.length,
    };
}
