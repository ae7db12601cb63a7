import { controlMessage, type ControlMessage } from "./messages";

/**
 * The messages of the Durable extension's entity protocol (DTFx "entity scheduler"): an entity
 * is an instance `@name@key` (name lower-cased) that receives `EventRaised` events named `op`
 * (a RequestMessage: an operation, or a lock request) and `release` (a ReleaseMessage), and
 * answers callers with an `EventRaised` named after the request id (a ResponseMessage).
 */
export interface EntityId {
    name: string;
    key: string;
}

export const ENTITY_OP_EVENT = "op";
export const ENTITY_RELEASE_EVENT = "release";
export const LOCK_ACQUIRED_RESULT = "Lock Acquisition Completed";

/** RequestMessage as the extension serialises it (`op`, `signal`, `input`, `id`, `parent`, `lockset`, `pos`). */
export interface EntityRequest {
    id: string;
    /** The operation name; absent for a lock request. */
    op?: string;
    signal?: boolean;
    /** JSON text of the operation input. */
    input?: string;
    /** The instance that sent it (an orchestration, an entity, or absent for a client signal). */
    parent?: string;
    parentExecution?: string;
    /** A lock request: every entity to lock, in scheduler-id order; `pos` is this entity's index. */
    lockset?: EntityId[];
    pos?: number;
    timestamp?: string;
}

export interface EntityRelease {
    parent: string;
    id: string;
    /** Set when the execution ended: a lock request of that execution arriving later is dropped. */
    parentExecution?: string;
}

/** ResponseMessage: `result` is JSON text of the operation result (or the error); `exceptionType` marks a failure. */
export interface EntityResponse {
    result?: string;
    exceptionType?: string;
}

/**
 * SchedulerState, the entity's durable state between batches (the extension keeps it as the
 * input of the entity's next execution): whether the entity exists, its state (JSON text), the
 * requests waiting for a lock to be released, and the orchestration holding the lock. `recent`
 * is the local host's own list of the last applied message ids, so that a message redelivered
 * after a crash is not applied twice.
 */
export interface SchedulerState {
    exists: boolean;
    state?: string;
    queue: QueuedMessage[];
    lockedBy?: string;
    recent: string[];
    /** Executions that ended before their lock request reached this entity (local host bookkeeping). */
    ended?: string[];
}

export type QueuedMessage = { kind: "request"; request: EntityRequest } | { kind: "release"; release: EntityRelease };

export const RECENT_MESSAGE_IDS = 400;
export const ENDED_EXECUTIONS = 100;

export function schedulerId(entity: EntityId): string {
    return `@${entity.name.toLowerCase()}@${entity.key}`;
}

export function isEntityInstanceId(instanceId: string): boolean {
    return instanceId.startsWith("@") && instanceId.indexOf("@", 1) > 0;
}

export function parseSchedulerId(instanceId: string): EntityId {
    const at = instanceId.indexOf("@", 1);
    return { name: instanceId.slice(1, at), key: instanceId.slice(at + 1) };
}

export function emptySchedulerState(): SchedulerState {
    return { exists: false, queue: [], recent: [] };
}

export function parseSchedulerState(text: string | undefined): SchedulerState {
    if (!text) return emptySchedulerState();
    const parsed = JSON.parse(text) as Partial<SchedulerState>;
    return { exists: parsed.exists === true, state: parsed.state ?? undefined, queue: parsed.queue ?? [], lockedBy: parsed.lockedBy ?? undefined, recent: parsed.recent ?? [], ended: parsed.ended ?? undefined };
}

export function entityRequestMessage(target: string, request: EntityRequest, messageId?: string): ControlMessage {
    const now = new Date().toISOString();
    return controlMessage(target, { EventType: "EventRaised", EventId: -1, Timestamp: now, Name: ENTITY_OP_EVENT, Input: JSON.stringify(request) }, messageId ? { id: messageId } : {});
}

export function entityReleaseMessage(target: string, release: EntityRelease): ControlMessage {
    const now = new Date().toISOString();
    return controlMessage(target, { EventType: "EventRaised", EventId: -1, Timestamp: now, Name: ENTITY_RELEASE_EVENT, Input: JSON.stringify(release) });
}

/** The answer to a call or a lock request: an event named after the request id, for the caller's execution. */
export function entityResponseMessage(instanceId: string, executionId: string | undefined, requestId: string, response: EntityResponse): ControlMessage {
    const now = new Date().toISOString();
    return controlMessage(instanceId, { EventType: "EventRaised", EventId: -1, Timestamp: now, Name: requestId, Input: JSON.stringify(response) }, { executionId });
}
