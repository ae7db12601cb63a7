import { describe, expect, it } from "vitest";
import {
    RateLimiter,
    RateLimitWaitTooLongError,
    type BudgetAnswer,
    type Clock,
    type RequestBudget,
} from "../../src/shared/smartsheet/RateLimiter";
import { grantsSeenFrom, SLICES_PER_WINDOW, SLICES_SHARING_THE_LIMIT, sliceBudget, sliceCap } from "../../src/shared/smartsheet/SharedTokenBudget";
import { clockOffBeyond, StorageClockEstimate } from "../../src/shared/smartsheet/storageClock";

/** A clock whose sleeps advance time instantly and are recorded. */
function fakeClock(): Clock & { slept: number[] } {
    let now = 0;
    const slept: number[] = [];
    return {
        slept,
        now: () => now,
        sleep: async (ms) => {
            slept.push(ms);
            now += ms;
        },
    };
}

describe("RateLimiter", () => {
    it("lets `limit` requests through at once, then waits for the oldest to leave the window", async () => {
        const clock = fakeClock();
        const limiter = new RateLimiter(300, 60_000, clock);
        for (let i = 0; i < 300; i++) await limiter.acquire();
        expect(clock.slept).toEqual([]);
        await limiter.acquire();
        expect(clock.slept).toEqual([60_000]);
    });

    it("background requests take at most their share of the window, and the foreground still has the rest at once", async () => {
        const clock = fakeClock();
        const limiter = new RateLimiter(10, 1_000, clock, undefined, 0.5);
        for (let i = 0; i < 5; i++) await limiter.acquire(Infinity, "background");
        expect(clock.slept).toEqual([]);
        // The foreground is not held back by the background's five.
        for (let i = 0; i < 5; i++) await limiter.acquire();
        expect(clock.slept).toEqual([]);
        // A sixth background request waits for the first to leave the window.
        await limiter.acquire(Infinity, "background");
        expect(clock.slept).toEqual([1_000]);
    });

    it("a background request arriving while a foreground one waits goes after it, and gives up at its deadline", async () => {
        let now = 0;
        const sleeps: number[] = [];
        const wakeups: Array<() => void> = [];
        const clock: Clock = { now: () => now, sleep: (ms) => new Promise<void>((resolve) => { sleeps.push(ms); wakeups.push(() => { now += ms; resolve(); }); }) };
        const limiter = new RateLimiter(2, 1_000, clock, undefined, 1);
        await limiter.acquire();
        await limiter.acquire();
        const order: string[] = [];
        // The window is full: a foreground request waits, then a background one arrives.
        const foreground = limiter.acquire().then(() => order.push("foreground"));
        const background = limiter.acquire(Infinity, "background").then(() => order.push("background"));
        while (order.length < 2) {
            await new Promise((resolve) => setImmediate(resolve));
            wakeups.shift()?.();
        }
        await Promise.all([foreground, background]);
        expect(order).toEqual(["foreground", "background"]);

        await expect(limiter.acquire(now + 10, "background")).rejects.toBeInstanceOf(RateLimitWaitTooLongError);
    });

    it("never lets more than `limit` requests into any rolling window", async () => {
        const clock = fakeClock();
        const limiter = new RateLimiter(5, 1_000, clock);
        const sentAt: number[] = [];
        for (let i = 0; i < 23; i++) {
            await limiter.acquire();
            sentAt.push(clock.now());
        }
        for (const start of sentAt) {
            expect(sentAt.filter((t) => t >= start && t < start + 1_000).length).toBeLessThanOrEqual(5);
        }
    });

    it("holds everyone back after a 429", async () => {
        const clock = fakeClock();
        const limiter = new RateLimiter(300, 60_000, clock);
        await limiter.acquire();
        limiter.pauseFor(2_000);
        await limiter.acquire();
        expect(clock.slept).toEqual([2_000]);
    });

    it("serves concurrent callers in arrival order", async () => {
        const clock = fakeClock();
        const limiter = new RateLimiter(1, 100, clock);
        const order: number[] = [];
        await Promise.all([0, 1, 2, 3].map((i) => limiter.acquire().then(() => order.push(i))));
        expect(order).toEqual([0, 1, 2, 3]);
    });

    it("rejects a limit that cannot pace anything", () => {
        expect(() => new RateLimiter(0)).toThrow("Expected `limit` to be a positive integer.");
    });

    it("refuses, unsent and uncounted, a request the limit would hold back past its deadline, and serves the next caller", async () => {
        const clock = fakeClock();
        const limiter = new RateLimiter(2, 1_000, clock);
        await limiter.acquire();
        await limiter.acquire();
        await expect(limiter.acquire(500)).rejects.toBeInstanceOf(RateLimitWaitTooLongError);
        expect(clock.slept).toEqual([]);
        await limiter.acquire(1_000);
        expect(clock.slept).toEqual([1_000]);
    });

    it("counts a pause after a 429 against the deadline too", async () => {
        const clock = fakeClock();
        const limiter = new RateLimiter(300, 60_000, clock);
        limiter.pauseFor(5_000);
        await expect(limiter.acquire(4_000)).rejects.toThrow(/past its deadline/);
        await limiter.acquire(5_000);
        expect(clock.slept).toEqual([5_000]);
    });

    it("never sends a request past its deadline, even one that waited its turn behind other callers", async () => {
        const clock = fakeClock();
        const limiter = new RateLimiter(1, 1_000, clock);
        await limiter.acquire();
        const ahead = limiter.acquire(); // waits 1 s for the window, with no deadline
        const behind = limiter.acquire(1_500); // queued behind it: its own slot would come at 2 s
        await ahead;
        await expect(behind).rejects.toBeInstanceOf(RateLimitWaitTooLongError);
        await clock.sleep(5_000);
        const late = limiter.acquire(clock.now() - 1);
        await expect(late).rejects.toBeInstanceOf(RateLimitWaitTooLongError);
    });
});

