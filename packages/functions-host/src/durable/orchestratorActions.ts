import type { ExecutionView, HistoryEvent } from "./historyEvent";

/** Action types of the durable-functions SDK (`lib/src/actions/ActionType.js`). */
export const ActionType = {
    CallActivity: 0,
    CallActivityWithRetry: 1,
    CallSubOrchestrator: 2,
    CallSubOrchestratorWithRetry: 3,
    ContinueAsNew: 4,
    CreateTimer: 5,
    WaitForExternalEvent: 6,
    CallEntity: 7,
    CallHttp: 8,
    SignalEntity: 9,
    WhenAny: 11,
    WhenAll: 12,
    LockEntities: 13,
    ReleaseEntities: 14,
} as const;

export interface SdkRetryOptions {
    firstRetryIntervalInMilliseconds: number;
    maxNumberOfAttempts: number;
    backoffCoefficient?: number;
    maxRetryIntervalInMilliseconds?: number;
    retryTimeoutInMilliseconds?: number;
}

/** The SDK's DurableHttpRequest, as a CallHttp action carries it. */
export interface SdkHttpRequest {
    method: string;
    uri: string;
    content?: string;
    headers?: Record<string, string | string[]>;
    tokenSource?: unknown;
    asynchronousPatternEnabled?: boolean;
}

/** The extension runs callHttp as this built-in activity (HttpOptions.HttpTaskActivityReservedName). */
export const HTTP_ACTIVITY_NAME = "BuiltIn::HttpActivity";

export interface SdkAction {
    actionType: number;
    httpRequest?: SdkHttpRequest;
    functionName?: string;
    input?: unknown;
    retryOptions?: SdkRetryOptions;
    instanceId?: string;
    version?: string;
    fireAt?: string;
    isCanceled?: boolean;
    externalEventName?: string;
    compoundActions?: SdkAction[];
    /** callEntity / signalEntity: the operation name (`instanceId` is the entity's `@name@key`). */
    operation?: string;
    /** lock: the request id the SDK waits for, and the entities to lock (sorted, distinct). */
    lockRequestId?: string;
    lockSet?: { name: string; key: string }[];
}

/** The handler's result (`OrchestratorState`), as the orchestration trigger returns it. */
export interface OrchestratorResult {
    isDone: boolean;
    actions: unknown;
    output?: unknown;
    customStatus?: unknown;
    error?: string;
    failureDetails?: { ErrorType?: string; ErrorMessage?: string; StackTrace?: string; IsNonRetriable?: boolean };
    schemaVersion?: number;
}

const UNSUPPORTED: Record<number, string> = {
};

const ID_ACTIONS: ReadonlySet<number> = new Set([
    ActionType.CallActivity,
    ActionType.CallActivityWithRetry,
    ActionType.CallSubOrchestrator,
    ActionType.CallSubOrchestratorWithRetry,
    ActionType.CreateTimer,
    ActionType.CallEntity,
    ActionType.SignalEntity,
    ActionType.LockEntities,
    ActionType.CallHttp,
]);

/** Entity actions: each is recorded as an EventSent (a release as one per locked entity). */
export const ENTITY_ACTIONS: ReadonlySet<number> = new Set([ActionType.CallEntity, ActionType.SignalEntity, ActionType.LockEntities, ActionType.ReleaseEntities]);

/**
 * The cumulative action list with WhenAll/WhenAny expanded in order. The extension replays it the
 * same way, so each entry that schedules something takes the next sequence id.
 */
export function flattenActions(actions: unknown): SdkAction[] {
    const result: SdkAction[] = [];
    const visit = (node: unknown): void => {
        if (Array.isArray(node)) {
            node.forEach(visit);
        } else if (node && typeof node === "object") {
            const action = node as SdkAction;
            if (action.actionType === ActionType.WhenAll || action.actionType === ActionType.WhenAny) (action.compoundActions ?? []).forEach(visit);
            else result.push(action);
        }
    };
    visit(actions);
    return result;
}

/**
 * The actions that take a sequence id, in order. The SDK counts a release as one id per locked
 * entity (one release message each); it is expanded here into one release per entity of the
 * lock set of the lock before it, carrying that entity's `@name@key` as `instanceId`.
 */
export function idConsumingActions(actions: SdkAction[]): SdkAction[] {
    const result: SdkAction[] = [];
    let lockSet: { name: string; key: string }[] = [];
    for (const action of actions) {
        if (action.actionType === ActionType.LockEntities) lockSet = action.lockSet ?? [];
        if (action.actionType === ActionType.ReleaseEntities) {
            for (const entity of lockSet) result.push({ actionType: ActionType.ReleaseEntities, instanceId: `@${entity.name.toLowerCase()}@${entity.key}` });
            lockSet = [];
        } else if (ID_ACTIONS.has(action.actionType)) {
            result.push(action);
        }
    }
    return result;
}

export function unsupportedActionMessage(actions: SdkAction[]): string | undefined {
    const bad = actions.find((a) => a.actionType in UNSUPPORTED);
    if (!bad) return undefined;
    return `The local functions host does not emulate ${UNSUPPORTED[bad.actionType]} (action type ${bad.actionType}); run this orchestration on the real Durable Functions host.`;
}

