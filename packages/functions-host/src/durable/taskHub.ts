import { randomUUID } from "node:crypto";
import type { TableClient } from "@azure/data-tables";
import type { QueueClient } from "@azure/storage-queue";
import { LargeValueStore, MAX_INLINE_CHARS } from "../storage/largeValueStore";
import { isConflict, isNotFound, type StorageAccount } from "../storage/storageAccount";
import { parseDurableMessage, type DurableMessage, type OutboundMessage } from "./messages";

/** Queues cap visibility timeouts at 7 days; longer delays are re-hidden when they come up. */
export const MAX_VISIBILITY_SECONDS = 7 * 24 * 3600 - 60;

export interface ReceivedDurableMessage {
    message: DurableMessage;
    queueMessageId: string;
    popReceipt: string;
    dequeueCount: number;
    overflowKey?: string;
}

/**
 * The task hub's storage, shaped like the Azure Storage provider's: tables `<hub>Instances` and
 * `<hub>History`, queues `<hub>-control-00` (orchestration messages) and `<hub>-workitems`
 * (activities), plus `<hub>Large` for values over the table/queue size limits.
 */
export class TaskHub {
    readonly name: string;
    readonly instances: TableClient;
    readonly history: TableClient;
    readonly large: LargeValueStore;
    readonly controlQueue: QueueClient;
    readonly workItemQueue: QueueClient;
    /** Called after a message is sent, so the matching poller can look at once. */
    onSent: (queue: "control" | "workItem") => void = () => {};

    constructor(account: StorageAccount, name: string) {
        validateTaskHubName(name);
        this.name = name;
        this.instances = account.table(`${name}Instances`);
        this.history = account.table(`${name}History`);
        this.large = new LargeValueStore(account.table(`${name}Large`));
        const lower = name.toLowerCase();
        this.controlQueue = account.queue(`${lower}-control-00`);
        this.workItemQueue = account.queue(`${lower}-workitems`);
    }

    async create(): Promise<void> {
        await Promise.all([
            ...[this.instances, this.history].map((t) =>
                t.createTable().catch((error: unknown) => {
                    if (!isConflict(error)) throw error;
                }),
            ),
            this.controlQueue.createIfNotExists(),
            this.workItemQueue.createIfNotExists(),
        ]);
    }

    async send(outbound: OutboundMessage): Promise<void> {
        const queue = outbound.message.kind === "control" ? this.controlQueue : this.workItemQueue;
        let text = JSON.stringify(outbound.message);
        if (text.length > MAX_INLINE_CHARS) {
            const key = `msg|${randomUUID()}`;
            await this.large.put(key, text);
            text = JSON.stringify({ $ref: key });
        }
        // Whole seconds, rounded down: a timer message may come up to a second early and is then
        // held in memory until it is due; the poller is woken when it becomes visible.
        const visibilityTimeout = outbound.delayMs && outbound.delayMs > 0 ? Math.min(Math.floor(outbound.delayMs / 1000), MAX_VISIBILITY_SECONDS) : 0;
        await queue.sendMessage(text, { visibilityTimeout, messageTimeToLive: -1 });
        const kind = outbound.message.kind === "control" ? "control" : "workItem";
        if (visibilityTimeout === 0) this.onSent(kind);
        else if (visibilityTimeout < 3600) setTimeout(() => this.onSent(kind), visibilityTimeout * 1000 + 20).unref();
    }

    async receive(queue: QueueClient, count: number, visibilitySeconds: number): Promise<{ received: ReceivedDurableMessage[]; invalid: { id: string; popReceipt: string; text: string; error: string }[] }> {
        const response = await queue.receiveMessages({ numberOfMessages: Math.max(1, Math.min(32, count)), visibilityTimeout: visibilitySeconds });
        const received: ReceivedDurableMessage[] = [];
        const invalid: { id: string; popReceipt: string; text: string; error: string }[] = [];
        for (const item of response.receivedMessageItems) {
            try {
                let text = item.messageText;
                let overflowKey: string | undefined;
                const ref = /^\{"\$ref":"([^"]+)"\}$/.exec(text);
                if (ref) {
                    overflowKey = ref[1] as string;
                    text = await this.large.get(overflowKey);
                }
                received.push({ message: parseDurableMessage(text), queueMessageId: item.messageId, popReceipt: item.popReceipt, dequeueCount: item.dequeueCount, overflowKey });
            } catch (error) {
                invalid.push({ id: item.messageId, popReceipt: item.popReceipt, text: item.messageText.slice(0, 200), error: (error as Error).message });
            }
        }
        return { received, invalid };
    }

    async delete(queue: QueueClient, message: { queueMessageId: string; popReceipt: string; overflowKey?: string }): Promise<void> {
        try {
            await queue.deleteMessage(message.queueMessageId, message.popReceipt);
        } catch (error) {
            if (!isNotFound(error)) throw error;
        }
        if (message.overflowKey) await this.large.deletePrefix(message.overflowKey).catch(() => undefined);
    }

    /**
     * Runs `work` while keeping `items` invisible (renewed every half visibility, as DTFx renews
     * what it holds), so a slow episode or activity is not received a second time meanwhile and
     * its delete still holds the current pop receipt: a renewal in flight is waited for.
     */
    async keepHidden<T>(queue: QueueClient, items: readonly { queueMessageId: string; popReceipt: string }[], visibilityMs: number, work: () => Promise<T>): Promise<T> {
        const seconds = Math.max(1, Math.ceil(visibilityMs / 1000));
        let renewing: Promise<unknown> = Promise.resolve();
        const renew = setInterval(() => {
            renewing = Promise.all(
                items.map((item) =>
                    this.hide(queue, item, seconds)
                        .then((popReceipt) => {
                            if (popReceipt) item.popReceipt = popReceipt;
                        })
                        .catch(() => undefined),
                ),
            );
        }, Math.max(250, visibilityMs / 2));
        try {
            return await work();
        } finally {
            clearInterval(renew);
            await renewing;
        }
    }

    /** Hides a received message for `seconds` more; returns the new pop receipt. */
    async hide(queue: QueueClient, message: { queueMessageId: string; popReceipt: string }, seconds: number): Promise<string | undefined> {
        try {
            const response = await queue.updateMessage(message.queueMessageId, message.popReceipt, undefined, Math.max(0, Math.min(seconds, MAX_VISIBILITY_SECONDS)));
            return response.popReceipt;
        } catch (error) {
            if (isNotFound(error)) return undefined;
            throw error;
        }
    }
}

export function validateTaskHubName(name: string): void {
    if (!/^[a-zA-Z][a-zA-Z0-9]{2,44}$/.test(name)) {
        throw new Error(`Task hub name '${name}' is invalid: it must start with a letter, contain only letters and digits, and be 3 to 45 characters long (host.json extensions.durableTask.hubName).`);
    }
}
