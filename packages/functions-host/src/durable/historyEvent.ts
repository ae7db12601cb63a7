import { activeHistory } from "./rewind";

/** DTFx history event types (numbers as the durable-functions SDK reads them, names as the Azure Storage provider stores them). */
export const EventType = {
    ExecutionStarted: 0,
    ExecutionCompleted: 1,
    ExecutionFailed: 2,
    ExecutionTerminated: 3,
    TaskScheduled: 4,
    TaskCompleted: 5,
    TaskFailed: 6,
    SubOrchestrationInstanceCreated: 7,
    SubOrchestrationInstanceCompleted: 8,
    SubOrchestrationInstanceFailed: 9,
    TimerCreated: 10,
    TimerFired: 11,
    OrchestratorStarted: 12,
    OrchestratorCompleted: 13,
    EventSent: 14,
    EventRaised: 15,
    ContinueAsNew: 16,
    GenericEvent: 17,
    HistoryState: 18,
    ExecutionSuspended: 19,
    ExecutionResumed: 20,
} as const;

export type EventTypeName = keyof typeof EventType;

export type RuntimeStatus = "Pending" | "Running" | "Completed" | "ContinuedAsNew" | "Failed" | "Canceled" | "Terminated" | "Suspended";

export const TERMINAL_STATUSES: ReadonlySet<RuntimeStatus> = new Set(["Completed", "Failed", "Terminated", "Canceled"]);

export interface ParentInstance {
    Name: string;
    InstanceId: string;
    ExecutionId: string;
    TaskScheduleId: number;
}

/**
 * One history event. The first group of fields is what the SDK and the Azure Storage provider
 * know; the second group is the local host's own bookkeeping (kept in extra table columns and
 * stripped before the history goes to the SDK).
 */
export interface HistoryEvent {
    EventType: EventTypeName;
    EventId: number;
    /** ISO text; stored in the `_Timestamp` column. */
    Timestamp: string;
    Name?: string;
    Input?: string;
    Result?: string;
    Reason?: string;
    Details?: string;
    /** JSON text of DTFx FailureDetails {ErrorType, ErrorMessage, StackTrace, IsNonRetriable, Properties}. */
    FailureDetails?: string;
    TaskScheduledId?: number;
    TimerId?: number;
    FireAt?: string;
    Version?: string;
    InstanceId?: string;
    OrchestrationStatus?: RuntimeStatus;
    /** JSON text of ParentInstance, on ExecutionStarted of a sub-orchestration. */
    ParentInstance?: string;

    /** Inbound message that produced this event (duplicate deliveries are recognised by it). */
    MessageId?: string;
    /** On TaskScheduled / SubOrchestrationInstanceCreated of a ...WithRetry call: the SDK's RetryOptions as JSON. */
    RetryOptions?: string;
    /** This op continues the chain started by op N (a retry timer, a retry attempt, a long-timer leg). */
    ChainOf?: number;
    /** 1-based attempt number of a retried task. */
    Attempt?: number;
    /** Why the host created a timer: a retry delay, the final "dummy" retry timer, one leg of a long timer, or the wait before polling a callHttp 202 Location. */
    TimerPurpose?: "retry" | "retry-final" | "long" | "http-poll";
    /** Final fire time of a long timer (ISO). */
    FinalFireAt?: string;
    /** On OrchestratorCompleted: the custom status at the end of that episode (JSON text). */
    CustomStatus?: string;
    /** On SubOrchestrationInstanceCreated: whether the orchestrator gave the child's instance id or the host made the default one. */
    ChildId?: "given" | "default";
}

/** Events that take a sequence id; EventSent records a message to a durable entity (call, signal, lock, release). */
export const ID_CONSUMING: ReadonlySet<EventTypeName> = new Set(["TaskScheduled", "TimerCreated", "SubOrchestrationInstanceCreated", "EventSent"]);

const HOST_ONLY_FIELDS = ["MessageId", "RetryOptions", "ChainOf", "Attempt", "TimerPurpose", "FinalFireAt", "CustomStatus", "ChildId"] as const;