/** A shared budget that answers from a script, and records what it was asked. */
function scriptedBudget(answers: BudgetAnswer[]): RequestBudget & { asked: number[]; pauses: number[] } {
    const asked: number[] = [];
    const pauses: number[] = [];
    return {
        asked,
        pauses,
        take: async (waiting) => {
            asked.push(waiting);
            return answers.shift() ?? { granted: true };
        },
        sharePause: async (until) => void pauses.push(until),
    };
}

describe("RateLimiter with a budget shared across instances", () => {
    it("sends only what the shared budget grants, sleeping until it says to ask again", async () => {
        const clock = fakeClock();
        const budget = scriptedBudget([{ granted: true }, { granted: false, retryAt: 3_000 }, { granted: true }]);
        const limiter = new RateLimiter(300, 60_000, clock, budget);
        await limiter.acquire();
        await limiter.acquire();
        expect(clock.slept).toEqual([3_000]);
        expect(budget.asked).toEqual([1, 1, 1]);
    });

    it("asks the budget only once its own pacing lets a request go", async () => {
        const clock = fakeClock();
        const budget = scriptedBudget([]);
        const limiter = new RateLimiter(1, 1_000, clock, budget);
        await limiter.acquire();
        await limiter.acquire();
        expect(clock.slept).toEqual([1_000]);
        expect(budget.asked).toHaveLength(2);
    });

    it("tells the budget how many callers wait, so that it can lease for all of them", async () => {
        const clock = fakeClock();
        const budget = scriptedBudget([]);
        const limiter = new RateLimiter(300, 60_000, clock, budget);
        await Promise.all([limiter.acquire(), limiter.acquire(), limiter.acquire()]);
        expect(budget.asked).toEqual([3, 2, 1]);
    });

    it("refuses, unsent, a request the shared budget would hold back past its deadline", async () => {
        const clock = fakeClock();
        const budget = scriptedBudget([{ granted: false, retryAt: 3_000 }]);
        const limiter = new RateLimiter(300, 60_000, clock, budget);
        await expect(limiter.acquire(2_000)).rejects.toBeInstanceOf(RateLimitWaitTooLongError);
        expect(clock.slept).toEqual([]);
    });

    it("never sends a grant that arrived after the deadline", async () => {
        const clock = fakeClock();
        const slowBudget: RequestBudget = {
            take: async () => {
                await clock.sleep(500); // storage answered slowly
                return { granted: true };
            },
            sharePause: async () => undefined,
        };
        const limiter = new RateLimiter(300, 60_000, clock, slowBudget);
        await expect(limiter.acquire(400)).rejects.toBeInstanceOf(RateLimitWaitTooLongError);
    });

    it("shares a 429 pause with the other instances", () => {
        const clock = fakeClock();
        const budget = scriptedBudget([]);
        new RateLimiter(300, 60_000, clock, budget).pauseFor(2_000);
        expect(budget.pauses).toEqual([2_000]);
    });
});

