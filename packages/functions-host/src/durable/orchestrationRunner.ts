import { randomUUID } from "node:crypto";
import type { HostFunction } from "../functionCatalog";
import { fromRpcValue, type FunctionRunner } from "../functionRunner";
import type { HostLogger } from "../logger";
import { errorMessage } from "../worker/invoker";
import { isTerminal, toSdkHistory, viewExecution, type ExecutionView, type HistoryEvent, type ParentInstance, type RuntimeStatus } from "./historyEvent";
import type { HistoryStore, InstanceRecord, InstanceSnapshot, Sentinel } from "./historyStore";
import { controlMessage, type ControlMessage, type OutboundMessage } from "./messages";
import { ENTITY_OP_EVENT, ENTITY_RELEASE_EVENT, entityReleaseMessage, entityRequestMessage, type EntityRequest } from "./entityMessages";
import {
    ActionType,
    ENTITY_ACTIONS,
    actionInputJson,
    entityTarget,
    checkDeterminism,
    computeRetryDelay,
    flattenActions,
    HTTP_ACTIVITY_NAME,
    idConsumingActions,
    recordedActionOps,
    unsupportedActionMessage,
    type OrchestratorResult,
    type SdkAction,
    type SdkRetryOptions,
} from "./orchestratorActions";
import type { TaskHub } from "./taskHub";
import { httpPollAfter, httpRequestProblem, locationPollRequest } from "./httpActivity";
import { activeHistory, isRewindEvent, planRewind } from "./rewind";
import { VERSION_MISMATCH_ERROR_TYPE, VERSION_MISMATCH_MESSAGE, versionAllowed, type VersioningOptions } from "./versioning";

/** The durable functions the app registered, as the emulator needs to find them. */
export interface DurableFunctionLookup {
    orchestrator(name: string | undefined): HostFunction | undefined;
    activity(name: string | undefined): HostFunction | undefined;
    orchestratorNames(): string[];
    activityNames(): string[];
    entity(name: string | undefined): HostFunction | undefined;
    entityNames(): string[];
}

/** What to do with a control message after processing: delete it, or look at it again later. */
export type Disposition = { kind: "delete" } | { kind: "retry"; afterMs: number };

type Decision =
    | { kind: "drop"; reason: string }
    | { kind: "retry"; afterMs: number }
    | { kind: "start"; conflict: boolean }
    | { kind: "control" }
    | { kind: "rewind" }
    | { kind: "event"; key: string; bookkeeping: boolean };

const MAX_SHORT_TIMER_MS = 6 * 86_400_000;
const LONG_TIMER_INTERVAL_MS = 3 * 86_400_000;
const MAX_EVENTS_PER_EPISODE = 50;
/** How long the messages of an instance whose version this host rejects wait before they are looked at again. */
const VERSION_REJECT_RETRY_MS = 5000;

interface InstanceState {
    instanceId: string;
    record: InstanceRecord | undefined;
    sentinel: Sentinel | undefined;
    history: HistoryEvent[];
    view: ExecutionView;
}

interface Completion {
    status: Exclude<RuntimeStatus, "Pending" | "Running" | "Suspended">;
    /** JSON text of the output (the reason for Terminated, the message for Failed). */
    output: string;
    failure?: { message: string; details: string; failureDetails?: string };
}

/**
 * Applies control-queue messages to one orchestration instance: each batch of new events is one
 * episode, in which the real SDK replays the whole history and returns its cumulative actions;
 * the host checks them against the history, schedules the new ones (with the host's retry and
 * long-timer bookkeeping) and commits the episode to the History table before sending its
 * messages. Redelivered messages are recognised and skipped, so a crash at any point neither
 * loses nor double-applies an event.
 */
export class OrchestrationRunner {
    constructor(
        private readonly hub: TaskHub,
        private readonly store: HistoryStore,
        private readonly functions: DurableFunctionLookup,
        private readonly runner: FunctionRunner,
        private readonly logger: HostLogger,
        private readonly versioning: VersioningOptions = { defaultVersion: "", matchStrategy: "CurrentOrOlder", failureStrategy: "Reject" },
    ) {}

    async process(instanceId: string, messages: ControlMessage[]): Promise<Disposition[]> {
        const state = this.#state(instanceId, await this.store.load(instanceId));
        await this.#recover(state);
        const dispositions: Disposition[] = messages.map(() => ({ kind: "delete" }));
        const order = messages.map((_m, i) => i).sort((a, b) => (messages[a] as ControlMessage).sentAt.localeCompare((messages[b] as ControlMessage).sentAt) || a - b);
        let chunk: HistoryEvent[] = [];
        const chunkKeys = new Set<string>();
        const flush = async () => {
            if (chunk.length === 0) return;
            const events = chunk;
            chunk = [];
            chunkKeys.clear();
            await this.#episode(state, events);
        };
        for (const index of order) {
            const message = messages[index] as ControlMessage;
            let decision = this.#classify(state, message, chunkKeys);
            if (this.#rejectsVersion(state, message, decision)) decision = { kind: "retry", afterMs: VERSION_REJECT_RETRY_MS };
            switch (decision.kind) {
                case "drop":
                    this.logger.host("debug", `Durable: instance '${instanceId}' drops ${message.event.EventType} message ${message.id}: ${decision.reason}.`);
                    break;
                case "retry":
                    dispositions[index] = { kind: "retry", afterMs: decision.afterMs };
                    break;
                case "start":
                    await flush();
                    if (decision.conflict) await this.#rejectChildStart(message);
                    else await this.#start(state, message);
                    break;
                case "control":
                    await flush();
                    await this.#control(state, message);
                    break;
                case "rewind":
                    await flush();
                    await this.#rewind(state, message);
                    break;
                case "event": {
                    const event: HistoryEvent = { ...message.event, MessageId: message.id };
                    if (decision.bookkeeping) {
                        await flush();
                        chunk = [event];
                        await flush();
                    } else {
                        chunk.push(event);
                        chunkKeys.add(decision.key);
                        if (chunk.length >= MAX_EVENTS_PER_EPISODE) await flush();
                    }
                    break;
                }
            }
        }
        await flush();
        return dispositions;
    }

    #state(instanceId: string, snapshot: InstanceSnapshot): InstanceState {
        return { instanceId, ...snapshot, view: viewExecution(snapshot.history, snapshot.sentinel?.executionId) };
    }