/**
 * The history as the orchestration trigger payload carries it: numeric EventType, IsPlayed
 * (true for events of earlier episodes), FailureDetails as an object.
 */
export function toSdkHistory(stored: HistoryEvent[]): Record<string, unknown>[] {
    const events = activeHistory(stored);
    let lastStarted = -1;
    events.forEach((e, i) => {
        if (e.EventType === "OrchestratorStarted") lastStarted = i;
    });
    return events.map((event, index) => {
        const sdk: Record<string, unknown> = { ...event, EventType: EventType[event.EventType], IsPlayed: index < lastStarted };
        for (const field of HOST_ONLY_FIELDS) delete sdk[field];
        if (event.FailureDetails !== undefined) sdk.FailureDetails = JSON.parse(event.FailureDetails) as unknown;
        if (event.ParentInstance !== undefined) delete sdk.ParentInstance;
        return sdk;
    });
}

/** What the host knows about one execution, derived from its history alone. */
export interface ExecutionView {
    executionId: string | undefined;
    started: HistoryEvent | undefined;
    name: string | undefined;
    input: string | undefined;
    version: string | undefined;
    parent: ParentInstance | undefined;
    status: RuntimeStatus;
    output: string | undefined;
    customStatus: string | undefined;
    createdTime: string | undefined;
    lastUpdatedTime: string | undefined;
    completedTime: string | undefined;
    /** id-consuming events by EventId. */
    ops: Map<number, HistoryEvent>;
    /** EventIds of tasks/sub-orchestrations with a completion, and of timers that fired. */
    resolved: Set<number>;
    appliedMessageIds: Set<string>;
    nextId: number;
}

export function viewExecution(stored: HistoryEvent[], executionId: string | undefined): ExecutionView {
    const events = activeHistory(stored);
    const view: ExecutionView = {
        executionId,
        started: undefined,
        name: undefined,
        input: undefined,
        version: undefined,
        parent: undefined,
        status: "Pending",
        output: undefined,
        customStatus: undefined,
        createdTime: undefined,
        lastUpdatedTime: undefined,
        completedTime: undefined,
        ops: new Map(),
        resolved: new Set(),
        appliedMessageIds: new Set(),
        nextId: 0,
    };
    for (const event of events) {
        view.lastUpdatedTime = event.Timestamp;
        if (event.MessageId) view.appliedMessageIds.add(event.MessageId);
        if (ID_CONSUMING.has(event.EventType)) {
            view.ops.set(event.EventId, event);
            view.nextId = Math.max(view.nextId, event.EventId + 1);
        }
        switch (event.EventType) {
            case "ExecutionStarted":
                view.started = event;
                view.name = event.Name;
                view.input = event.Input;
                view.version = event.Version;
                view.parent = event.ParentInstance ? (JSON.parse(event.ParentInstance) as ParentInstance) : undefined;
                view.status = "Running";
                view.createdTime = event.Timestamp;
                break;
            case "TaskCompleted":
            case "TaskFailed":
            case "SubOrchestrationInstanceCompleted":
            case "SubOrchestrationInstanceFailed":
                if (event.TaskScheduledId !== undefined) view.resolved.add(event.TaskScheduledId);
                break;
            case "TimerFired":
                if (event.TimerId !== undefined) view.resolved.add(event.TimerId);
                break;
            case "ExecutionSuspended":
                if (view.status === "Running") view.status = "Suspended";
                break;
            case "ExecutionResumed":
                if (view.status === "Suspended") view.status = "Running";
                break;
            case "OrchestratorCompleted":
                if (event.CustomStatus !== undefined) view.customStatus = event.CustomStatus;
                break;
            case "ExecutionCompleted":
                view.status = event.OrchestrationStatus ?? "Completed";
                view.output = event.Result;
                view.completedTime = event.Timestamp;
                break;
            default:
                break;
        }
    }
    return view;
}

export function isTerminal(status: RuntimeStatus): boolean {
    return TERMINAL_STATUSES.has(status);
}
