import { randomUUID } from "node:crypto";
import { fromRpcValue, type FunctionRunner } from "../functionRunner";
import type { HostLogger } from "../logger";
import { errorMessage } from "../worker/invoker";
import {
    ENTITY_OP_EVENT,
    ENTITY_RELEASE_EVENT,
    LOCK_ACQUIRED_RESULT,
    ENDED_EXECUTIONS,
    RECENT_MESSAGE_IDS,
    entityRequestMessage,
    entityResponseMessage,
    parseSchedulerId,
    parseSchedulerState,
    schedulerId,
    type EntityId,
    type EntityRelease,
    type EntityRequest,
    type SchedulerState,
} from "./entityMessages";
import type { HistoryEvent } from "./historyEvent";
import type { HistoryStore, InstanceRecord, Sentinel } from "./historyStore";
import type { ControlMessage, OutboundMessage } from "./messages";
import type { DurableFunctionLookup, Disposition } from "./orchestrationRunner";

/** What the entity trigger returns (`EntityState` of the durable-functions SDK). */
interface SdkEntityResult {
    entityExists?: boolean;
    entityState?: string;
    results?: ({ isError: boolean; duration?: number; startTime?: number; result?: string } | null)[];
    signals?: { target: EntityId; name: string; input?: string }[];
}

interface EntityInstance {
    instanceId: string;
    entity: EntityId;
    record: InstanceRecord | undefined;
    sentinel: Sentinel | undefined;
    history: HistoryEvent[];
}

/**
 * Runs durable entities the way the extension's entity scheduler does: an entity `@name@key`
 * takes its messages (operations, lock requests, lock releases) in order, runs the operations
 * that are not held back by another orchestration's lock as one batch through the entity
 * function, answers callers, forwards lock requests along their lock set, and keeps its state
 * as the input of its next execution (continue-as-new style, one execution per batch).
 *
 * Each batch is committed like an orchestration episode (history rows + sentinel with the
 * outbox first, then the Instances row, then the messages are sent); the ids of applied
 * messages are kept in the state, so a redelivered message is recognised and skipped.
 */
export class EntityRunner {
    constructor(
        private readonly store: HistoryStore,
        private readonly functions: DurableFunctionLookup,
        private readonly runner: FunctionRunner,
        private readonly logger: HostLogger,
    ) {}

    async process(instanceId: string, messages: ControlMessage[]): Promise<Disposition[]> {
        const snapshot = await this.store.load(instanceId);
        const instance: EntityInstance = { instanceId, entity: parseSchedulerId(instanceId), ...snapshot };
        await this.#recover(instance);
        const scheduler = currentSchedulerState(instance.history);
        const seen = new Set(scheduler.recent);
        const accepted: ControlMessage[] = [];
        const ordered = [...messages].sort((a, b) => a.sentAt.localeCompare(b.sentAt));
        for (const message of ordered) {
            const name = message.event.Name;
            if (seen.has(message.id)) {
                this.logger.host("debug", `Durable: entity '${instanceId}' drops message ${message.id}: already applied.`);
                continue;
            }
            if (message.event.EventType !== "EventRaised" || (name !== ENTITY_OP_EVENT && name !== ENTITY_RELEASE_EVENT) || !message.event.Input) {
                this.logger.warn(`Durable: entity '${instanceId}' drops a ${message.event.EventType} message '${name ?? ""}': entities only take operations, lock requests and releases.`);
                continue;
            }
            seen.add(message.id);
            accepted.push(message);
            if (name === ENTITY_OP_EVENT) scheduler.queue.push({ kind: "request", request: JSON.parse(message.event.Input) as EntityRequest });
            else scheduler.queue.push({ kind: "release", release: JSON.parse(message.event.Input) as EntityRelease });
        }
        if (accepted.length > 0) await this.#batch(instance, scheduler, accepted);
        return messages.map(() => ({ kind: "delete" }));
    }

