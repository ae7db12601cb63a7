import { BindingData, hasBindingExpressions, resolveBindingProperty } from "./bindings/bindingExpressions";
import { StorageBindingRunner, type BoundStorageBindings } from "./bindings/storageBindingRunner";
import { withJsonInputProperties } from "./bindings/triggerInputBindingData";
import type { AppSettings } from "./config/appSettings";
import type { HostFunction, QueueBindingTarget } from "./functionCatalog";
import type { HostLogger } from "./logger";
import { isNotFound, StorageAccount } from "./storage/storageAccount";
import type { RpcInvocationResponse, RpcParameterBinding, RpcTypedData } from "./worker/coreTypes";
import type { InvocationRequest, InvocationResult, Invoker } from "./worker/invoker";

export type QueueMessageEncoding = "base64" | "none";

export interface RunOptions {
    reason: string;
    triggerMetadata?: Record<string, RpcTypedData>;
    /** The caller's W3C trace headers (HTTP); the invocation gets a new trace otherwise. */
    incomingTrace?: { traceparent?: string; tracestate?: string };
    onInvocationId?: (invocationId: string) => void;
    retryContext?: InvocationRequest["retryContext"];
}

/**
 * Invokes a function with its trigger data plus the inputs the host adds (durable client
 * binding data, blob and table inputs), then writes its storage-queue, blob and table output
 * bindings, as the host does after a successful invocation.
 */
export class FunctionRunner {
    readonly #accounts = new Map<string, StorageAccount>();
    readonly #createdQueues = new Set<string>();
    readonly #storageBindings: StorageBindingRunner;

    constructor(
        private readonly invoker: Invoker,
        private readonly settings: AppSettings,
        private readonly logger: HostLogger,
        readonly queueEncoding: QueueMessageEncoding,
        private readonly durableClientData: (fn: HostFunction, bindingName: string) => unknown,
    ) {
        this.#storageBindings = new StorageBindingRunner((connection, what) => this.account(connection, what), logger);
    }

    /** The storage account named by a binding's `connection` (default AzureWebJobsStorage). */
    account(connection: string | undefined, what: string): StorageAccount {
        const connectionString = this.settings.connectionString(connection, what);
        let account = this.#accounts.get(connectionString);
        if (!account) {
            account = new StorageAccount(connectionString);
            this.#accounts.set(connectionString, account);
        }
        return account;
    }

    async run(fn: HostFunction, trigger: RpcTypedData | undefined, options: RunOptions): Promise<InvocationResult> {
        const inputData: RpcParameterBinding[] = [{ name: fn.triggerBindingName, data: trigger ?? null }];
        for (const bindingName of fn.durableClientBindings) {
            inputData.push({ name: bindingName, data: { json: JSON.stringify(this.durableClientData(fn, bindingName)) } });
        }
        const triggerMetadata = withInputBindingData(fn, trigger, options.triggerMetadata);
        let storage: BoundStorageBindings;
        let queueOutputs: QueueBindingTarget[];
        try {
            queueOutputs = resolveQueueNames(fn, triggerMetadata);
            storage = this.#storageBindings.bind(fn.name, fn.storageBindings, triggerMetadata);
            inputData.push(...(await storage.readInputs()));
        } catch (error) {
            this.logger.function("error", fn.name, undefined, `Exception while executing function: Functions.${fn.name}. ${(error as Error).message}`);
            throw error;
        }
        const result = await this.invoker.invoke(fn.captured, {
            inputData,
            triggerMetadata,
            incomingTrace: options.incomingTrace,
            reason: options.reason,
            onInvocationId: options.onInvocationId,
            retryContext: options.retryContext,
        });
        await this.#writeQueueOutputs(fn, queueOutputs, result.response);
        await storage.writeOutputs(result.response);
        return result;
    }

    /** Encodes a message text the way the queue extension does (host.json extensions.queues.messageEncoding). */
    encode(text: string | Uint8Array): string {
        if (this.queueEncoding === "none") return typeof text === "string" ? text : Buffer.from(text).toString("utf8");
        return Buffer.from(text).toString("base64");
    }