    /** Finishes what a crash may have interrupted after the last commit: unsent messages, a stale Instances row. */
    async #recover(state: InstanceState): Promise<void> {
        if (!state.sentinel) return;
        if (!state.sentinel.outboxSent) await this.#sendOutbox(state);
        const record = state.record;
        if (state.view.started && (!record || record.executionId === state.sentinel.executionId)) {
            const projected = projectedStatus(state.view.status);
            if (!record || record.runtimeStatus !== projected || record.lastUpdatedTime.getTime() < Date.parse(state.view.lastUpdatedTime ?? "")) await this.#syncRecord(state);
        }
    }

    #classify(state: InstanceState, message: ControlMessage, chunkKeys: Set<string>): Decision {
        const event = message.event;
        const view = state.view;
        const current = state.sentinel?.executionId;
        const active = state.sentinel !== undefined && (view.status === "Running" || view.status === "Suspended");

        if (event.EventType === "ExecutionStarted") {
            if (current !== undefined && current === message.executionId) return { kind: "drop", reason: "this execution already started" };
            if (message.continuedFrom !== undefined) {
                return current === message.continuedFrom && view.status === "ContinuedAsNew" ? { kind: "start", conflict: false } : { kind: "drop", reason: "stale continue-as-new" };
            }
            if (event.ParentInstance !== undefined) return { kind: "start", conflict: active };
            if (state.record?.executionId === message.executionId && !active) return { kind: "start", conflict: false };
            return { kind: "drop", reason: "a newer start replaced this one" };
        }
        if (!state.sentinel || !view.started) {
            if (state.record?.runtimeStatus === "Pending") return { kind: "retry", afterMs: 250 };
            return { kind: "drop", reason: "no such instance" };
        }
        if (message.executionId !== undefined && message.executionId !== current) return { kind: "drop", reason: "it is for an earlier execution" };
        if (view.status === "ContinuedAsNew") return message.executionId !== undefined ? { kind: "drop", reason: "the execution continued as new" } : { kind: "retry", afterMs: 100 };
        if (isRewindEvent(event)) {
            if (view.status === "Failed") return { kind: "rewind" };
            this.logger.warn(`Durable: instance '${state.instanceId}' is ${view.status}; only a Failed instance can be rewound, the rewind is dropped.`);
            return { kind: "drop", reason: `a ${view.status} instance cannot be rewound` };
        }
        if (isTerminal(view.status)) return { kind: "drop", reason: `the instance is ${view.status}` };
        if (view.appliedMessageIds.has(message.id) || chunkKeys.has(`m:${message.id}`)) return { kind: "drop", reason: "already applied" };

        switch (event.EventType) {
            case "ExecutionTerminated":
            case "ExecutionSuspended":
            case "ExecutionResumed":
                return { kind: "control" };
            default:
                break;
        }
        if (view.status === "Suspended") return { kind: "retry", afterMs: 300 };

        switch (event.EventType) {
            case "TaskCompleted":
            case "TaskFailed":
            case "SubOrchestrationInstanceCompleted":
            case "SubOrchestrationInstanceFailed": {
                const id = event.TaskScheduledId ?? -1;
                const op = view.ops.get(id);
                const expected = event.EventType.startsWith("Task") ? "TaskScheduled" : "SubOrchestrationInstanceCreated";
                if (!op || op.EventType !== expected) return { kind: "drop", reason: `no ${expected} with id ${id}` };
                if (view.resolved.has(id) || chunkKeys.has(`r:${id}`)) return { kind: "drop", reason: `task ${id} already has a result` };
                const failed = event.EventType.endsWith("Failed");
                const polls = !failed && op.Name === HTTP_ACTIVITY_NAME && httpPollAfter(op, event) !== undefined;
                return { kind: "event", key: `r:${id}`, bookkeeping: (failed && op.RetryOptions !== undefined) || polls };
            }
            case "TimerFired": {
                const id = event.TimerId ?? -1;
                const op = view.ops.get(id);
                if (!op || op.EventType !== "TimerCreated") return { kind: "drop", reason: `no timer with id ${id}` };
                if (view.resolved.has(id) || chunkKeys.has(`r:${id}`)) return { kind: "drop", reason: `timer ${id} already fired` };
                const due = Date.parse(event.FireAt ?? op.FireAt ?? "") - Date.now();
                if (due > 5) return { kind: "retry", afterMs: due };
                return { kind: "event", key: `r:${id}`, bookkeeping: op.TimerPurpose === "retry" || op.TimerPurpose === "long" || op.TimerPurpose === "http-poll" };
            }
            case "EventRaised":
                return { kind: "event", key: `m:${message.id}`, bookkeeping: false };
            default:
                return { kind: "drop", reason: `unexpected event type ${event.EventType}` };
        }
    }

    async #start(state: InstanceState, message: ControlMessage): Promise<void> {
        const started: HistoryEvent = { ...message.event, EventId: -1, Timestamp: message.sentAt, MessageId: message.id };
        await this.#episode(state, [started], message.executionId ?? randomUUID());
    }

    /** A sub-orchestration start for an instance id that is already running: the parent's task fails. */
    async #rejectChildStart(message: ControlMessage): Promise<void> {
        const parent = JSON.parse(message.event.ParentInstance ?? "{}") as ParentInstance;
        const reason = `An orchestration instance with the id '${message.instanceId}' is already running; a sub-orchestration cannot reuse it.`;
        this.logger.warn(`Durable: ${reason}`);
        await this.hub.send({
            message: controlMessage(
                parent.InstanceId,
                { EventType: "SubOrchestrationInstanceFailed", EventId: -1, Timestamp: new Date().toISOString(), TaskScheduledId: parent.TaskScheduleId, Reason: reason, Details: reason },
                { executionId: parent.ExecutionId, id: `${message.id}:rejected` },
            ),
        });
    }

    /**
     * versionFailureStrategy Reject: work for an instance whose version this host does not run
     * (versionMatchStrategy) is abandoned and looked at again later, so the instance stays as it
     * is (Pending or Running). Like DTFx, which checks the version before it looks at the work
     * item's messages, that holds for terminate, suspend and resume too.
     */
    #rejectsVersion(state: InstanceState, message: ControlMessage, decision: Decision): boolean {
        if (this.versioning.failureStrategy !== "Reject") return false;
        const applies = (decision.kind === "start" && !decision.conflict) || decision.kind === "event" || decision.kind === "rewind" || decision.kind === "control";
        if (!applies) return false;
        const version = decision.kind === "start" ? message.event.Version : state.view.version;
        if (versionAllowed(this.versioning, version)) return false;
        const name = decision.kind === "start" ? message.event.Name : state.view.name;
        this.logger.warn(
            `Durable: instance '${state.instanceId}' (${name ?? "?"}) has version '${version ?? ""}', which this host does not run (defaultVersion '${this.versioning.defaultVersion}', versionMatchStrategy ${this.versioning.matchStrategy}); versionFailureStrategy Reject leaves it waiting, its ${message.event.EventType} message is retried in ${VERSION_REJECT_RETRY_MS / 1000} s.`,
        );
        return true;
    }

    /** Takes the failed results out of a Failed execution's history, sends the failed work again and replays. */
    async #rewind(state: InstanceState, message: ControlMessage): Promise<void> {
        const plan = planRewind(state.history);
        const reason = message.event.Reason ?? "";
        const marker: HistoryEvent = { ...message.event, EventId: -1, Timestamp: this.#episodeTime(state).toISOString(), Input: JSON.stringify(plan.removed), MessageId: message.id };
        const executionId = state.sentinel?.executionId ?? "";
        const outbox: OutboundMessage[] = [];
        for (const op of plan.redo) {
            if (op.EventType === "TaskScheduled") {
                outbox.push({ message: { kind: "workItem", id: randomUUID(), instanceId: state.instanceId, executionId, taskScheduledId: op.EventId, name: op.Name ?? "", input: op.Input, sentAt: new Date().toISOString() } });
            } else if (op.InstanceId) {
                outbox.push({ message: controlMessage(op.InstanceId, { ...message.event, EventId: -1, Timestamp: new Date().toISOString(), Reason: reason }) });
            }
        }
        this.logger.info(`Durable: instance '${state.instanceId}' (${state.view.name}) rewound: ${plan.removed.length} history rows taken out, ${plan.redo.length} failed task(s) run again. Reason: ${reason}`);
        await this.#episode(state, [marker], undefined, outbox);
    }

    async #control(state: InstanceState, message: ControlMessage): Promise<void> {
        const now = this.#episodeTime(state).toISOString();
        const reason = message.event.Input ?? message.event.Reason ?? "";
        const events: HistoryEvent[] = [];
        const outbox: OutboundMessage[] = [];
        if (message.event.EventType === "ExecutionTerminated") {
            const completion: Completion = { status: "Terminated", output: JSON.stringify(reason) };
            events.push(
                { EventType: "OrchestratorStarted", EventId: -1, Timestamp: now },
                { EventType: "ExecutionTerminated", EventId: -1, Timestamp: now, Input: reason, MessageId: message.id },
                { EventType: "ExecutionCompleted", EventId: -1, Timestamp: now, OrchestrationStatus: "Terminated", Result: completion.output },
                { EventType: "OrchestratorCompleted", EventId: -1, Timestamp: now, CustomStatus: state.view.customStatus },
            );
            outbox.push(...this.#notifyParent(state.view, { ...completion, failure: { message: `The orchestration was terminated: ${reason}`, details: reason } }));
            outbox.push(...this.#releaseHeldLocks(state.instanceId, state.sentinel?.executionId ?? "", state.history));
            this.logger.info(`Durable: instance '${state.instanceId}' terminated. Reason: ${reason}`);
        } else {
            events.push({ EventType: message.event.EventType, EventId: -1, Timestamp: now, Reason: reason, MessageId: message.id });
            this.logger.info(`Durable: instance '${state.instanceId}' ${message.event.EventType === "ExecutionSuspended" ? "suspended" : "resumed"}. Reason: ${reason}`);
        }
        await this.#commit(state, { executionId: state.sentinel?.executionId ?? "", reset: false, events, outbox });
    }

    /** One episode: the SDK replays history + new events; the host records and schedules what it decided. */
    async #episode(state: InstanceState, newEvents: HistoryEvent[], newExecutionId?: string, extraOutbox: OutboundMessage[] = []): Promise<void> {
        const now = this.#episodeTime(state);
        const nowIso = now.toISOString();
        const base = newExecutionId !== undefined ? [] : state.history;
        const executionId = newExecutionId ?? state.sentinel?.executionId ?? "";
        const episode: HistoryEvent[] = [{ EventType: "OrchestratorStarted", EventId: -1, Timestamp: nowIso }, ...newEvents];
        const view = viewExecution([...base, ...episode], executionId);
        const ctx = { instanceId: state.instanceId, executionId, view, now, nextId: view.nextId, outbox: [...extraOutbox] };
        const allocations: HistoryEvent[] = [];
        if (newEvents.length === 1) allocations.push(...this.#bookkeeping(ctx, newEvents[0] as HistoryEvent));

        let completion: Completion | undefined;
        let continueAsNew: { input: string | undefined } | undefined;
        let finalSends: { events: HistoryEvent[]; outbox: OutboundMessage[] } | undefined;
        let customStatus = view.customStatus;
        const fn = this.functions.orchestrator(view.name);
        if (!versionAllowed(this.versioning, view.version)) {
            completion = versionMismatch(view.version, this.versioning);
        } else if (!fn) {
            completion = failed(view.name, `The function '${view.name}' doesn't exist, is disabled, or is not an orchestrator function.`);
        } else {
            const outcome = await this.#invoke(fn, state.instanceId, [...base, ...episode], view);
            const result = outcome.result;
            if (result) customStatus = JSON.stringify(result.customStatus ?? null);
            const actions = result ? flattenActions(result.actions) : [];
            const recorded = recordedActionOps(view);
            const ops = idConsumingActions(actions);
            const nondeterminism = outcome.failure ? undefined : checkDeterminism(recorded, ops);
            const unsupported = unsupportedActionMessage(actions);
            if (nondeterminism) completion = failed(view.name, nondeterminism);
            else if (outcome.failure) completion = failed(view.name, outcome.failure.message, outcome.failure.stack, outcome.failure.failureDetails);
            else if (unsupported) completion = failed(view.name, unsupported);
            else if (result?.isDone) {
                const problem = this.#validateNewOps(ops.slice(recorded.length), state.instanceId, view);
                const can = actions.find((a) => a.actionType === ActionType.ContinueAsNew);
                if (problem) completion = failed(view.name, problem);
                else {
                    finalSends = this.#finalEntitySends(ctx, ops.slice(recorded.length));
                    if (can) continueAsNew = { input: actionInputJson(can, true) };
                    else completion = { status: "Completed", output: JSON.stringify(result.output ?? null) };
                }
            } else {
                const problem = this.#validateNewOps(ops.slice(recorded.length), state.instanceId, view);
                if (problem) completion = failed(view.name, problem);
                else for (const action of ops.slice(recorded.length)) allocations.push(...this.#schedule(ctx, action));
            }
        }

        const closing: HistoryEvent[] = [{ EventType: "OrchestratorCompleted", EventId: -1, Timestamp: nowIso, CustomStatus: customStatus }];
        let outbox = ctx.outbox;
        let recordedAllocations = allocations;
        if (completion || continueAsNew) {
            recordedAllocations = finalSends?.events ?? [];
            outbox = [...(finalSends?.outbox ?? []), ...this.#releaseHeldLocks(state.instanceId, executionId, [...base, ...episode, ...recordedAllocations])];
        }
        if (continueAsNew) {
            closing.push({ EventType: "ExecutionCompleted", EventId: -1, Timestamp: nowIso, OrchestrationStatus: "ContinuedAsNew", Result: continueAsNew.input });
            const started: HistoryEvent = { EventType: "ExecutionStarted", EventId: -1, Timestamp: nowIso, Name: view.name, Input: continueAsNew.input, Version: view.version };
            if (view.started?.ParentInstance) started.ParentInstance = view.started.ParentInstance;
            outbox.push({ message: controlMessage(state.instanceId, started, { executionId: randomUUID(), continuedFrom: executionId }) });
            this.logger.info(`Durable: instance '${state.instanceId}' continues as new.`);
        } else if (completion) {
            const end: HistoryEvent = { EventType: "ExecutionCompleted", EventId: -1, Timestamp: nowIso, OrchestrationStatus: completion.status, Result: completion.output };
            if (completion.failure?.failureDetails) end.FailureDetails = completion.failure.failureDetails;
            closing.push(end);
            outbox.push(...this.#notifyParent(view, completion));
            const level = completion.status === "Failed" ? "warning" : "information";
            this.logger.host(level, `Durable: instance '${state.instanceId}' (${view.name}) ${completion.status}.${completion.failure ? ` ${completion.failure.message}` : ""}`);
        }
        await this.#commit(state, { executionId, reset: newExecutionId !== undefined, events: [...episode, ...recordedAllocations, ...closing], outbox });
    }

    /** The host's part of retries and long timers, for the one new event of this episode. */
    #bookkeeping(ctx: ScheduleContext, event: HistoryEvent): HistoryEvent[] {
        const { view, now } = ctx;
        if (event.EventType === "TaskFailed" || event.EventType === "SubOrchestrationInstanceFailed") {
            const op = view.ops.get(event.TaskScheduledId ?? -1);
            if (!op?.RetryOptions) return [];
            const first = op.ChainOf !== undefined ? (view.ops.get(op.ChainOf) ?? op) : op;
            const options = JSON.parse(op.RetryOptions) as SdkRetryOptions;
            const attempt = op.Attempt ?? 1;
            const failureDetails = event.FailureDetails ? (JSON.parse(event.FailureDetails) as { IsNonRetriable?: boolean }) : undefined;
            if (failureDetails?.IsNonRetriable) {
                this.logger.warn(`Durable: instance '${ctx.instanceId}': '${op.Name}' failed with a non-retriable error; like the real host, no retry timer is created, and the durable-functions SDK keeps waiting for one (durable-js #629).`);
                return [];
            }
            if (attempt >= Math.max(1, options.maxNumberOfAttempts)) {
                return [this.#timer(ctx, now, { TimerPurpose: "retry-final", ChainOf: first.EventId, Attempt: attempt })];
            }
            const delay = computeRetryDelay(options, attempt - 1, Date.parse(first.Timestamp), now.getTime());
            if (delay <= 0) {
                this.logger.warn(`Durable: instance '${ctx.instanceId}': retryTimeout of '${op.Name}' has passed; like the real host, no retry timer is created, and the durable-functions SDK keeps waiting for one (durable-js #629).`);
                return [];
            }
            return [this.#timer(ctx, new Date(now.getTime() + delay), { TimerPurpose: "retry", ChainOf: first.EventId, Attempt: attempt })];
        }
        if (event.EventType === "TaskCompleted") {
            const op = view.ops.get(event.TaskScheduledId ?? -1);
            const poll = op && op.Name === HTTP_ACTIVITY_NAME ? httpPollAfter(op, event) : undefined;
            if (!op || !poll) return [];
            // The SDK's CallHttpWithPollingTask takes two ids at once: the poll timer and the next HTTP call.
            const head = op.ChainOf ?? op.EventId;
            const timer = this.#timer(ctx, new Date(now.getTime() + poll.delayMs), { TimerPurpose: "http-poll", ChainOf: head });
            const next: HistoryEvent = { EventType: "TaskScheduled", EventId: ctx.nextId++, Timestamp: now.toISOString(), Name: HTTP_ACTIVITY_NAME, Input: JSON.stringify(locationPollRequest(op, poll.location)), ChainOf: head };
            return [timer, next];
        }
        if (event.EventType === "TimerFired") {
            const timer = view.ops.get(event.TimerId ?? -1);
            if (timer?.TimerPurpose === "http-poll") {
                const next = [...view.ops.values()].find((o) => o.EventType === "TaskScheduled" && o.ChainOf === timer.ChainOf && o.EventId > timer.EventId && !view.resolved.has(o.EventId));
                if (next) ctx.outbox.push({ message: { kind: "workItem", id: randomUUID(), instanceId: ctx.instanceId, executionId: ctx.executionId, taskScheduledId: next.EventId, name: HTTP_ACTIVITY_NAME, input: next.Input, sentAt: new Date().toISOString() } });
                return [];
            }
            if (timer?.TimerPurpose === "retry" && timer.ChainOf !== undefined) {
                const first = view.ops.get(timer.ChainOf);
                if (!first) return [];
                return this.#scheduleAttempt(ctx, first, (timer.Attempt ?? 1) + 1);
            }
            if (timer?.TimerPurpose === "long" && timer.FinalFireAt) {
                const finalAt = Date.parse(timer.FinalFireAt);
                if (!(finalAt > now.getTime())) return [];
                const leg = finalAt - now.getTime() > MAX_SHORT_TIMER_MS ? new Date(now.getTime() + LONG_TIMER_INTERVAL_MS) : new Date(finalAt);
                return [this.#timer(ctx, leg, { TimerPurpose: "long", FinalFireAt: timer.FinalFireAt, ChainOf: timer.ChainOf ?? timer.EventId })];
            }
        }
        return [];
    }

    #schedule(ctx: ScheduleContext, action: SdkAction): HistoryEvent[] {
        switch (action.actionType) {
            case ActionType.CallActivity:
            case ActionType.CallActivityWithRetry:
            case ActionType.CallSubOrchestrator:
            case ActionType.CallSubOrchestratorWithRetry: {
                const withRetry = action.actionType === ActionType.CallActivityWithRetry || action.actionType === ActionType.CallSubOrchestratorWithRetry;
                const isActivity = action.actionType === ActionType.CallActivity || action.actionType === ActionType.CallActivityWithRetry;
                const op: HistoryEvent = {
                    EventType: isActivity ? "TaskScheduled" : "SubOrchestrationInstanceCreated",
                    EventId: -1,
                    Timestamp: ctx.now.toISOString(),
                    Name: action.functionName,
                    Input: actionInputJson(action, isActivity),
                    Version: isActivity ? "" : (action.version ?? this.versioning.defaultVersion),
                };
                if (!isActivity && action.instanceId) op.InstanceId = action.instanceId;
                if (withRetry) op.RetryOptions = JSON.stringify(action.retryOptions ?? { firstRetryIntervalInMilliseconds: 1000, maxNumberOfAttempts: 1 });
                return this.#scheduleAttempt(ctx, op, 1);
            }
            case ActionType.CallEntity:
            case ActionType.SignalEntity:
            case ActionType.LockEntities:
            case ActionType.ReleaseEntities:
                return [this.#entityMessage(ctx, action)];
            case ActionType.CallHttp: {
                const op: HistoryEvent = { EventType: "TaskScheduled", EventId: -1, Timestamp: ctx.now.toISOString(), Name: HTTP_ACTIVITY_NAME, Input: JSON.stringify(action.httpRequest ?? {}), Version: "" };
                return this.#scheduleAttempt(ctx, op, 1);
            }
            case ActionType.CreateTimer: {
                const fireAt = new Date(action.fireAt ?? ctx.now.toISOString());
                if (fireAt.getTime() - ctx.now.getTime() > MAX_SHORT_TIMER_MS) {
                    return [this.#timer(ctx, new Date(ctx.now.getTime() + LONG_TIMER_INTERVAL_MS), { TimerPurpose: "long", FinalFireAt: fireAt.toISOString() })];
                }
                return [this.#timer(ctx, fireAt, {})];
            }
            default:
                return [];
        }
    }

    /** Schedules attempt `attempt` of an activity or sub-orchestration (the first, or a retry of `first`). */
    #scheduleAttempt(ctx: ScheduleContext, first: HistoryEvent, attempt: number): HistoryEvent[] {
        const id = ctx.nextId++;
        const op: HistoryEvent = {
            EventType: first.EventType,
            EventId: id,
            Timestamp: ctx.now.toISOString(),
            Name: first.Name,
            Input: first.Input,
            Version: first.Version,
        };
        if (first.RetryOptions !== undefined) {
            op.RetryOptions = first.RetryOptions;
            op.Attempt = attempt;
            if (attempt > 1) op.ChainOf = first.EventId;
        }
        if (op.EventType === "TaskScheduled") {
            ctx.outbox.push({
                message: { kind: "workItem", id: randomUUID(), instanceId: ctx.instanceId, executionId: ctx.executionId, taskScheduledId: id, name: op.Name ?? "", input: op.Input, sentAt: new Date().toISOString() },
            });
        } else {
            // DTFx's retry interceptor repeats the same call: an id the code gave is reused by every
            // attempt (even one that looks like a default id, e.g. `${instanceId}:0`), a default id
            // is made anew from each attempt's sequence id.
            const idGiven = attempt === 1 ? first.InstanceId !== undefined : childIdWasGiven(first, ctx.instanceId);
            const childId = idGiven && first.InstanceId !== undefined ? first.InstanceId : `${ctx.instanceId}:${id}`;
            op.InstanceId = childId;
            op.ChildId = idGiven ? "given" : "default";
            const parent: ParentInstance = { Name: ctx.view.name ?? "", InstanceId: ctx.instanceId, ExecutionId: ctx.executionId, TaskScheduleId: id };
            const started: HistoryEvent = { EventType: "ExecutionStarted", EventId: -1, Timestamp: ctx.now.toISOString(), Name: op.Name, Input: op.Input, Version: op.Version, ParentInstance: JSON.stringify(parent) };
            ctx.outbox.push({ message: controlMessage(childId, started, { executionId: randomUUID() }) });
        }
        return [op];
    }

    #timer(ctx: ScheduleContext, fireAt: Date, extra: Partial<HistoryEvent>): HistoryEvent {
        const id = ctx.nextId++;
        const fireAtIso = fireAt.toISOString();
        ctx.outbox.push({
            message: controlMessage(ctx.instanceId, { EventType: "TimerFired", EventId: -1, Timestamp: fireAtIso, TimerId: id, FireAt: fireAtIso }, { executionId: ctx.executionId }),
            delayMs: fireAt.getTime() - Date.now(),
        });
        return { EventType: "TimerCreated", EventId: id, Timestamp: ctx.now.toISOString(), FireAt: fireAtIso, ...extra };
    }

    /**
     * An entity action of the orchestrator: an EventSent in its history (the request, with its id,
     * as input: the SDK matches the response by it) and the message to the entity in the outbox.
     */
    #entityMessage(ctx: ScheduleContext, action: SdkAction): HistoryEvent {
        const id = ctx.nextId++;
        const target = entityTarget(action);
        const timestamp = ctx.now.toISOString();
        if (action.actionType === ActionType.ReleaseEntities) {
            const release = { parent: ctx.instanceId, id: randomUUID() };
            ctx.outbox.push({ message: entityReleaseMessage(target, release) });
            return { EventType: "EventSent", EventId: id, Timestamp: timestamp, InstanceId: target, Name: ENTITY_RELEASE_EVENT, Input: JSON.stringify(release) };
        }
        const request: EntityRequest = { id: action.lockRequestId ?? randomUUID(), parent: ctx.instanceId, parentExecution: ctx.executionId, timestamp };
        if (action.actionType === ActionType.LockEntities) {
            request.lockset = (action.lockSet ?? []).map((e) => ({ name: e.name.toLowerCase(), key: e.key }));
            request.pos = 0;
        } else {
            request.op = action.operation;
            request.signal = action.actionType === ActionType.SignalEntity;
            request.input = actionInputJson(action, false);
        }
        ctx.outbox.push({ message: entityRequestMessage(target, request) });
        return { EventType: "EventSent", EventId: id, Timestamp: timestamp, InstanceId: target, Name: ENTITY_OP_EVENT, Input: JSON.stringify(request) };
    }

    /** Signals and releases the orchestrator issued in its last episode are still sent (they need no answer). */
    #finalEntitySends(ctx: ScheduleContext, newOps: SdkAction[]): { events: HistoryEvent[]; outbox: OutboundMessage[] } {
        const sendCtx: ScheduleContext = { ...ctx, outbox: [] };
        const events: HistoryEvent[] = [];
        for (const action of newOps) {
            if (action.actionType === ActionType.SignalEntity || action.actionType === ActionType.ReleaseEntities) events.push(this.#entityMessage(sendCtx, action));
            else sendCtx.nextId++;
        }
        return { events, outbox: sendCtx.outbox };
    }

    /**
     * An orchestration that ends (completes, fails, is terminated or continues as new) while
     * holding entity locks, or while its lock request is still on its way, releases them, as the
     * extension does. The release names the execution, so an entity the request has not reached
     * yet drops it when it comes.
     */
    #releaseHeldLocks(instanceId: string, executionId: string, history: HistoryEvent[]): OutboundMessage[] {
        const held = heldLocks(history);
        if (held.length === 0) return [];
        this.logger.host("debug", `Durable: instance '${instanceId}' ends holding (or requesting) the locks on ${held.join(", ")}; releasing them.`);
        return held.map((target) => ({ message: entityReleaseMessage(target, { parent: instanceId, parentExecution: executionId, id: randomUUID() }) }));
    }

    #validateNewOps(ops: SdkAction[], instanceId: string, view: ExecutionView): string | undefined {
        for (const action of ops) {
            if (ENTITY_ACTIONS.has(action.actionType)) {
                if (action.actionType === ActionType.ReleaseEntities) continue;
                const names = action.actionType === ActionType.LockEntities ? (action.lockSet ?? []).map((e) => e.name) : [entityNameOf(entityTarget(action))];
                const missing = names.find((name) => !this.functions.entity(name));
                if (missing !== undefined) {
                    return `The function '${missing}' doesn't exist, is disabled, or is not an entity function. Additional info: The following are the known entity functions: ${quoteList(this.functions.entityNames())}.`;
                }
                continue;
            }
            if (action.actionType === ActionType.CallHttp) {
                const problem = httpRequestProblem(action.httpRequest);
                if (problem) return problem;
            } else if (action.actionType === ActionType.CallActivity || action.actionType === ActionType.CallActivityWithRetry) {
                if (!this.functions.activity(action.functionName)) {
                    return `The function '${action.functionName}' doesn't exist, is disabled, or is not an activity function. Additional info: The following are the known activity functions: ${quoteList(this.functions.activityNames())}.`;
                }
            } else if (action.actionType === ActionType.CallSubOrchestrator || action.actionType === ActionType.CallSubOrchestratorWithRetry) {
                if (!this.functions.orchestrator(action.functionName)) {
                    return `The function '${action.functionName}' doesn't exist, is disabled, or is not an orchestrator function. Additional info: The following are the known orchestrator functions: ${quoteList(this.functions.orchestratorNames())}.`;
                }
                const id = action.instanceId;
                if (id !== undefined && (id.toLowerCase() === instanceId.toLowerCase() || (view.parent && id.toLowerCase() === view.parent.InstanceId.toLowerCase()))) {
                    return "The instance ID of a sub-orchestration must be different than the instance ID of a parent orchestration.";
                }
                if (id !== undefined && id.startsWith("@")) return "Orchestration instance ids must not start with @";
            }
        }
        return undefined;
    }

    #notifyParent(view: ExecutionView, completion: Completion): OutboundMessage[] {
        const parent = view.parent;
        if (!parent) return [];
        const now = new Date().toISOString();
        const event: HistoryEvent =
            completion.status === "Completed"
                ? { EventType: "SubOrchestrationInstanceCompleted", EventId: -1, Timestamp: now, TaskScheduledId: parent.TaskScheduleId, Result: completion.output }
                : {
                      EventType: "SubOrchestrationInstanceFailed",
                      EventId: -1,
                      Timestamp: now,
                      TaskScheduledId: parent.TaskScheduleId,
                      Reason: completion.failure?.message ?? completion.status,
                      Details: completion.failure?.details ?? "",
                  };
        return [{ message: controlMessage(parent.InstanceId, event, { executionId: parent.ExecutionId }) }];
    }

    async #invoke(
        fn: HostFunction,
        instanceId: string,
        history: HistoryEvent[],
        view: ExecutionView,
    ): Promise<{ result?: OrchestratorResult; failure?: { message: string; stack?: string; failureDetails?: string } }> {
        const lastStarted = activeHistory(history).map((e) => e.EventType).lastIndexOf("OrchestratorStarted");
        const payload = {
            history: toSdkHistory(history),
            input: view.input !== undefined && view.input !== "" ? (JSON.parse(view.input) as unknown) : null,
            instanceId,
            isReplaying: lastStarted > 0,
            parentInstanceId: view.parent?.InstanceId ?? null,
            upperSchemaVersion: 1,
            // Schema V4: what the SDK needs for lock(); it changes nothing else the SDK sends.
            upperSchemaVersionNew: 3,
            longRunningTimerIntervalDuration: "3.00:00:00",
            maximumShortTimerDuration: "6.00:00:00",
            defaultHttpAsyncRequestSleepTimeMillseconds: 30000,
        };
        try {
            const { response } = await this.runner.run(fn, { json: JSON.stringify(payload) }, { reason: `(Orchestration) instance '${instanceId}'` });
            const value = fromRpcValue(response.returnValue);
            if (!value || typeof value !== "object" || !("isDone" in value)) {
                return { failure: { message: `Orchestrator function '${fn.name}' did not return an orchestrator state; register it with df.app.orchestration().` } };
            }
            return { result: value as OrchestratorResult };
        } catch (error) {
            const text = errorMessage(error);
            const label = "$OutOfProcData$:";
            const at = text.indexOf(label);
            if (at < 0) return { failure: { message: text, stack: error instanceof Error ? error.stack : undefined } };
            const result = JSON.parse(text.slice(at + label.length)) as OrchestratorResult;
            const failureDetails = result.failureDetails ? JSON.stringify(result.failureDetails) : undefined;
            return { result, failure: { message: result.error ?? text.slice(0, at).trim(), stack: result.failureDetails?.StackTrace, failureDetails } };
        }
    }

    async #commit(state: InstanceState, args: { executionId: string; reset: boolean; events: HistoryEvent[]; outbox: OutboundMessage[] }): Promise<void> {
        const startIndex = args.reset ? 0 : state.history.length;
        state.sentinel = await this.store.commit(state.instanceId, { executionId: args.executionId, startIndex, events: args.events, outbox: args.outbox, previous: state.sentinel });
        state.history = args.reset ? args.events : [...state.history, ...args.events];
        state.view = viewExecution(state.history, args.executionId);
        await this.#syncRecord(state);
        await this.#sendOutbox(state);
    }

    async #sendOutbox(state: InstanceState): Promise<void> {
        if (state.sentinel) state.sentinel = await this.store.sendOutbox(state.instanceId, state.sentinel);
    }

    async #syncRecord(state: InstanceState): Promise<void> {
        const view = state.view;
        if (!view.started || !state.sentinel) return;
        const sameExecution = state.record?.executionId === state.sentinel.executionId;
        const record: InstanceRecord = {
            instanceId: state.instanceId,
            executionId: state.sentinel.executionId,
            name: view.name ?? "",
            version: view.version,
            input: view.input,
            output: view.output,
            customStatus: view.customStatus,
            createdTime: sameExecution && state.record ? state.record.createdTime : new Date(view.createdTime ?? Date.now()),
            lastUpdatedTime: new Date(view.lastUpdatedTime ?? Date.now()),
            completedTime: view.completedTime ? new Date(view.completedTime) : undefined,
            runtimeStatus: projectedStatus(view.status),
        };
        await this.store.writeRecord(record);
        state.record = record;
    }

    /** Episode timestamps increase strictly, so `currentUtcDateTime` never goes backwards. */
    #episodeTime(state: InstanceState): Date {
        const last = state.history.length > 0 ? Date.parse((state.history[state.history.length - 1] as HistoryEvent).Timestamp) : 0;
        return new Date(Math.max(Date.now(), last + 1));
    }
}