    async #batch(instance: EntityInstance, scheduler: SchedulerState, accepted: ControlMessage[]): Promise<void> {
        const before = JSON.stringify({ ...scheduler, queue: [], recent: [] });
        const outbox: OutboundMessage[] = [];
        const operations = this.#takeRunnable(instance, scheduler, outbox);
        if (operations.length > 0) await this.#runOperations(instance, scheduler, operations, outbox);
        scheduler.recent = [...scheduler.recent, ...accepted.map((m) => m.id)].slice(-RECENT_MESSAGE_IDS);
        const stateJson = JSON.stringify(scheduler);
        const now = new Date().toISOString();
        const events: HistoryEvent[] = [
            { EventType: "OrchestratorStarted", EventId: -1, Timestamp: now },
            { EventType: "ExecutionStarted", EventId: -1, Timestamp: now, Name: instance.entity.name, Input: before, Version: "" },
            ...accepted.map((m): HistoryEvent => ({ EventType: "EventRaised", EventId: -1, Timestamp: m.sentAt, Name: m.event.Name, Input: m.event.Input, MessageId: m.id })),
            { EventType: "ExecutionCompleted", EventId: -1, Timestamp: now, OrchestrationStatus: "ContinuedAsNew", Result: stateJson },
            { EventType: "OrchestratorCompleted", EventId: -1, Timestamp: now },
        ];
        const executionId = randomUUID().replace(/-/g, "");
        instance.sentinel = await this.store.commit(instance.instanceId, { executionId, startIndex: 0, events, outbox, previous: instance.sentinel });
        instance.history = events;
        await this.#syncRecord(instance);
        await this.#sendOutbox(instance);
    }

    /**
     * Takes from the queue, in order, every request the entity may handle now: operations while
     * unlocked or from the lock holder, lock requests while unlocked, releases by the holder.
     * A release may free requests that were held back, so the scan starts over after one.
     */
    #takeRunnable(instance: EntityInstance, scheduler: SchedulerState, outbox: OutboundMessage[]): EntityRequest[] {
        const operations: EntityRequest[] = [];
        let rescan = true;
        while (rescan) {
            rescan = false;
            for (let i = 0; i < scheduler.queue.length; i++) {
                const item = scheduler.queue[i];
                if (!item) continue;
                if (item.kind === "release") {
                    scheduler.queue.splice(i, 1);
                    this.#release(instance, scheduler, item.release);
                    rescan = true;
                    break;
                }
                const request = item.request;
                if (request.lockset && request.parentExecution !== undefined && scheduler.ended?.includes(request.parentExecution)) {
                    scheduler.queue.splice(i, 1);
                    i--;
                    this.logger.host("debug", `Durable: entity '${instance.instanceId}' drops a lock request of '${request.parent ?? "?"}', whose execution has ended.`);
                    continue;
                }
                if (scheduler.lockedBy !== undefined && request.parent !== scheduler.lockedBy) continue;
                scheduler.queue.splice(i, 1);
                if (request.lockset) {
                    scheduler.lockedBy = request.parent;
                    outbox.push({ message: this.#lockGranted(instance, request) });
                    rescan = true;
                    break;
                }
                operations.push(request);
                i--;
            }
        }
        return operations;
    }

    /**
     * A release by the lock holder unlocks. A release by an execution that ended before its lock
     * request got here drops that request (queued, or when it comes later).
     */
    #release(instance: EntityInstance, scheduler: SchedulerState, release: EntityRelease): void {
        if (scheduler.lockedBy === release.parent) {
            scheduler.lockedBy = undefined;
            this.logger.host("debug", `Durable: entity '${instance.instanceId}' released by '${release.parent}'.`);
            return;
        }
        if (release.parentExecution !== undefined) {
            scheduler.ended = [...(scheduler.ended ?? []), release.parentExecution].slice(-ENDED_EXECUTIONS);
            return;
        }
        this.logger.warn(`Durable: entity '${instance.instanceId}' ignores a release from '${release.parent}', which does not hold its lock.`);
    }

    /** Passes a lock request on to the next entity of its lock set, or tells the orchestration it holds them all. */
    #lockGranted(instance: EntityInstance, request: EntityRequest): ControlMessage {
        const lockset = request.lockset ?? [];
        const next = (request.pos ?? 0) + 1;
        const nextEntity = lockset[next];
        if (nextEntity) return entityRequestMessage(schedulerId(nextEntity), { ...request, pos: next });
        this.logger.host("debug", `Durable: '${request.parent ?? "?"}' holds the locks on ${lockset.map(schedulerId).join(", ")} (last: '${instance.instanceId}').`);
        return entityResponseMessage(request.parent ?? "", request.parentExecution, request.id, { result: LOCK_ACQUIRED_RESULT });
    }

    async #runOperations(instance: EntityInstance, scheduler: SchedulerState, operations: EntityRequest[], outbox: OutboundMessage[]): Promise<void> {
        const { name, key } = instance.entity;
        const fn = this.functions.entity(name);
        let outcome: SdkEntityResult | undefined;
        let failure: string | undefined;
        if (!fn) {
            failure = `The function '${name}' doesn't exist, is disabled, or is not an entity function. Additional info: The following are the known entity functions: ${this.functions.entityNames().map((n) => `'${n}'`).join(", ") || "(none)"}.`;
        } else {
            const payload = {
                self: { name, key },
                exists: scheduler.exists,
                state: scheduler.exists ? scheduler.state : undefined,
                batch: operations.map((op) => ({ id: op.id, name: op.op, signal: op.signal === true, input: op.input })),
            };
            try {
                const { response } = await this.runner.run(fn, { json: JSON.stringify(payload) }, { reason: `(Entity) '${instance.instanceId}', ${operations.length} operation(s)` });
                const value = fromRpcValue(response.returnValue);
                if (value && typeof value === "object" && Array.isArray((value as SdkEntityResult).results)) outcome = value as SdkEntityResult;
                else failure = `Entity function '${fn.name}' did not return an entity state; register it with df.app.entity().`;
            } catch (error) {
                failure = errorMessage(error);
            }
        }
        if (outcome) {
            scheduler.exists = outcome.entityExists === true;
            scheduler.state = scheduler.exists ? outcome.entityState : undefined;
            for (const signal of outcome.signals ?? []) {
                outbox.push({ message: entityRequestMessage(schedulerId(signal.target), { id: randomUUID(), op: signal.name, signal: true, input: signal.input === "" ? undefined : signal.input, parent: instance.instanceId, timestamp: new Date().toISOString() }) });
            }
        } else {
            this.logger.warn(`Durable: entity '${instance.instanceId}': the batch of ${operations.length} operation(s) failed; the state is unchanged. ${failure ?? ""}`);
        }
        operations.forEach((op, index) => {
            const result = outcome?.results?.[index];
            const isError = !outcome || !result || result.isError;
            if (isError && outcome) this.logger.warn(`Durable: entity '${instance.instanceId}' operation '${op.op ?? ""}' failed: ${result?.result ?? "no result"}`);
            if (op.signal || !op.parent) return;
            const response = isError ? { result: result?.result ?? JSON.stringify(failure ?? "The operation failed."), exceptionType: "Error" } : { result: result.result };
            outbox.push({ message: entityResponseMessage(op.parent, op.parentExecution, op.id, response) });
        });
    }

    /** Finishes what a crash may have interrupted after the last commit: unsent messages, a stale Instances row. */
    async #recover(instance: EntityInstance): Promise<void> {
        if (!instance.sentinel) return;
        if (!instance.sentinel.outboxSent) await this.#sendOutbox(instance);
        if (instance.record?.executionId !== instance.sentinel.executionId) await this.#syncRecord(instance);
    }

    async #sendOutbox(instance: EntityInstance): Promise<void> {
        if (instance.sentinel) instance.sentinel = await this.store.sendOutbox(instance.instanceId, instance.sentinel);
    }

    /** The Instances row: the scheduler state as input; Completed once the entity is deleted and idle, as the extension's entity scheduler ends. */
    async #syncRecord(instance: EntityInstance): Promise<void> {
        if (!instance.sentinel) return;
        const scheduler = currentSchedulerState(instance.history);
        const last = instance.history[instance.history.length - 1];
        const updated = new Date(last?.Timestamp ?? Date.now());
        const idle = !scheduler.exists && scheduler.queue.length === 0 && scheduler.lockedBy === undefined;
        const record: InstanceRecord = {
            instanceId: instance.instanceId,
            executionId: instance.sentinel.executionId,
            name: instance.entity.name,
            version: "",
            input: JSON.stringify(scheduler),
            createdTime: instance.record?.createdTime ?? updated,
            lastUpdatedTime: updated,
            completedTime: idle ? updated : undefined,
            runtimeStatus: idle ? "Completed" : "Running",
        };
        await this.store.writeRecord(record);
        instance.record = record;
    }
}

/** The entity's state after the last committed batch (the Result of its last ContinuedAsNew). */
export function currentSchedulerState(history: HistoryEvent[]): SchedulerState {
    for (let i = history.length - 1; i >= 0; i--) {
        const event = history[i] as HistoryEvent;
        if (event.EventType === "ExecutionCompleted") return parseSchedulerState(event.Result);
    }
    return parseSchedulerState(undefined);
}