/** Ops the orchestrator itself scheduled (not the host's retry timers, later attempts or long-timer legs), by sequence id. */
export function recordedActionOps(view: ExecutionView): HistoryEvent[] {
    return [...view.ops.values()].filter((op) => op.ChainOf === undefined).sort((a, b) => a.EventId - b.EventId);
}

function describeOp(op: HistoryEvent): string {
    switch (op.EventType) {
        case "TaskScheduled":
            return op.Name === HTTP_ACTIVITY_NAME ? "a durable HTTP call" : `an activity task named '${op.Name}'`;
        case "SubOrchestrationInstanceCreated":
            return `a sub-orchestration named '${op.Name}'`;
        case "EventSent":
            return `an entity message to '${op.InstanceId}'`;
        default:
            return "a durable timer";
    }
}

function describeAction(action: SdkAction): string {
    switch (action.actionType) {
        case ActionType.CallActivity:
        case ActionType.CallActivityWithRetry:
            return `an activity task named '${action.functionName}'`;
        case ActionType.CallSubOrchestrator:
        case ActionType.CallSubOrchestratorWithRetry:
            return `a sub-orchestration named '${action.functionName}'`;
        case ActionType.CallEntity:
        case ActionType.SignalEntity:
        case ActionType.LockEntities:
        case ActionType.ReleaseEntities:
            return `an entity message to '${entityTarget(action)}'`;
        case ActionType.CallHttp:
            return "a durable HTTP call";
        default:
            return "a durable timer";
    }
}

/** The entity instance an entity action sends its message to (a lock goes to the first of its lock set). */
export function entityTarget(action: SdkAction): string {
    if (action.actionType === ActionType.LockEntities) {
        const first = action.lockSet?.[0];
        return first ? `@${first.name.toLowerCase()}@${first.key}` : "";
    }
    return action.instanceId ?? "";
}

function sameKind(op: HistoryEvent, action: SdkAction): boolean {
    switch (op.EventType) {
        case "TaskScheduled":
            if (op.Name === HTTP_ACTIVITY_NAME) return action.actionType === ActionType.CallHttp;
            return (action.actionType === ActionType.CallActivity || action.actionType === ActionType.CallActivityWithRetry) && action.functionName === op.Name;
        case "SubOrchestrationInstanceCreated":
            return (action.actionType === ActionType.CallSubOrchestrator || action.actionType === ActionType.CallSubOrchestratorWithRetry) && action.functionName === op.Name;
        case "TimerCreated":
            return action.actionType === ActionType.CreateTimer;
        case "EventSent":
            return ENTITY_ACTIONS.has(action.actionType) && entityTarget(action) === op.InstanceId;
        default:
            return false;
    }
}

/**
 * The host's determinism check: the replay must schedule, in order, what the history says was
 * scheduled (type and name). Returns the failure message, or undefined when the replay matches.
 */
export function checkDeterminism(recorded: HistoryEvent[], current: SdkAction[]): string | undefined {
    for (let i = 0; i < recorded.length; i++) {
        const op = recorded[i] as HistoryEvent;
        const action = current[i];
        if (action && sameKind(op, action)) continue;
        const now = action ? `scheduled ${describeAction(action)} instead` : "hasn't (yet?) scheduled this task";
        return (
            `Non-Deterministic workflow detected: A previous execution of this orchestration scheduled ${describeOp(op)} with sequence ID ${op.EventId}, ` +
            `but the current replay execution ${now}. Was a change made to the orchestrator code after this instance had already started running? ` +
            "Orchestrator code must be deterministic: no Date.now(), Math.random(), I/O or changing module state."
        );
    }
    return undefined;
}

/**
 * DTFx RetryInterceptor.ComputeNextDelay: firstRetryInterval × backoffCoefficient^retryCount,
 * capped by maxRetryInterval; zero (stop retrying) once retryTimeout since the first attempt has passed.
 */
export function computeRetryDelay(options: SdkRetryOptions, retryCount: number, firstAttempt: number, now: number): number {
    const timeout = options.retryTimeoutInMilliseconds && options.retryTimeoutInMilliseconds > 0 ? options.retryTimeoutInMilliseconds : Number.POSITIVE_INFINITY;
    if (!(now < firstAttempt + timeout)) return 0;
    const coefficient = options.backoffCoefficient && options.backoffCoefficient > 0 ? options.backoffCoefficient : 1;
    const max = options.maxRetryIntervalInMilliseconds && options.maxRetryIntervalInMilliseconds > 0 ? options.maxRetryIntervalInMilliseconds : Number.POSITIVE_INFINITY;
    const delay = options.firstRetryIntervalInMilliseconds * coefficient ** retryCount;
    return delay < max ? delay : max;
}

/** JSON text for an action input: the SDK already JSON-encodes strings for activities and continueAsNew. */
export function actionInputJson(action: SdkAction, sdkEncodesStrings: boolean): string | undefined {
    if (action.input === undefined) return undefined;
    if (sdkEncodesStrings && typeof action.input === "string") return action.input;
    return JSON.stringify(action.input);
}
