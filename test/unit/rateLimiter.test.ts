import { describe, expect, it } from "vitest";
import { RateLimiter, RateLimitWaitTooLongError, type Clock } from "../../src/shared/smartsheet/RateLimiter";

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
