import type { Clock } from "../../src/shared/smartsheet/RateLimiter";

export interface VirtualClock extends Clock {
    /** Runs the clients to the end; time moves only while every one still running is asleep. */
    run(clients: Array<() => Promise<void>>): Promise<void>;
    set(now: number): void;
}

/**
 * Virtual time for several clients at once: `now` stands still while any client works (storage
 * calls run in real time and take none of it) and jumps to the earliest wake-up once every
 * running client sleeps (outside `run`, at once). Sleeps end in time order.
 */
export function virtualClock(start = 0): VirtualClock {
    let now = start;
    let running = 0;
    const sleepers: Array<{ at: number; wake: () => void }> = [];

    const advanceIfAllAsleep = () => {
        // Outside `run`, the one caller asleep is everyone.
        if (sleepers.length < Math.max(running, 1)) return;
        const at = Math.min(...sleepers.map((sleeper) => sleeper.at));
        now = Math.max(now, at);
        for (const sleeper of sleepers.filter((candidate) => candidate.at <= now)) {
            sleepers.splice(sleepers.indexOf(sleeper), 1);
            sleeper.wake();
        }
    };

    return {
        now: () => now,
        set: (value) => void (now = value),
        sleep: (ms) =>
            new Promise<void>((wake) => {
                sleepers.push({ at: now + Math.max(0, ms), wake });
                advanceIfAllAsleep();
            }),
        run: async (clients) => {
            running += clients.length;
            await Promise.all(
                clients.map(async (client) => {
                    try {
                        await client();
                    } finally {
                        running -= 1;
                        advanceIfAllAsleep();
                    }
                }),
            );
        },
    };
}
