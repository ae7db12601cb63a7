import { fromRpcValue, type FunctionRunner } from "../functionRunner";
import type { HostLogger } from "../logger";
import { PollLoop } from "../util/pollLoop";
import { errorMessage } from "../worker/invoker";
import type { HistoryEvent } from "./historyEvent";
import { runHttpActivity } from "./httpActivity";
import { controlMessage, type WorkItemMessage } from "./messages";
import { HTTP_ACTIVITY_NAME } from "./orchestratorActions";
import type { DurableFunctionLookup } from "./orchestrationRunner";
import type { ReceivedDurableMessage, TaskHub } from "./taskHub";
import { drain } from "../util/drain";

export type DuplicateActivities = "off" | "sequential" | "concurrent";

export interface ActivityWorkerOptions {
    /** host.json extensions.durableTask.storageProvider.workItemQueueVisibilityTimeout. */
    visibilityMs: number;
    maxConcurrent: number;
    duplicates: DuplicateActivities;
    minIdleMs: number;
    maxIdleMs: number;
}

type Outcome = { ok: true; result: string } | { ok: false; reason: string; details: string; failureDetails?: string };

/**
 * Runs activities from `<hub>-workitems` at least once: a work item stays invisible while its
 * activity runs (the visibility is renewed) and is deleted only after the result was sent to the
 * orchestration, so a work item whose worker is lost comes back and runs again.
 */
export class ActivityWorker {
    readonly #loop: PollLoop;
    readonly #running = new Set<Promise<void>>();

    constructor(
        private readonly hub: TaskHub,
        private readonly runner: FunctionRunner,
        private readonly functions: DurableFunctionLookup,
        private readonly logger: HostLogger,
        private readonly options: ActivityWorkerOptions,
    ) {
        this.#loop = new PollLoop(() => this.#poll(), {
            minIdleMs: options.minIdleMs,
            maxIdleMs: options.maxIdleMs,
            onError: (error) => logger.warn(`Durable: polling ${hub.workItemQueue.name} failed: ${(error as Error).message}`),
        });
    }

    start(): void {
        this.#loop.start();
    }

    wake(): void {
        this.#loop.wake();
    }

    /** Stops taking work; activities still running after `drainMs` are left to run again after a restart. */
    async stop(drainMs: number): Promise<void> {
        await this.#loop.stop();
        await drain(this.#running, drainMs);
    }

    async #poll(): Promise<number> {
        const capacity = this.options.maxConcurrent - this.#running.size;
        if (capacity <= 0) {
            await Promise.race(this.#running);
            return 1;
        }
        const { received, invalid } = await this.hub.receive(this.hub.workItemQueue, capacity, Math.max(1, Math.ceil(this.options.visibilityMs / 1000)));
        for (const bad of invalid) {
            this.logger.error(`Durable: deleting unreadable work item ${bad.id} (${bad.error}): ${bad.text}`);
            await this.hub.delete(this.hub.workItemQueue, { queueMessageId: bad.id, popReceipt: bad.popReceipt });
        }
        for (const item of received) {
            const task = this.#run(item).catch((error: unknown) => this.logger.error(`Durable: work item ${item.message.id} failed in the host: ${(error as Error).stack ?? String(error)}`));
            this.#running.add(task);
            void task.finally(() => this.#running.delete(task));
        }
        return received.length + invalid.length;
    }

    async #run(item: ReceivedDurableMessage): Promise<void> {
        const workItem = item.message as WorkItemMessage;
        const outcome = await this.hub.keepHidden(this.hub.workItemQueue, [item], this.options.visibilityMs, () => this.#execute(workItem));
        const now = new Date().toISOString();
        const event: HistoryEvent = outcome.ok
            ? { EventType: "TaskCompleted", EventId: -1, Timestamp: now, TaskScheduledId: workItem.taskScheduledId, Result: outcome.result }
            : { EventType: "TaskFailed", EventId: -1, Timestamp: now, TaskScheduledId: workItem.taskScheduledId, Reason: outcome.reason, Details: outcome.details, FailureDetails: outcome.failureDetails };
        await this.hub.send({ message: controlMessage(workItem.instanceId, event, { executionId: workItem.executionId }) });
        await this.hub.delete(this.hub.workItemQueue, item);
    }

    async #execute(workItem: WorkItemMessage): Promise<Outcome> {
        if (workItem.name === HTTP_ACTIVITY_NAME) return runBuiltInHttp(workItem);
        const fn = this.functions.activity(workItem.name);
        if (!fn) {
            const reason = `The function '${workItem.name}' doesn't exist, is disabled, or is not an activity function.`;
            return { ok: false, reason, details: reason };
        }
        const once = async (): Promise<Outcome> => {
            try {
                const { response } = await this.runner.run(fn, workItem.input !== undefined ? { json: workItem.input } : undefined, {
                    reason: `(Activity) instance '${workItem.instanceId}' task ${workItem.taskScheduledId}`,
                });
                return { ok: true, result: JSON.stringify(fromRpcValue(response.returnValue) ?? null) };
            } catch (error) {
                return toFailure(workItem.name, error);
            }
        };
        switch (this.options.duplicates) {
            case "sequential":
                await once();
                return once();
            case "concurrent":
                return Promise.race([once(), once()]);
            default:
                return once();
        }
    }
}

/** callHttp's built-in activity: the HTTP answer is the result; an unreachable URL fails the task. */
async function runBuiltInHttp(workItem: WorkItemMessage): Promise<Outcome> {
    try {
        return { ok: true, result: JSON.stringify(await runHttpActivity(workItem.input)) };
    } catch (error) {
        const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : "";
        return toFailure(HTTP_ACTIVITY_NAME, new Error(`${errorMessage(error)}${cause}`));
    }
}

/** A failed activity as the host records it: Reason "Activity function 'X' failed: <message>", Details the serialized error. */
export function toFailure(name: string, error: unknown): Outcome {
    const message = errorMessage(error);
    const stack = error instanceof Error ? error.stack : undefined;
    const provided = parseProvidedFailure(message);
    if (provided) {
        const failureDetails = JSON.stringify({
            ErrorType: provided.errorType,
            ErrorMessage: provided.errorMessage,
            StackTrace: provided.stackTrace ?? stack ?? null,
            IsNonRetriable: provided.isNonRetriable === true,
            Properties: provided.properties ?? null,
        });
        const reason = `Activity function '${name}' failed: ${provided.errorMessage}`;
        return { ok: false, reason, details: JSON.stringify({ ClassName: provided.errorType, Message: provided.errorMessage, StackTrace: provided.stackTrace ?? stack ?? null }), failureDetails };
    }
    const className = error instanceof Error ? error.name : "Error";
    return { ok: false, reason: `Activity function '${name}' failed: ${message}`, details: JSON.stringify({ ClassName: className, Message: message, StackTrace: stack ?? null }) };
}

/** The JSON an ExceptionPropertiesProvider makes the SDK put into the error message (df.setExceptionPropertiesProvider). */
function parseProvidedFailure(message: string): { errorType: string; errorMessage: string; stackTrace?: string; isNonRetriable?: boolean; properties?: unknown } | undefined {
    if (!message.startsWith("{")) return undefined;
    try {
        const parsed = JSON.parse(message) as Record<string, unknown>;
        if (typeof parsed.errorType === "string" && typeof parsed.errorMessage === "string") {
            return parsed as { errorType: string; errorMessage: string };
        }
    } catch {
        // an ordinary message that happens to start with "{"
    }
    return undefined;
}
