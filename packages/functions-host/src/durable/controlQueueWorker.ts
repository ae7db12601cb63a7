import type { HostLogger } from "../logger";
import { PollLoop } from "../util/pollLoop";
import { isEntityInstanceId } from "./entityMessages";
import type { EntityRunner } from "./entityRunner";
import type { OrchestrationRunner } from "./orchestrationRunner";
import type { ReceivedDurableMessage, TaskHub } from "./taskHub";
import { drain } from "../util/drain";

export interface ControlQueueOptions {
    visibilityMs: number;
    maxConcurrentInstances: number;
    minIdleMs: number;
    maxIdleMs: number;
}

/**
 * Consumes `<hub>-control-00`: groups messages by instance and hands each group to the
 * orchestration runner, one episode per instance at a time. Messages are deleted only after the
 * runner committed them; ones to look at later (timers not yet due, events for a suspended or
 * not yet started instance) stay invisible and are re-processed after the delay.
 */
export class ControlQueueWorker {
    readonly #loop: PollLoop;
    readonly #chains = new Map<string, Promise<void>>();
    readonly #holds = new Set<NodeJS.Timeout>();
    #active = 0;
    #stopped = false;

    constructor(
        private readonly hub: TaskHub,
        private readonly runner: OrchestrationRunner,
        private readonly logger: HostLogger,
        private readonly options: ControlQueueOptions,
        private readonly entities?: EntityRunner,
    ) {
        this.#loop = new PollLoop(() => this.#poll(), {
            minIdleMs: options.minIdleMs,
            maxIdleMs: options.maxIdleMs,
            onError: (error) => logger.warn(`Durable: polling ${hub.controlQueue.name} failed: ${(error as Error).message}`),
        });
    }

    start(): void {
        this.#loop.start();
    }

    wake(): void {
        this.#loop.wake();
    }

    async stop(drainMs: number): Promise<void> {
        this.#stopped = true;
        for (const hold of this.#holds) clearTimeout(hold);
        this.#holds.clear();
        await this.#loop.stop();
        await drain(this.#chains.values(), drainMs);
    }

    async #poll(): Promise<number> {
        if (this.#active >= this.options.maxConcurrentInstances) {
            await Promise.race(this.#chains.values());
            return 1;
        }
        const visibilitySeconds = Math.max(1, Math.ceil(this.options.visibilityMs / 1000));
        const { received, invalid } = await this.hub.receive(this.hub.controlQueue, 32, visibilitySeconds);
        for (const bad of invalid) {
            this.logger.error(`Durable: deleting unreadable message ${bad.id} from ${this.hub.controlQueue.name} (${bad.error}): ${bad.text}`);
            await this.hub.delete(this.hub.controlQueue, { queueMessageId: bad.id, popReceipt: bad.popReceipt });
        }
        const groups = new Map<string, ReceivedDurableMessage[]>();
        for (const item of received) {
            const list = groups.get(item.message.instanceId) ?? [];
            list.push(item);
            groups.set(item.message.instanceId, list);
        }
        for (const [instanceId, items] of groups) this.#enqueue(instanceId, items);
        return received.length + invalid.length;
    }

    #enqueue(instanceId: string, items: ReceivedDurableMessage[]): void {
        const previous = this.#chains.get(instanceId) ?? Promise.resolve();
        const next = this.#handle(instanceId, items, previous);
        this.#chains.set(instanceId, next);
        void next.finally(() => {
            if (this.#chains.get(instanceId) === next) this.#chains.delete(instanceId);
        });
    }

    /**
     * The messages stay invisible from their receipt until they are disposed of, also while they
     * wait behind the instance's previous episode: a message whose visibility ran out would be
     * received again, and the first receipt's delete would fail (a loop of failed episodes once
     * episodes are slow, as on a loaded machine).
     */
    async #handle(instanceId: string, items: ReceivedDurableMessage[], previous: Promise<void>): Promise<void> {
        let dispositions: Awaited<ReturnType<OrchestrationRunner["process"]>> | undefined;
        try {
            dispositions = await this.hub.keepHidden(this.hub.controlQueue, items, this.options.visibilityMs, async () => {
                await previous;
                if (this.#stopped) return undefined;
                this.#active++;
                try {
                    // Entities (`@name@key`) have their own scheduler; everything else is an orchestration.
                    const target = this.entities && isEntityInstanceId(instanceId) ? this.entities : this.runner;
                    const messages = items.map((i) => {
                        if (i.message.kind !== "control") throw new Error("a work item on the control queue");
                        return i.message;
                    });
                    return await target.process(instanceId, messages);
                } finally {
                    this.#active--;
                }
            });
            if (!dispositions) return;
            const done = dispositions;
            await Promise.all(
                items.map(async (item, index) => {
                    const disposition = done[index] ?? { kind: "delete" };
                    if (disposition.kind === "delete") return this.hub.delete(this.hub.controlQueue, item);
                    return this.#later(instanceId, item, disposition.afterMs);
                }),
            );
        } catch (error) {
            this.logger.error(`Durable: processing instance '${instanceId}' failed; its messages will be retried. ${(error as Error).stack ?? String(error)}`);
            await Promise.all(items.map((item) => this.hub.hide(this.hub.controlQueue, item, 2).catch(() => undefined)));
        }
    }

    /** Short waits are held in memory (the message stays invisible); long ones re-hide the message. */
    async #later(instanceId: string, item: ReceivedDurableMessage, afterMs: number): Promise<void> {
        const holdLimit = Math.min(60_000, this.options.visibilityMs - 2000);
        if (afterMs <= holdLimit && !this.#stopped) {
            const hold = setTimeout(() => {
                this.#holds.delete(hold);
                if (!this.#stopped) this.#enqueue(instanceId, [item]);
            }, afterMs);
            this.#holds.add(hold);
            return;
        }
        const popReceipt = await this.hub.hide(this.hub.controlQueue, item, Math.ceil(afterMs / 1000));
        if (popReceipt) item.popReceipt = popReceipt;
    }
}