interface ScheduleContext {
    instanceId: string;
    executionId: string;
    view: ExecutionView;
    now: Date;
    nextId: number;
    outbox: OutboundMessage[];
}

/** The Instances row shows a continued-as-new instance as Running until its next execution starts. */
function projectedStatus(status: RuntimeStatus): RuntimeStatus {
    return status === "ContinuedAsNew" ? "Running" : status;
}

function failed(name: string | undefined, message: string, stack?: string, failureDetails?: string): Completion {
    const output = `Orchestrator function '${name ?? "?"}' failed: ${message}`;
    return {
        status: "Failed",
        output: JSON.stringify(output),
        failure: {
            message: output,
            details: stack ?? message,
            failureDetails: failureDetails ?? JSON.stringify({ ErrorType: "OrchestrationFailureException", ErrorMessage: message, StackTrace: stack ?? null, IsNonRetriable: false }),
        },
    };
}

/** The entities an execution holds locked: the lock set of its last lock request, less those it released since. */
export function heldLocks(history: HistoryEvent[]): string[] {
    let held: string[] = [];
    for (const event of history) {
        if (event.EventType === "ExecutionStarted") held = [];
        if (event.EventType !== "EventSent" || !event.Input) continue;
        if (event.Name === ENTITY_RELEASE_EVENT) held = held.filter((target) => target !== event.InstanceId);
        else {
            const request = JSON.parse(event.Input) as EntityRequest;
            if (request.lockset) held = request.lockset.map((e) => `@${e.name.toLowerCase()}@${e.key}`);
        }
    }
    return held;
}