describe("sliceBudget", () => {
    it("adds up to exactly the limit over any 42 consecutive slices: all one window can touch with clocks half a slice apart", () => {
        expect(SLICES_SHARING_THE_LIMIT).toBe(42);
        for (const limit of [1, 7, 300, 3000]) {
            for (const first of [0, 5, 591_234_567]) {
                let sum = 0;
                for (let slice = first; slice < first + SLICES_SHARING_THE_LIMIT; slice++) sum += sliceBudget(slice, limit);
                expect(sum).toBe(limit);
            }
        }
    });

    it("gives a fallback share of about limit ÷ instances a window, never more than its ceiling", () => {
        for (const [limit, instances] of [[300, 4], [300, 7], [5, 4]] as const) {
            for (const first of [0, 13, 591_234_567]) {
                let sum = 0;
                for (let slice = first; slice < first + SLICES_SHARING_THE_LIMIT; slice++) sum += sliceBudget(slice, limit, instances);
                expect(sum).toBeGreaterThanOrEqual(Math.floor(limit / instances));
                expect(sum).toBeLessThanOrEqual(Math.ceil(limit / instances));
            }
        }
    });
});

describe("grantsSeenFrom: a budget row's grants from a slice's point of view", () => {
    const zeros = (n: number) => Array<number>(n).fill(0);

    const ours = { slicesPerWindow: SLICES_PER_WINDOW };

    it("shifts the row's grants back by the slices since it was written, and forgets those past the run", () => {
        const row = { slice: 100, granted: 7, earlier: [3, 0, 5], pausedUntil: 0, ...ours };
        expect(grantsSeenFrom(row, 100, 300)).toEqual({ earlier: [3, 0, 5, ...zeros(38)], inSlice: 7 });
        expect(grantsSeenFrom(row, 102, 300)).toEqual({ earlier: [0, 7, 3, 0, 5, ...zeros(36)], inSlice: 0 });
        // Slice 100 is the 41st slice before 141, the last the run of 42 holds; before it, nothing.
        expect(grantsSeenFrom(row, 141, 300)).toEqual({ earlier: [...zeros(40), 7], inSlice: 0 });
        expect(grantsSeenFrom(row, 142, 300)).toEqual({ earlier: zeros(41), inSlice: 0 });
    });

    it("reads a row of its own slicing written without the grants as every slice having granted its even share", () => {
        const withoutGrants = { slice: 500, granted: 4, pausedUntil: 0, ...ours };
        const { earlier, inSlice } = grantsSeenFrom(withoutGrants, 500, 300);
        expect(300 - earlier.reduce((sum, n) => sum + n, 0) - inSlice).toBe(sliceBudget(500, 300) - 4);
    });

    it("counts all a row ahead of this clock holds as granted just before (a clock gone wrong, taken back)", () => {
        const ahead = { slice: 900, granted: 20, earlier: [30, 40], pausedUntil: 0, ...ours };
        expect(grantsSeenFrom(ahead, 800, 300)).toEqual({ earlier: [90, ...zeros(40)], inSlice: 0 });
    });

    it("counts a row of the twenty-slice version whole until its slice is a run of 42 of ours old (a deployment rolling out)", () => {
        // Written in its 3 s slice 50, which ends where our 1.5 s slice 102 begins.
        const twenty = { slice: 50, granted: 9, earlier: [70, 0, 80], pausedUntil: 0 };
        expect(grantsSeenFrom(twenty, 101, 300)).toEqual({ earlier: [159, ...zeros(40)], inSlice: 0 });
        // Our run of 42 up to slice 142 begins at slice 101, inside the row's slice: still whole. Up to 143, it begins after it ended.
        expect(grantsSeenFrom(twenty, 142, 300)).toEqual({ earlier: [159, ...zeros(40)], inSlice: 0 });
        expect(grantsSeenFrom(twenty, 143, 300)).toEqual({ earlier: zeros(41), inSlice: 0 });
        // One from before the grants were kept: the whole limit, as long as it is that recent.
        expect(grantsSeenFrom({ slice: 50, granted: 4, pausedUntil: 0 }, 101, 300)).toEqual({ earlier: [300, ...zeros(40)], inSlice: 0 });
        // A finer slicing (a later version's): the same, by time. Its slice 204 of 80 ends at our 102.5.
        const eighty = { slice: 204, granted: 3, earlier: [5], pausedUntil: 0, slicesPerWindow: 80 };
        expect(grantsSeenFrom(eighty, 143, 300)).toEqual({ earlier: [8, ...zeros(40)], inSlice: 0 });
        expect(grantsSeenFrom(eighty, 144, 300)).toEqual({ earlier: zeros(41), inSlice: 0 });
    });

    it("caps a slice at five times the window's even pace (an eighth of the limit in a slice of forty), and at least one", () => {
        expect([300, 240, 3000, 7, 1].map(sliceCap)).toEqual([38, 30, 375, 1, 1]);
    });
});

