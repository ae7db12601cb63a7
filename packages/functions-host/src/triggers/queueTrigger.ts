import { randomUUID } from "node:crypto";
import type { QueueClient } from "@azure/storage-queue";
import type { HostFunction } from "../functionCatalog";
import type { FunctionRunner } from "../functionRunner";
import type { HostLogger } from "../logger";
import { isNotFound } from "../storage/storageAccount";
import { PollLoop } from "../util/pollLoop";
import type { RpcTypedData } from "../worker/coreTypes";
import { drain } from "../util/drain";

export interface QueueTriggerOptions {
    batchSize: number;
    newBatchThreshold: number;
    maxDequeueCount: number;
    /** How long a failed message stays invisible before its next attempt (host.json visibilityTimeout). */
    visibilityTimeoutMs: number;
    maxPollingIntervalMs: number;
}

interface ReceivedMessage {
    messageId: string;
    popReceipt: string;
    messageText: string;
    dequeueCount: number;
    insertedOn: Date;
    expiresOn: Date;
    nextVisibleOn: Date;
}

/** While a message is being processed the host keeps it invisible, renewing at half this period. */
const PROCESSING_VISIBILITY_SECONDS = 600;

/**
 * A queue trigger as the storage extension runs it: poll, run up to `batchSize` messages at a
 * time, delete on success, on failure make the message visible again after `visibilityTimeout`,
 * and after `maxDequeueCount` failed attempts move it to `<queue>-poison`.
 */
export class QueueTriggerListener {
    readonly #loop: PollLoop;
    readonly #queue: QueueClient;
    readonly #poisonQueue: QueueClient;
    readonly #inFlight = new Set<Promise<void>>();
    #poisonCreated = false;

    constructor(
        private readonly fn: HostFunction,
        private readonly runner: FunctionRunner,
        private readonly logger: HostLogger,
        private readonly options: QueueTriggerOptions,
        minIdleMs: number,
    ) {
        const target = fn.queueTrigger;
        if (!target) throw new Error(`Function '${fn.name}' is not a queue trigger.`);
        const account = runner.account(target.connection, `Function '${fn.name}' queue trigger`);
        this.#queue = account.queue(target.queueName);
        this.#poisonQueue = account.queue(`${target.queueName}-poison`);
        this.#loop = new PollLoop(() => this.#poll(), {
            minIdleMs,
            maxIdleMs: options.maxPollingIntervalMs,
            onError: (error) => logger.warn(`Queue trigger '${fn.name}' could not poll '${target.queueName}': ${(error as Error).message}`),
        });
    }

    start(): void {
        this.#loop.start();
    }

    wake(): void {
        this.#loop.wake();
    }

    async stop(drainMs: number): Promise<void> {
        await this.#loop.stop();
        await drain(this.#inFlight, drainMs);
    }

    async #poll(): Promise<number> {
        const free = this.options.batchSize - this.#inFlight.size;
        if (free <= 0 || this.#inFlight.size > this.options.newBatchThreshold) {
            await Promise.race([...this.#inFlight]);
            return 1;
        }
        let items: ReceivedMessage[];
        try {
            const response = await this.#queue.receiveMessages({ numberOfMessages: Math.min(32, free), visibilityTimeout: PROCESSING_VISIBILITY_SECONDS });
            items = response.receivedMessageItems;
        } catch (error) {
            if (isNotFound(error)) return 0; // the real listener waits for the queue to exist
            throw error;
        }
        for (const message of items) {
            const task = this.#process(message).catch((error: unknown) =>
                this.logger.error(`Queue trigger '${this.fn.name}' failed to complete message ${message.messageId}: ${(error as Error).message}`),
            );
            this.#inFlight.add(task);
            void task.finally(() => this.#inFlight.delete(task));
        }
        return items.length;
    }

    async #process(message: ReceivedMessage): Promise<void> {
        const queueName = this.fn.queueTrigger?.queueName ?? "";
        let popReceipt = message.popReceipt;
        const decoded = this.#decode(message.messageText);
        if (decoded === undefined) {
            this.logger.warn(`Queue trigger '${this.fn.name}': message ${message.messageId} in '${queueName}' is not valid base64 (host.json extensions.queues.messageEncoding is "base64"); moving it to '${queueName}-poison'.`);
            await this.#moveToPoison(message, popReceipt);
            return;
        }
        const renew = setInterval(() => {
            this.#queue
                .updateMessage(message.messageId, popReceipt, undefined, PROCESSING_VISIBILITY_SECONDS)
                .then((r) => {
                    if (r.popReceipt) popReceipt = r.popReceipt;
                })
                .catch(() => undefined);
        }, (PROCESSING_VISIBILITY_SECONDS * 1000) / 2);
        renew.unref();
        let failed = false;
        try {
            await this.runner.run(this.fn, this.#triggerData(decoded), {
                reason: `New queue message detected on '${queueName}'.`,
                triggerMetadata: this.#metadata(message, decoded),
            });
        } catch {
            failed = true;
        } finally {
            clearInterval(renew);
        }
        if (!failed) {
            await this.#queue.deleteMessage(message.messageId, popReceipt).catch((error: unknown) => {
                if (!isNotFound(error)) throw error;
            });
            return;
        }
        if (message.dequeueCount >= this.options.maxDequeueCount) {
            this.logger.warn(`Message has reached MaxDequeueCount of ${this.options.maxDequeueCount}. Moving message to queue '${queueName}-poison'.`);
            await this.#moveToPoison(message, popReceipt);
        } else {
            await this.#queue.updateMessage(message.messageId, popReceipt, undefined, Math.round(this.options.visibilityTimeoutMs / 1000)).catch((error: unknown) => {
                if (!isNotFound(error)) throw error;
            });
        }
    }

    #decode(text: string): Buffer | undefined {
        if (this.runner.queueEncoding === "none") return Buffer.from(text, "utf8");
        const compact = text.replace(/\s+/g, "");
        if (compact.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(compact)) return undefined;
        return Buffer.from(compact, "base64");
    }

    /** As the host sends a queue message: binary for dataType "binary", else text (the worker JSON-parses it when it can). */
    #triggerData(body: Buffer): RpcTypedData {
        if (this.fn.queueTrigger?.dataType === "binary") return { bytes: body };
        return { string: body.toString("utf8") };
    }

    #metadata(message: ReceivedMessage, body: Buffer): Record<string, RpcTypedData> {
        return {
            QueueTrigger: { string: body.toString("utf8") },
            DequeueCount: { json: String(message.dequeueCount) },
            Id: { string: message.messageId },
            PopReceipt: { string: message.popReceipt },
            InsertionTime: { string: message.insertedOn.toISOString() },
            ExpirationTime: { string: message.expiresOn.toISOString() },
            NextVisibleTime: { string: message.nextVisibleOn.toISOString() },
            sys: { json: JSON.stringify({ MethodName: this.fn.name, UtcNow: new Date().toISOString(), RandGuid: randomUUID() }) },
        };
    }

    async #moveToPoison(message: ReceivedMessage, popReceipt: string): Promise<void> {
        if (!this.#poisonCreated) {
            await this.#poisonQueue.createIfNotExists();
            this.#poisonCreated = true;
        }
        await this.#poisonQueue.sendMessage(message.messageText);
        await this.#queue.deleteMessage(message.messageId, popReceipt).catch((error: unknown) => {
            if (!isNotFound(error)) throw error;
        });
    }
}
