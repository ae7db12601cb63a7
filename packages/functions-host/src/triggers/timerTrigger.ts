import type { HostFunction } from "../functionCatalog";
import type { FunctionRunner } from "../functionRunner";
import type { HostLogger } from "../logger";

const MAX_TIMEOUT_MS = 2_147_000_000;
const MIN_DATE = "0001-01-01T00:00:00";

/**
 * A timer trigger: fires on its NCRONTAB schedule (and once at start with runOnStartup), never
 * overlapping itself; an occurrence missed while the previous run was still going fires as soon
 * as it ends, with `isPastDue: true`. The input is the host's TimerInfo, which the worker
 * camel-cases into `{ schedule: { adjustForDST }, scheduleStatus: { last, next, lastUpdated }, isPastDue }`.
 * A failed run is retried under the function's retry policy before the next occurrence, with
 * `context.retryContext` telling the function which retry it is.
 */
export class TimerTriggerScheduler {
    #timer: NodeJS.Timeout | undefined;
    #stopped = false;
    #running: Promise<void> | undefined;
    #last: Date | undefined;
    #next: Date;

    constructor(
        private readonly fn: HostFunction,
        private readonly runner: FunctionRunner,
        private readonly logger: HostLogger,
    ) {
        if (!fn.timer) throw new Error(`Function '${fn.name}' is not a timer trigger.`);
        this.#next = fn.timer.schedule.next(new Date());
    }

    get nextOccurrence(): Date {
        return this.#next;
    }

    start(): void {
        if (this.fn.timer?.runOnStartup) {
            this.#running = this.#fire(false, "Timer fired at startup (runOnStartup)");
            void this.#running.finally(() => this.#arm());
        } else {
            this.#arm();
        }
        this.logger.info(`Timer '${this.fn.name}' (${this.fn.timer?.schedule.expression}) next occurrence: ${this.#next.toISOString()}`);
    }

    async stop(): Promise<void> {
        this.#stopped = true;
        if (this.#timer) clearTimeout(this.#timer);
        await this.#running;
    }

    /** Runs the function now, as `POST /admin/functions/{name}` does. */
    fireNow(): Promise<void> {
        return this.#fire(false, "This function was programmatically called via the host APIs.");
    }

    #arm(): void {
        if (this.#stopped) return;
        const wait = Math.max(0, this.#next.getTime() - Date.now());
        this.#timer = setTimeout(() => {
            if (wait > MAX_TIMEOUT_MS) return this.#arm();
            const due = this.#next;
            this.#running = this.#fire(Date.now() - due.getTime() > 1000, `Timer fired at ${due.toISOString()}`).finally(() => {
                const now = new Date();
                this.#next = this.fn.timer?.schedule.next(due.getTime() < now.getTime() - 1000 ? now : due) ?? now;
                this.#arm();
            });
        }, Math.min(wait, MAX_TIMEOUT_MS));
        this.#timer.unref?.();
    }

    async #fire(isPastDue: boolean, reason: string): Promise<void> {
        const timerInfo = {
            Schedule: { AdjustForDST: true },
            ScheduleStatus: { Last: (this.#last ?? new Date(MIN_DATE + "Z")).toISOString(), Next: this.#next.toISOString(), LastUpdated: new Date().toISOString() },
            IsPastDue: isPastDue,
        };
        this.#last = new Date();
        const retry = this.fn.retry;
        let previousError: { message: string; stackTrace?: string } | undefined;
        for (let retryCount = 0; ; retryCount++) {
            try {
                const retryContext = retry ? { retryCount, maxRetryCount: retry.maxRetryCount, ...(previousError ? { exception: previousError } : {}) } : undefined;
                await this.runner.run(this.fn, { json: JSON.stringify(timerInfo) }, { reason, retryContext });
                return;
            } catch (error) {
                // The invoker already logged the failure; a timer keeps its schedule, retrying first under its retry policy.
                previousError = { message: error instanceof Error ? error.message : String(error), ...(error instanceof Error && error.stack ? { stackTrace: error.stack } : {}) };
                if (!retry || (retry.maxRetryCount !== -1 && retryCount >= retry.maxRetryCount) || this.#stopped) return;
                const delay = retry.delayMs(retryCount + 1);
                this.logger.info(`Timer '${this.fn.name}': retry ${retryCount + 1} of ${retry.maxRetryCount === -1 ? "unlimited" : retry.maxRetryCount} (${retry.strategy}) in ${delay} ms.`);
                await new Promise((resolve) => setTimeout(resolve, delay));
                if (this.#stopped) return;
            }
        }
    }
}
