import type { HistoryEvent } from "./historyEvent";

/**
 * Rewind, as the Azure Storage provider does it: the failed results are taken out of the history
 * (DTFx rewrites those rows as "Rewound" GenericEvents) and the instance replays. The History
 * table stays append-only here: a rewind appends one GenericEvent named "Rewind" whose Input
 * lists the indexes of the rows it takes out, and every reader of the history looks through
 * `activeHistory`.
 */
export const REWIND_EVENT_NAME = "Rewind";

export function rewindEvent(timestamp: string, reason: string): HistoryEvent {
    return { EventType: "GenericEvent", EventId: -1, Timestamp: timestamp, Name: REWIND_EVENT_NAME, Reason: reason };
}

export function isRewindEvent(event: HistoryEvent): boolean {
    return event.EventType === "GenericEvent" && event.Name === REWIND_EVENT_NAME;
}

function rewoundIndexes(history: HistoryEvent[]): Set<number> {
    const removed = new Set<number>();
    for (const event of history) {
        if (isRewindEvent(event) && event.Input) for (const index of JSON.parse(event.Input) as number[]) removed.add(index);
    }
    return removed;
}

/** The history without rewound rows and rewind markers: what the SDK, the status API and the host's view see. */
export function activeHistory(history: HistoryEvent[]): HistoryEvent[] {
    if (!history.some(isRewindEvent)) return history;
    const removed = rewoundIndexes(history);
    return history.filter((event, index) => !removed.has(index) && !isRewindEvent(event));
}

export interface RewindPlan {
    /** Indexes (in the stored history) of the rows the rewind takes out. */
    removed: number[];
    /** TaskScheduled / SubOrchestrationInstanceCreated ops whose failure was taken out: they run again. */
    redo: HistoryEvent[];
}

/**
 * What rewinding a Failed execution takes out: its ExecutionCompleted (Failed), and every
 * TaskFailed / SubOrchestrationInstanceFailed that failed the orchestration. For a task with a
 * retry policy that is only the last attempt's failure, together with the final "dummy" retry
 * timer; failures the policy retried stay (they are part of the attempt count).
 */
export function planRewind(history: HistoryEvent[]): RewindPlan {
    const earlier = rewoundIndexes(history);
    const active = history.map((event, index) => ({ event, index })).filter(({ event, index }) => !earlier.has(index) && !isRewindEvent(event));
    const ops = new Map<number, HistoryEvent>();
    for (const { event } of active) {
        if (event.EventType === "TaskScheduled" || event.EventType === "SubOrchestrationInstanceCreated" || event.EventType === "TimerCreated") ops.set(event.EventId, event);
    }
    const removed: number[] = [];
    const redo: HistoryEvent[] = [];
    for (const { event, index } of active) {
        if (event.EventType === "ExecutionCompleted" && event.OrchestrationStatus === "Failed") {
            removed.push(index);
            continue;
        }
        if (event.EventType !== "TaskFailed" && event.EventType !== "SubOrchestrationInstanceFailed") continue;
        const op = ops.get(event.TaskScheduledId ?? -1);
        if (!op) continue;
        if (op.RetryOptions !== undefined) {
            const head = op.ChainOf ?? op.EventId;
            const finalTimer = active.find(({ event: e }) => e.EventType === "TimerCreated" && e.TimerPurpose === "retry-final" && e.ChainOf === head && e.Attempt === op.Attempt);
            if (!finalTimer) continue;
            removed.push(finalTimer.index);
            const fired = active.find(({ event: e }) => e.EventType === "TimerFired" && e.TimerId === finalTimer.event.EventId);
            if (fired) removed.push(fired.index);
        }
        removed.push(index);
        redo.push(op);
    }
    return { removed: removed.sort((a, b) => a - b), redo };
}
