import { randomUUID } from "node:crypto";
import type { HistoryEvent } from "./historyEvent";

/**
 * A message for an orchestration instance, sent to `<hub>-control-00`. `event` becomes a history
 * event when applied; `id` is recorded on it so that a redelivered message is recognised.
 */
export interface ControlMessage {
    kind: "control";
    id: string;
    instanceId: string;
    /** The execution the event is meant for; absent for client operations (raise event, terminate, ...). */
    executionId?: string;
    /** For ExecutionStarted of a continue-as-new: the execution it continues. */
    continuedFrom?: string;
    sentAt: string;
    event: HistoryEvent;
}

/** An activity to run, sent to `<hub>-workitems`. */
export interface WorkItemMessage {
    kind: "workItem";
    id: string;
    instanceId: string;
    executionId: string;
    taskScheduledId: number;
    name: string;
    /** JSON text of the activity input, absent when the orchestrator passed none. */
    input?: string;
    sentAt: string;
}

export type DurableMessage = ControlMessage | WorkItemMessage;

/** A message the host will send once an episode is committed; `delayMs` hides it until then (timers). */
export interface OutboundMessage {
    message: DurableMessage;
    delayMs?: number;
}

export function controlMessage(instanceId: string, event: HistoryEvent, extra: Partial<Pick<ControlMessage, "executionId" | "continuedFrom" | "id">> = {}): ControlMessage {
    return { kind: "control", id: extra.id ?? randomUUID(), instanceId, sentAt: new Date().toISOString(), event, executionId: extra.executionId, continuedFrom: extra.continuedFrom };
}

export function parseDurableMessage(text: string): DurableMessage {
    const parsed = JSON.parse(text) as Partial<DurableMessage> & { $ref?: string };
    if (parsed.kind !== "control" && parsed.kind !== "workItem") throw new Error("not a local-host durable message");
    if (typeof parsed.instanceId !== "string" || typeof parsed.id !== "string") throw new Error("durable message without instanceId/id");
    return parsed as DurableMessage;
}