    async sendQueueMessage(target: QueueBindingTarget, text: string | Uint8Array, what: string): Promise<void> {
        const queue = this.account(target.connection, what).queue(target.queueName);
        const body = this.encode(text);
        try {
            await queue.sendMessage(body);
        } catch (error) {
            if (!isNotFound(error)) throw error;
            await queue.createIfNotExists();
            await queue.sendMessage(body);
        }
    }

    async #writeQueueOutputs(fn: HostFunction, queueOutputs: QueueBindingTarget[], response: RpcInvocationResponse): Promise<void> {
        for (const output of queueOutputs) {
            const data = output.bindingName === "$return" ? response.returnValue : response.outputData?.find((o) => o.name === output.bindingName)?.data;
            const messages = toQueueMessages(data);
            if (messages.length === 0) continue;
            const what = `Function '${fn.name}' output binding '${output.bindingName}'`;
            const key = `${output.connection ?? ""}|${output.queueName}`;
            if (!this.#createdQueues.has(key)) {
                await this.account(output.connection, what).queue(output.queueName).createIfNotExists();
                this.#createdQueues.add(key);
            }
            for (const message of messages) await this.sendQueueMessage(output, message, what);
            this.logger.function("debug", fn.name, undefined, `Wrote ${messages.length} message(s) to queue '${output.queueName}'.`);
        }
    }
}

/**
 * The trigger data a JSON object input adds: a queue message's properties (the script host's
 * ApplyBindingData), an activity's input properties (the Durable extension's activity binding
 * data), so `backups/{backupPath}` on an activity's blob output resolves from its input.
 */
function withInputBindingData(fn: HostFunction, trigger: RpcTypedData | undefined, metadata: Record<string, RpcTypedData> | undefined): Record<string, RpcTypedData> | undefined {
    if (fn.queueTrigger && typeof trigger?.string === "string") return withJsonInputProperties(metadata, trigger.string);
    if (fn.triggerType.toLowerCase() === "activitytrigger" && typeof trigger?.json === "string") return withJsonInputProperties(metadata, trigger.json);
    return metadata;
}

/** Output queue names with `{...}` expressions resolved from the trigger data (lower-cased, as at load). */
function resolveQueueNames(fn: HostFunction, triggerMetadata: Record<string, RpcTypedData> | undefined): QueueBindingTarget[] {
    if (!fn.queueOutputs.some((o) => hasBindingExpressions(o.queueName))) return fn.queueOutputs;
    const data = BindingData.fromTriggerMetadata(triggerMetadata);
    return fn.queueOutputs.map((o) => (hasBindingExpressions(o.queueName) ? { ...o, queueName: resolveBindingProperty(fn.name, o.bindingName, o.queueName, data).toLowerCase() } : o));
}

/**
 * The messages an output value becomes: a string is one message, bytes are one binary message,
 * an array is one message per element (as the host's collector does), anything else is JSON.
 */
export function toQueueMessages(data: RpcTypedData | null | undefined): (string | Uint8Array)[] {
    if (!data) return [];
    if (typeof data.string === "string") return [data.string];
    if (data.bytes) return [data.bytes];
    if (typeof data.int === "number") return [String(data.int)];
    if (typeof data.double === "number") return [String(data.double)];
    if (typeof data.json === "string") {
        const value = JSON.parse(data.json) as unknown;
        if (Array.isArray(value)) return value.map((item) => (typeof item === "string" ? item : JSON.stringify(item)));
        return [data.json];
    }
    if (data.collectionString?.string) return data.collectionString.string;
    return [];
}

/** An rpc value as the host sees it (e.g. an activity's return value): strings stay strings, JSON is parsed. */
export function fromRpcValue(data: RpcTypedData | null | undefined): unknown {
    if (!data) return undefined;
    if (typeof data.string === "string") return data.string;
    if (typeof data.json === "string") return JSON.parse(data.json) as unknown;
    if (typeof data.int === "number") return data.int;
    if (typeof data.double === "number") return data.double;
    if (data.bytes) return Buffer.from(data.bytes).toString("base64");
    if (data.collectionString?.string) return data.collectionString.string;
    if (data.collectionDouble?.double) return data.collectionDouble.double;
    if (data.collectionSint64?.sint64) return data.collectionSint64.sint64;
    return undefined;
}