function entityNameOf(instanceId: string): string {
    return instanceId.slice(1, instanceId.indexOf("@", 1));
}

/** versionFailureStrategy Fail: the instance fails without running its code (DTFx TaskOrchestrationDispatcher). */
function versionMismatch(version: string | undefined, versioning: VersioningOptions): Completion {
    const failureDetails = { ErrorType: VERSION_MISMATCH_ERROR_TYPE, ErrorMessage: VERSION_MISMATCH_MESSAGE, StackTrace: null, IsNonRetriable: true };
    return {
        status: "Failed",
        output: JSON.stringify(VERSION_MISMATCH_MESSAGE),
        failure: {
            message: `${VERSION_MISMATCH_MESSAGE} (instance version '${version ?? ""}', defaultVersion '${versioning.defaultVersion}', versionMatchStrategy ${versioning.matchStrategy}).`,
            details: VERSION_MISMATCH_MESSAGE,
            failureDetails: JSON.stringify(failureDetails),
        },
    };
}

function quoteList(names: string[]): string {
    return names.length === 0 ? "(none)" : names.map((n) => `'${n}'`).join(", ");
}

/**
 * Whether the first attempt of a sub-orchestration took an id the orchestrator gave. Rows written
 * before the host recorded `ChildId` tell it only by the id's shape (`<instance>:<sequence id>`).
 */
function childIdWasGiven(first: HistoryEvent, instanceId: string): boolean {
    if (first.ChildId !== undefined) return first.ChildId === "given";
    return first.InstanceId !== `${instanceId}:${first.EventId}`;
}
