import type { DeclaresFailureKind } from "../failures";

export interface Clock {
    now(): number;
    sleep(ms: number): Promise<void>;
}

export const systemClock: Clock = {
    now: () => Date.now(),
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** The rate limit would let this request go only after its deadline: it was not sent. */
export class RateLimitWaitTooLongError extends Error implements DeclaresFailureKind {
    readonly failureKind = "transient" as const;

    constructor(readonly waitMs: number) {
        super(`the rate limit would hold this request back past its deadline (another ${Math.round(waitMs)} ms); not sent`);
        this.name = "RateLimitWaitTooLongError";
    }
}

/** How often a background request looks again while foreground requests wait. */
const BACKGROUND_POLL_MS = 25;

/** What a shared budget answers: send now, or ask again at `retryAt` (clock time). */
export type BudgetAnswer = { granted: true } | { granted: false; retryAt: number };

/**
 * The token's request budget shared with the app's other instances: a request this process's own
 * pacing would let go is sent only once the budget grants it too.
 */
export interface RequestBudget {
    /**
     * Takes one request from the budget, or refuses it with the clock time to ask again at. `waiting`
     * is how many callers this process has queued; no storage call outlasts `deadline`. Never rejects.
     */
    take(waiting: number, deadline: number): Promise<BudgetAnswer>;
    /** Smartsheet said 429 here: ask every instance to hold back until `until` (clock time). Never rejects. */
    sharePause(until: number): Promise<void>;
}

/**
 * Paces requests to at most `limit` in any rolling `windowMs` (Smartsheet: 300 per minute per
 * token). Callers are served in arrival order. After a 429 every caller waits out `pauseFor`.
 * With a `budget`, each request also needs its grant: the limit then holds across instances.
 */
export class RateLimiter {
    private readonly sent: number[] = [];
    /** When the background requests of the window were sent. */
    private readonly sentInBackground: number[] = [];
    private queue: Promise<void> = Promise.resolve();
    private pausedUntil = 0;
    private waiting = 0;
    private waitingInForeground = 0;

    constructor(
        readonly limit: number,
        readonly windowMs: number = 60_000,
        private readonly clock: Clock = systemClock,
        private readonly budget?: RequestBudget,
        /** The share of `limit` background requests may take in a window (the rest is kept for the foreground). */
        readonly backgroundShare = 0.5,
    ) {
        if (!Number.isInteger(limit) || limit < 1) throw new TypeError("Expected `limit` to be a positive integer.");
        if (!(windowMs > 0)) throw new TypeError("Expected `windowMs` to be a positive number.");
        if (!(backgroundShare > 0 && backgroundShare <= 1)) throw new TypeError("Expected `backgroundShare` in (0, 1].");
    }

    /**
     * Resolves when one more request may be sent now, and counts it as sent. With a `deadline`
     * (clock time), rejects with `RateLimitWaitTooLongError` instead of waiting past it. A
     * `background` request (a convergence) queues only while no foreground request of this
     * process waits, and only while the background requests of the window are fewer than
     * `backgroundShare` of the limit: a new order never waits behind a convergence of hundreds of
     * products.
     */
    acquire(deadline = Infinity, lane: "foreground" | "background" = "foreground"): Promise<void> {
        if (lane === "background") return this.acquireInBackground(deadline);
        this.waiting += 1;
        this.waitingInForeground += 1;
        const turn = this.queue.then(() => this.waitForSlot(deadline)).finally(() => {
            this.waiting -= 1;
            this.waitingInForeground -= 1;
        });
        this.queue = turn.catch(() => undefined);
        return turn;
    }

    private async acquireInBackground(deadline: number): Promise<void> {
        const share = Math.max(1, Math.floor(this.limit * this.backgroundShare));
        for (;;) {
            const now = this.clock.now();
            while (this.sentInBackground.length > 0 && this.sentInBackground[0]! <= now - this.windowMs) this.sentInBackground.shift();
            const wait =
                this.sentInBackground.length >= share ? this.sentInBackground[0]! + this.windowMs - now : this.waitingInForeground > 0 ? BACKGROUND_POLL_MS : 0;
            if (wait <= 0) break;
            if (now + wait > deadline) throw new RateLimitWaitTooLongError(wait);
            await this.clock.sleep(wait);
        }
        this.waiting += 1;
        const turn = this.queue.then(() => this.waitForSlot(deadline)).finally(() => (this.waiting -= 1));
        this.queue = turn.catch(() => undefined);
        await turn;
        this.sentInBackground.push(this.clock.now());
    }

    /** Holds every caller back for `ms` (Smartsheet said 429: our view of the window was off), and the other instances too. */
    pauseFor(ms: number): void {
        this.pausedUntil = Math.max(this.pausedUntil, this.clock.now() + ms);
        void this.budget?.sharePause(this.pausedUntil);
    }

    private async waitForSlot(deadline: number): Promise<void> {
        for (;;) {
            const now = this.clock.now();
            while (this.sent.length > 0 && this.sent[0]! <= now - this.windowMs) this.sent.shift();
            const waitForPause = this.pausedUntil - now;
            const waitForWindow = this.sent.length >= this.limit ? this.sent[0]! + this.windowMs - now : 0;
            let wait = Math.max(waitForPause, waitForWindow);
            if (wait <= 0 && this.budget) {
                const answer = await this.budget.take(this.waiting, deadline);
                const answeredAt = this.clock.now();
                if (answer.granted) {
                    // The grant is spent unsent when asking for it took us past the deadline.
                    if (answeredAt > deadline) throw new RateLimitWaitTooLongError(0);
                    this.sent.push(answeredAt);
                    return;
                }
                wait = answer.retryAt - answeredAt;
                if (answeredAt + Math.max(0, wait) > deadline) throw new RateLimitWaitTooLongError(Math.max(0, wait));
                if (wait > 0) await this.clock.sleep(wait);
                continue;
            }
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
