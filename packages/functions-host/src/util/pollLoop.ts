/**
 * A polling loop with adaptive backoff: after a poll that found work it polls again at once,
 * after an empty poll it waits from `minIdleMs` doubling up to `maxIdleMs`. `wake()` cuts the
 * wait short (the host calls it when it enqueues work itself).
 */
export class PollLoop {
    #running = false;
    #idleMs: number;
    #wake: (() => void) | undefined;
    #woken = false;
    #done: Promise<void> = Promise.resolve();
    #lastErrorLog = 0;

    constructor(
        private readonly pollOnce: () => Promise<number>,
        private readonly options: { minIdleMs: number; maxIdleMs: number; onError: (error: unknown) => void },
    ) {
        this.#idleMs = options.minIdleMs;
    }

    start(): void {
        if (this.#running) return;
        this.#running = true;
        this.#done = this.#loop();
    }

    wake(): void {
        this.#idleMs = this.options.minIdleMs;
        this.#woken = true;
        this.#wake?.();
    }

    async stop(): Promise<void> {
        this.#running = false;
        this.#wake?.();
        await this.#done;
    }

    async #loop(): Promise<void> {
        while (this.#running) {
            let found = 0;
            this.#woken = false;
            try {
                found = await this.pollOnce();
            } catch (error) {
                if (Date.now() - this.#lastErrorLog > 5000) {
                    this.#lastErrorLog = Date.now();
                    this.options.onError(error);
                }
            }
            if (!this.#running) break;
            if (found > 0) {
                this.#idleMs = this.options.minIdleMs;
                await new Promise<void>((resolve) => setImmediate(resolve));
                continue;
            }
            if (this.#woken) continue;
            await new Promise<void>((resolve) => {
                const timer = setTimeout(finish, this.#idleMs);
                function finish() {
                    clearTimeout(timer);
                    resolve();
                }
                this.#wake = finish;
            });
            this.#wake = undefined;
            this.#idleMs = Math.min(this.#idleMs * 2, this.options.maxIdleMs);
        }
    }
}