describe("StorageClockEstimate", () => {
    it("takes the middle of the quickest round trip's bound, and drops bounds the latest answer contradicts (a clock stepped)", () => {
        const estimate = new StorageClockEstimate();
        expect(estimate.current()).toBeUndefined();
        // Storage 1 000 ms ahead of us. A slow answer (200 ms there and back), a Date header's second, then a quick one.
        estimate.observe(0, 200, { earliest: 1_150, latest: 1_150 });
        estimate.observe(500, 520, { earliest: 1_000, latest: 1_999 });
        estimate.observe(600, 610, { earliest: 1_605, latest: 1_605 });
        expect(estimate.current()).toEqual({ offsetMs: 1_000, uncertaintyMs: 5 });
        // Our clock is stepped 3 s forward: the quick bound no longer holds, the first answer since replaces it.
        estimate.observe(3_700, 3_760, { earliest: 1_730, latest: 1_730 });
        expect(estimate.current()).toEqual({ offsetMs: -2_000, uncertaintyMs: 30 });
    });

    it("regression chaos seed 9191 in-sync host warned of its own clock: an offset within its own uncertainty of the allowance is no finding", () => {
        // The chaos run's tight limit: 15 s windows, 0.375 s slices, an allowance of half a slice.
        const allowanceMs = 187.5;
        // Only Date headers (whole seconds) seen: 0.32 s ± 0.54 s cannot be told apart from 0.
        const dateHeadersOnly = new StorageClockEstimate();
        dateHeadersOnly.observe(10_000, 10_050, { earliest: 10_000, latest: 10_999 });
        expect(dateHeadersOnly.current()!.uncertaintyMs).toBeGreaterThan(500);
        expect(clockOffBeyond(dateHeadersOnly.current()!, allowanceMs)).toBe(false);
        expect(clockOffBeyond({ offsetMs: 320, uncertaintyMs: 540 }, allowanceMs)).toBe(false);
        expect(clockOffBeyond({ offsetMs: -340, uncertaintyMs: 540 }, allowanceMs)).toBe(false);
        expect(clockOffBeyond({ offsetMs: 1_000, uncertaintyMs: 10 }, allowanceMs)).toBe(true);
        expect(clockOffBeyond({ offsetMs: -1_500, uncertaintyMs: 540 }, allowanceMs)).toBe(true);
    });
});
