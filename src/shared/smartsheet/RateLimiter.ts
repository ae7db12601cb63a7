export interface Clock {
    now(): number;
    sleep(ms: number): Promise<void>;
}

export const systemClock: Clock = {
    now: () => Date.now(),
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** The rate limit would let this request go only after its deadline: it was not sent. */
export class RateLimitWaitTooLongError extends Error {
    constructor(readonly waitMs: number) {
        super(`the rate limit would hold this request back past its deadline (another ${Math.round(waitMs)} ms); not sent`);
        this.name = "RateLimitWaitTooLongError";
    }
}

/**
 * Paces requests to at most `limit` in any rolling `windowMs` (Smartsheet: 300 per minute per
 * token). Callers are served in arrival order. After a 429 every caller waits out `pauseFor`.
 */
export class RateLimiter {
    private readonly sent: number[] = [];
    private queue: Promise<void> = Promise.resolve();
    private pausedUntil = 0;

    constructor(
        readonly limit: number,
        readonly windowMs: number = 60_000,
        private readonly clock: Clock = systemClock,
    ) {
        if (!Number.isInteger(limit) || limit < 1) throw new TypeError("Expected `limit` to be a positive integer.");
        if (!(windowMs > 0)) throw new TypeError("Expected `windowMs` to be a positive number.");
    }

    /**
     * Resolves when one more request may be sent now, and counts it as sent. With a `deadline`
     * (clock time), rejects with `RateLimitWaitTooLongError` instead of waiting past it.
     */
    acquire(deadline = Infinity): Promise<void> {
        const turn = this.queue.then(() => this.waitForSlot(deadline));
        this.queue = turn.catch(() => undefined);
        return turn;
    }

    /** Holds every caller back for `ms` (Smartsheet said 429: our view of the window was off). */
    pauseFor(ms: number): void {
        this.pausedUntil = Math.max(this.pausedUntil, this.clock.now() + ms);
    }

    private async waitForSlot(deadline: number): Promise<void> {
        for (;;) {
            const now = this.clock.now();
            while (this.sent.length > 0 && this.sent[0]! <= now - this.windowMs) this.sent.shift();
            const waitForPause = this.pausedUntil - now;
            const waitForWindow = this.sent.length >= this.limit ? this.sent[0]! + this.windowMs - now : 0;
            const wait = Math.max(waitForPause, waitForWindow);
            // Checked on every turn: time spent queued behind other callers counts against the deadline too.
            if (now + Math.max(0, wait) > deadline) throw new RateLimitWaitTooLongError(Math.max(0, wait));
            if (wait <= 0) {
                this.sent.push(now);
                return;
            }
            await this.clock.sleep(wait);
        }
    }
}
