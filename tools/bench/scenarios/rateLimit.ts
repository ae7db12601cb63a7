import type { JobRow } from "../../../src/shared/jobs/JobRow";
import type { CallLogEntry } from "../../smartsheet-sim";
import { BenchStack, productRequests, SMARTSHEET_LATENCY_MS } from "../benchStack";
import type { Measured } from "../figures";
import { COMPRESSED_PRODUCTION, COMPRESSED_RATE_LIMIT } from "../timings";

/** Smartsheet calls a product is allowed in the drain's deadline: three times the happy path at the full rate, plus a margin. */
const DEADLINE_CALLS_PER_PRODUCT = 3 * 26;
const DEADLINE_MARGIN_MS = 120_000;

export interface Drain {
    /** Mean over the full windows from the first call to the last: accepted requests ÷ the limit. */
    use: number;
    share429: number;
    jobsNotDone: number;
    /** Jobs not done whose last error was the rate limit. */
    jobsNotDoneBy429: number;
    takeOvers: number;
    parks: number;
    requests: number;
    /** What the reaper saw across its runs: its most stale jobs at once, and of those the most it left waiting in a backlog. */
    reaper: { runs: number; mostStale: number; mostBacklogged: number };
    windows: number[];
    seconds: number;
    residentMb: number[];
}

/**
 * `products` requests approved at once and swept together, drained by `hosts` host processes on
 * one task hub and one Smartsheet token, against the simulator's limit with time compressed
 * four times (300 requests in any 15 s, production's timings ÷ 4, the app's pacing set to match).
 */
export async function drainAtRateLimit(storage: string, products: number, hosts: number): Promise<Drain> {
    const stack = await BenchStack.start({
        storage,
        hosts,
        settings: COMPRESSED_PRODUCTION,
        simulator: { latencyMs: SMARTSHEET_LATENCY_MS, rateLimit: COMPRESSED_RATE_LIMIT },
    });
    const reaper = { runs: 0, mostStale: 0, mostBacklogged: 0 };
    for (const host of stack.hosts) {
        host.onLine(/reaper: \d+ active jobs, \d+ without progress/, (line) => {
            const [, stale, backlogged] = /(\d+) without progress .*?, (\d+) waiting in a backlog/.exec(line) ?? [];
            reaper.runs += 1;
            reaper.mostStale = Math.max(reaper.mostStale, Number(stale ?? 0));
            reaper.mostBacklogged = Math.max(reaper.mostBacklogged, Number(backlogged ?? 0));
        });
    }
    try {
        const keys = await stack.addRequests(productRequests(`RL${hosts}`, products));
        stack.sim.core.resetCalls();
        const started = Date.now();
        await stack.sweep();
        const perSecond = COMPRESSED_RATE_LIMIT.requests / (COMPRESSED_RATE_LIMIT.windowMs / 1000);
        const rows = await stack.waitUntilSettled(keys, (products * DEADLINE_CALLS_PER_PRODUCT * 1000) / perSecond + DEADLINE_MARGIN_MS);
        const seconds = (Date.now() - started) / 1000;
        const log = stack.callLog();
        const windows = fullWindows(log, COMPRESSED_RATE_LIMIT.windowMs);
        const notDone = rows.filter((row) => row.state !== "done");
        return {
            use: windows.reduce((sum, accepted) => sum + accepted, 0) / windows.length / COMPRESSED_RATE_LIMIT.requests,
            share429: log.filter((call) => call.status === 429).length / log.length,
            jobsNotDone: notDone.length,
            jobsNotDoneBy429: notDone.filter(byRateLimit).length,
            takeOvers: rows.filter((row) => row.attempt > 1 || row.recoveries > 0).length,
            parks: rows.filter((row) => row.state === "parked").length,
            requests: log.length,
            reaper,
            windows,
            seconds,
            residentMb: stack.hosts.map((host) => host.residentMb()),
        };
    } finally {
        await stack.stop();
    }
}

/** Accepted requests in each whole window from the first call on (the last, partial window left out). */
function fullWindows(log: readonly CallLogEntry[], windowMs: number): number[] {
    const times = log.filter((call) => call.status !== 429).map((call) => Date.parse(call.at));
    if (times.length === 0) return [];
    const first = Math.min(...times);
    const count = Math.floor((Math.max(...times) - first) / windowMs);
    const windows = new Array<number>(Math.max(1, count)).fill(0);
    for (const at of times) {
        const window = Math.floor((at - first) / windowMs);
        if (window < windows.length) windows[window]! += 1;
    }
    return windows;
}

function byRateLimit(row: JobRow): boolean {
    return /429|rate limit/i.test(`${row.lastError ?? ""} ${row.parkReason ?? ""}`);
}

export async function rateLimit(storage: string, products: number): Promise<Measured> {
    const drain = await drainAtRateLimit(storage, products, 1);
    return {
        figures: {
            rateLimitUse: drain.use,
            rateLimit429Share: drain.share429,
            rateLimitJobsNotDone: drain.jobsNotDone,
            rateLimitTakeOvers: drain.takeOvers,
            rateLimitParks: drain.parks,
            rssMbAfter60: drain.residentMb[0]!,
        },
        details: {
            rateLimitRequests: drain.requests,
            rateLimitWindows: drain.windows,
            rateLimitSeconds: drain.seconds,
            rateLimitJobsNotDoneBy429: drain.jobsNotDoneBy429,
            rateLimitReaperMostStale: drain.reaper.mostStale,
            rateLimitReaperMostBacklogged: drain.reaper.mostBacklogged,
        },
        notes: [describe("one host", products, drain)],
    };
}

export async function scaleOut(storage: string, products: number): Promise<Measured> {
    const drain = await drainAtRateLimit(storage, products, 2);
    return {
        figures: { scaleOutRateLimitUse: drain.use, scaleOut429Share: drain.share429, scaleOutJobsNotDone: drain.jobsNotDone },
        details: {
            scaleOutRequests: drain.requests,
            scaleOutWindows: drain.windows,
            scaleOutSeconds: drain.seconds,
            scaleOutJobsNotDoneBy429: drain.jobsNotDoneBy429,
            scaleOutTakeOvers: drain.takeOvers,
            scaleOutParks: drain.parks,
            scaleOutReaperMostStale: drain.reaper.mostStale,
            scaleOutReaperMostBacklogged: drain.reaper.mostBacklogged,
        },
        notes: [describe("two hosts", products, drain)],
    };
}

function describe(hosts: string, products: number, drain: Drain): string {
    return (
        `rate limit, ${hosts}: ${products} products in ${drain.seconds.toFixed(0)} s, ${drain.requests} requests, ` +
        `accepted per ${COMPRESSED_RATE_LIMIT.windowMs / 1000} s window (limit ${COMPRESSED_RATE_LIMIT.requests}): ${drain.windows.join(" ")}; ` +
        `${drain.takeOvers} take-overs, ${drain.parks} parks, ${drain.jobsNotDone} not done (${drain.jobsNotDoneBy429} by 429); ` +
        `${drain.reaper.runs} reaper runs saw at most ${drain.reaper.mostStale} jobs without progress, ${drain.reaper.mostBacklogged} of them waiting in a backlog`
    );
}
