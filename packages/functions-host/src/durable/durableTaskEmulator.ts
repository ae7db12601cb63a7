import { randomBytes, randomUUID } from "node:crypto";
import { odata } from "@azure/data-tables";
import type { HostFunction } from "../functionCatalog";
import type { FunctionRunner } from "../functionRunner";
import type { HostLogger } from "../logger";
import { isConflict, isPreconditionFailed, type StorageAccount } from "../storage/storageAccount";
import { ActivityWorker, type DuplicateActivities } from "./activityWorker";
import { ControlQueueWorker } from "./controlQueueWorker";
import { durableClientBindingData, type DurableClientBindingData } from "./durableClientBinding";
import { isTerminal, type RuntimeStatus } from "./historyEvent";
import { HistoryStore, type InstanceRecord } from "./historyStore";
import { instanceIdProblem } from "./instanceId";
import { entityRequestMessage, isEntityInstanceId, schedulerId, type EntityId } from "./entityMessages";
import { EntityRunner } from "./entityRunner";
import { controlMessage } from "./messages";
import { rewindEvent } from "./rewind";
import { OrchestrationRunner, type DurableFunctionLookup } from "./orchestrationRunner";
import { statusJson, type StatusOptions } from "./statusView";
import { TaskHub } from "./taskHub";
import type { VersioningOptions } from "./versioning";

export interface DurableEmulatorOptions {
    hubName: string;
    connectionName: string;
    workItemVisibilityMs: number;
    controlVisibilityMs: number;
    maxConcurrentActivities: number;
    maxConcurrentOrchestrations: number;
    duplicateActivities: DuplicateActivities;
    minIdleMs: number;
    maxIdleMs: number;
    /** host.json defaultVersion / versionMatchStrategy / versionFailureStrategy; absent = no default version, CurrentOrOlder, Reject. */
    versioning?: VersioningOptions;
}

/** An API-level problem with the status code the host's HTTP API answers with. */
export class DurableApiError extends Error {
    constructor(
        readonly statusCode: number,
        message: string,
        /** For a 500: the .NET exception type the extension's error response names. */
        readonly exceptionType?: string,
    ) {
        super(message);
        this.name = "DurableApiError";
    }
}

export type OperationResult = "accepted" | "notFound" | "gone";

export interface ListQuery {
    createdTimeFrom?: Date;
    createdTimeTo?: Date;
    runtimeStatus?: RuntimeStatus[];
    instanceIdPrefix?: string;
    top?: number;
    continuationToken?: string;
    showInput?: boolean;
}

/**
 * The Durable Task emulator: a task hub in Azure Storage (Azurite), the workers that drive it
 * (orchestration episodes from the control queue, activities from the work-item queue) and the
 * client operations behind the Durable HTTP API.
 */
export class DurableTaskEmulator {
    readonly hub: TaskHub;
    readonly store: HistoryStore;
    readonly systemKey = randomBytes(24).toString("base64url");
    readonly #control: ControlQueueWorker;
    readonly #activities: ActivityWorker;
    readonly #functions: DurableFunctionLookup;
    #origin = "http://127.0.0.1:7071";

    constructor(
        account: StorageAccount,
        functions: HostFunction[],
        runner: FunctionRunner,
        private readonly logger: HostLogger,
        private readonly options: DurableEmulatorOptions,
    ) {
        this.hub = new TaskHub(account, options.hubName);
        this.store = new HistoryStore(this.hub);
        this.#functions = functionLookup(functions);
        const orchestrations = new OrchestrationRunner(this.hub, this.store, this.#functions, runner, logger, this.versioning);
        const entities = new EntityRunner(this.store, this.#functions, runner, logger);
        this.#control = new ControlQueueWorker(
            this.hub,
            orchestrations,
            logger,
            {
                visibilityMs: options.controlVisibilityMs,
                maxConcurrentInstances: options.maxConcurrentOrchestrations,
                minIdleMs: options.minIdleMs,
                maxIdleMs: options.maxIdleMs,
            },
            entities,
        );
        this.#activities = new ActivityWorker(this.hub, runner, this.#functions, logger, {
            visibilityMs: options.workItemVisibilityMs,
            maxConcurrent: options.maxConcurrentActivities,
            duplicates: options.duplicateActivities,
            minIdleMs: options.minIdleMs,
            maxIdleMs: options.maxIdleMs,
        });
        this.hub.onSent = (queue) => (queue === "control" ? this.#control.wake() : this.#activities.wake());
    }

    get versioning(): VersioningOptions {
        return this.options.versioning ?? { defaultVersion: "", matchStrategy: "CurrentOrOlder", failureStrategy: "Reject" };
    }

    get hubName(): string {
        return this.hub.name;
    }

    /** Creates the task hub's tables and queues (idempotent). */
    async prepare(origin: string): Promise<void> {
        this.#origin = origin;
        await this.hub.create();
    }

    start(): void {
        this.#control.start();
        this.#activities.start();
        this.logger.info(`Durable: task hub '${this.hub.name}' (tables ${this.hub.name}Instances/${this.hub.name}History, queues ${this.hub.controlQueue.name}, ${this.hub.workItemQueue.name}); duplicateActivities=${this.options.duplicateActivities}.`);
    }

    async stop(drainMs: number): Promise<void> {
        await Promise.all([this.#control.stop(drainMs), this.#activities.stop(drainMs)]);
    }

    clientBindingData(): DurableClientBindingData {
        return durableClientBindingData(this.#origin, this.hub.name, this.options.connectionName, this.systemKey);
    }

    async startNew(name: string, options: { instanceId?: string; input?: string; version?: string }): Promise<string> {
        if (!this.#functions.orchestrator(name)) {
            throw new DurableApiError(400, `The function '${name}' doesn't exist, is disabled, or is not an orchestrator function. Additional info: The following are the known orchestrator functions: ${this.#functions.orchestratorNames().map((n) => `'${n}'`).join(", ") || "(none)"}.`);
        }
        const instanceId = options.instanceId ?? randomUUID().replace(/-/g, "");
        const problem = instanceIdProblem(instanceId);
        if (problem) throw new DurableApiError(400, problem);
        if (options.input !== undefined) assertJson(options.input, "The orchestration input");
        const existing = await this.store.readRecord(instanceId);
        if (existing && !isTerminal(existing.runtimeStatus)) {
            throw new DurableApiError(500, `An Orchestration instance with the status ${existing.runtimeStatus} already exists.`);
        }
        const now = new Date();
        const executionId = randomUUID().replace(/-/g, "");
        const version = options.version ?? this.versioning.defaultVersion;
        const record: InstanceRecord = {
            instanceId,
            executionId,
            name,
            version,
            input: options.input,
            createdTime: now,
            lastUpdatedTime: now,
            runtimeStatus: "Pending",
        };
        try {
            await this.store.writeRecord(record, existing?.etag ? { etag: existing.etag } : "create");
        } catch (error) {
            if (isConflict(error) || isPreconditionFailed(error)) throw new DurableApiError(500, `An Orchestration instance with the id '${instanceId}' was started concurrently.`);
            throw error;
        }
        await this.hub.send({
            message: controlMessage(instanceId, { EventType: "ExecutionStarted", EventId: -1, Timestamp: now.toISOString(), Name: name, Input: options.input, Version: version }, { executionId }),
        });
        this.logger.info(`Durable: started '${name}' instance '${instanceId}'${version ? ` (version '${version}')` : ""}${existing ? ` (replacing a ${existing.runtimeStatus} instance)` : ""}.`);
        return instanceId;
    }

    async getStatus(instanceId: string, options: StatusOptions): Promise<Record<string, unknown> | undefined> {
        const record = await this.store.readRecord(instanceId);
        if (!record) return undefined;
        let history;
        if (options.showHistory) {
            const snapshot = await this.store.load(instanceId);
            history = snapshot.sentinel?.executionId === record.executionId ? snapshot.history : [];
        }
        return statusJson(record, history, options);
    }

    async list(query: ListQuery): Promise<{ statuses: Record<string, unknown>[]; continuationToken?: string }> {
        // Entities (`@name@key`) are listed by the entity API, not with orchestrations.
        const conditions: string[] = ["(PartitionKey lt '@' or PartitionKey ge 'A')"];
        if (query.createdTimeFrom) conditions.push(odata`CreatedTime ge ${query.createdTimeFrom}`);
        if (query.createdTimeTo) conditions.push(odata`CreatedTime le ${query.createdTimeTo}`);
        if (query.runtimeStatus && query.runtimeStatus.length > 0) conditions.push(`(${query.runtimeStatus.map((s) => odata`RuntimeStatus eq ${s}`).join(" or ")})`);
        if (query.instanceIdPrefix) conditions.push(odata`PartitionKey ge ${query.instanceIdPrefix} and PartitionKey lt ${query.instanceIdPrefix + "\uffff"}`);
        const after = query.continuationToken ? Buffer.from(query.continuationToken, "base64url").toString("utf8") : undefined;
        const pageSize = query.top && query.top > 0 ? query.top : 100;
        const { records, more } = await this.store.queryRecords(conditions.join(" and "), pageSize, after);
        const statuses = records.map((r) => statusJson(r, undefined, { showHistory: false, showHistoryOutput: false, showInput: query.showInput ?? false }));
        const last = records[records.length - 1];
        return { statuses, continuationToken: more && last ? Buffer.from(last.instanceId, "utf8").toString("base64url") : undefined };
    }

    async raiseEvent(instanceId: string, eventName: string, data: string): Promise<OperationResult> {
        if (data !== "") assertJson(data, "The event data");
        return this.#send(instanceId, (now) => ({ EventType: "EventRaised", EventId: -1, Timestamp: now, Name: eventName, Input: data === "" ? undefined : data }));
    }

    terminate(instanceId: string, reason: string): Promise<OperationResult> {
        return this.#send(instanceId, (now) => ({ EventType: "ExecutionTerminated", EventId: -1, Timestamp: now, Input: reason }));
    }

    /** Only a Running, Pending or ContinuedAsNew instance can be suspended (DurableClient.SuspendAsync). */
    suspend(instanceId: string, reason: string): Promise<OperationResult> {
        return this.#send(
            instanceId,
            (now) => ({ EventType: "ExecutionSuspended", EventId: -1, Timestamp: now, Reason: reason }),
            (record) => this.#refuseUnless(record, ["Running", "Pending", "ContinuedAsNew"], "suspend"),
        );
    }

    /** Only a Suspended instance can be resumed (DurableClient.ResumeAsync). */
    resume(instanceId: string, reason: string): Promise<OperationResult> {
        return this.#send(
            instanceId,
            (now) => ({ EventType: "ExecutionResumed", EventId: -1, Timestamp: now, Reason: reason }),
            (record) => this.#refuseUnless(record, ["Suspended"], "resume"),
        );
    }

    /**
     * Rewinds a Failed instance: its failed task and sub-orchestration results (and the failure
     * itself) are taken out of the history, so the failed work runs again and the orchestrator
     * replays. Completed, Terminated and Canceled instances are "gone" (410); Running, Pending or
     * Suspended ones are refused like DurableClient.RewindAsync (500).
     */
    async rewind(instanceId: string, reason: string): Promise<OperationResult> {
        const record = await this.store.readRecord(instanceId);
        if (!record) return "notFound";
        if (record.runtimeStatus === "Completed" || record.runtimeStatus === "Terminated" || record.runtimeStatus === "Canceled") return "gone";
        if (record.runtimeStatus !== "Failed") {
            this.logger.warn(`Durable: instance '${instanceId}' (${record.name}): The rewind operation is only supported on failed orchestration instances (it is ${record.runtimeStatus}).`);
            throw new DurableApiError(500, "The rewind operation is only supported on failed orchestration instances.", "System.InvalidOperationException");
        }
        await this.hub.send({ message: controlMessage(instanceId, rewindEvent(new Date().toISOString(), reason), { executionId: record.executionId }) });
        this.logger.info(`Durable: instance '${instanceId}' (${record.name}) is being rewound. Reason: ${reason}`);
        return "accepted";
    }

    /**
     * Deletes a finished instance's rows. A running, pending or suspended orchestration is refused
     * (400), as the extension does since it checks the runtime status of single-instance purges.
     */
    async purge(instanceId: string): Promise<boolean> {
        const record = await this.store.readRecord(instanceId);
        if (!record) return false;
        if (!isTerminal(record.runtimeStatus)) {
            const message = isEntityInstanceId(instanceId)
                ? `Cannot purge the entity ${instanceId} while it exists; delete it first (an operation that calls destructOnExit), then purge its storage.`
                : `Cannot purge the orchestration instance ${instanceId} because it is in the ${record.runtimeStatus} state; only Completed, Failed, Terminated or Canceled instances can be purged.`;
            this.logger.warn(`Durable: instance '${instanceId}' (${record.name}): ${message}`);
            throw new DurableApiError(400, message);
        }
        await this.store.purge(instanceId);
        return true;
    }

    async purgeBy(query: Omit<ListQuery, "top" | "continuationToken">): Promise<number> {
        let deleted = 0;
        let token: string | undefined;
        const statuses = query.runtimeStatus?.filter((s) => isTerminal(s)) ?? ["Completed", "Failed", "Terminated", "Canceled"];
        if (statuses.length === 0) return 0;
        do {
            const page = await this.list({ ...query, runtimeStatus: statuses, top: 100, continuationToken: token });
            for (const status of page.statuses) if (await this.#purgeFinished(String(status.instanceId))) deleted++;
            token = page.continuationToken;
        } while (token);
        return deleted;
    }

    /**
     * DurableClient.RestartAsync: StartNew(name, same id or a new one, the old input). Like any
     * start it takes the current defaultVersion, not the old instance's version. An unknown id is a
     * 400 (ArgumentException), a running one is refused like any start of a running id.
     */
    async restart(instanceId: string, restartWithNewInstanceId: boolean): Promise<string> {
        const record = await this.store.readRecord(instanceId);
        if (!record) throw new DurableApiError(400, `InstanceId does not match a valid orchestration instance. An orchestration with the instanceId ${instanceId} was not found.`);
        const newId = await this.startNew(record.name, { instanceId: restartWithNewInstanceId ? undefined : instanceId, input: record.input });
        this.logger.info(`Durable: instance '${instanceId}' (${record.name}) restarted as '${newId}'.`);
        return newId;
    }

    /** A client's signal: one operation message to the entity (no answer). */
    async signalEntity(entity: EntityId, operation: string, input: string | undefined): Promise<void> {
        if (!this.#functions.entity(entity.name)) {
            throw new DurableApiError(400, `The function '${entity.name}' doesn't exist, is disabled, or is not an entity function. Additional info: The following are the known entity functions: ${this.#functions.entityNames().map((n) => `'${n}'`).join(", ") || "(none)"}.`);
        }
        if (input !== undefined) assertJson(input, "The operation input");
        const id = schedulerId(entity);
        await this.hub.send({ message: entityRequestMessage(id, { id: randomUUID(), op: operation, signal: true, input, timestamp: new Date().toISOString() }) });
        this.logger.host("debug", `Durable: signalled entity '${id}' with operation '${operation}'.`);
    }

    /**
     * The entity's state after its last committed batch, from its Instances row as the extension
     * reads it (and as `listEntities` does: the history is written first, so reading it would let a
     * read and a list disagree for a moment); undefined when it does not exist.
     */
    async readEntityState(entity: EntityId): Promise<{ state: string | undefined; lastOperationTime: Date } | undefined> {
        const record = await this.store.readRecord(schedulerId(entity));
        const scheduler = currentSchedulerStateOfRecord(record?.input);
        if (!record || !scheduler.exists) return undefined;
        return { state: scheduler.state, lastOperationTime: record.lastUpdatedTime };
    }

    /** Existing entities (optionally of one name), in id order, a page at a time: the extension's DurableEntityStatus list. */
    async listEntities(query: { entityName?: string; fetchState?: boolean; lastOperationTimeFrom?: Date; lastOperationTimeTo?: Date; top?: number; continuationToken?: string }): Promise<{ entities: Record<string, unknown>[]; continuationToken?: string }> {
        const prefix = query.entityName ? `@${query.entityName.toLowerCase()}@` : "@";
        const conditions = [odata`PartitionKey ge ${prefix} and PartitionKey lt ${prefix + "\uffff"}`];
        if (query.lastOperationTimeFrom) conditions.push(odata`LastUpdatedTime ge ${query.lastOperationTimeFrom}`);
        if (query.lastOperationTimeTo) conditions.push(odata`LastUpdatedTime le ${query.lastOperationTimeTo}`);
        const pageSize = query.top && query.top > 0 ? query.top : 100;
        let after = query.continuationToken ? Buffer.from(query.continuationToken, "base64url").toString("utf8") : undefined;
        const entities: Record<string, unknown>[] = [];
        for (;;) {
            const { records, more } = await this.store.queryRecords(conditions.join(" and "), pageSize - entities.length, after);
            for (const record of records) {
                after = record.instanceId;
                const at = record.instanceId.indexOf("@", 1);
                if (at < 0) continue;
                const state = currentSchedulerStateOfRecord(record.input);
                if (!state.exists) continue;
                const status: Record<string, unknown> = { entityId: { name: record.instanceId.slice(1, at), key: record.instanceId.slice(at + 1) }, lastOperationTime: record.lastUpdatedTime.toISOString() };
                if (query.fetchState) status.state = state.state === undefined ? null : (JSON.parse(state.state) as unknown);
                entities.push(status);
            }
            if (!more) return { entities };
            if (entities.length >= pageSize) return { entities, continuationToken: after ? Buffer.from(after, "utf8").toString("base64url") : undefined };
        }
    }

    async #purgeFinished(instanceId: string): Promise<boolean> {
        const record = await this.store.readRecord(instanceId);
        if (!record || !isTerminal(record.runtimeStatus)) return false;
        await this.store.purge(instanceId);
        return true;
    }

    /** The extension's refusal: a warning log line and an InvalidOperationException (HTTP 500). */
    #refuseUnless(record: InstanceRecord, allowed: RuntimeStatus[], operation: "suspend" | "resume"): void {
        if (allowed.includes(record.runtimeStatus)) return;
        // TraceHelper.ExtensionWarningEvent's format (without AppName, SlotName, ExtensionVersion and SequenceNumber).
        this.logger.warn(`Cannot ${operation} orchestration instance in the ${record.runtimeStatus} state.. InstanceId: ${record.instanceId}. Function: ${record.name}. HubName: ${this.hub.name}.`);
        throw new DurableApiError(500, `Cannot ${operation} the orchestration instance ${record.instanceId} because instance is in the ${record.runtimeStatus} state.`, "System.InvalidOperationException");
    }

    async #send(instanceId: string, event: (now: string) => Parameters<typeof controlMessage>[1], check?: (record: InstanceRecord) => void): Promise<OperationResult> {
        const record = await this.store.readRecord(instanceId);
        if (!record) return "notFound";
        if (isTerminal(record.runtimeStatus)) return "gone";
        check?.(record);
        await this.hub.send({ message: controlMessage(instanceId, event(new Date().toISOString())) });
        return "accepted";
    }
}

function currentSchedulerStateOfRecord(input: string | undefined): { exists: boolean; state?: string } {
    if (!input) return { exists: false };
    const parsed = JSON.parse(input) as { exists?: boolean; state?: string };
    return { exists: parsed.exists === true, state: parsed.state };
}

function assertJson(text: string, what: string): void {
    try {
        JSON.parse(text);
    } catch {
        throw new DurableApiError(400, `${what} must be JSON (got ${JSON.stringify(text.slice(0, 80))}).`);
    }
}

function functionLookup(functions: HostFunction[]): DurableFunctionLookup {
    const byType = (type: string) => new Map(functions.filter((f) => f.triggerType.toLowerCase() === type && !f.disabled).map((f) => [f.name.toLowerCase(), f] as const));
    const orchestrators = byType("orchestrationtrigger");
    const activities = byType("activitytrigger");
    const entities = byType("entitytrigger");
    return {
        entity: (name) => (name ? entities.get(name.toLowerCase()) : undefined),
        entityNames: () => [...entities.values()].map((f) => f.name),
        orchestrator: (name) => (name ? orchestrators.get(name.toLowerCase()) : undefined),
        activity: (name) => (name ? activities.get(name.toLowerCase()) : undefined),
        orchestratorNames: () => [...orchestrators.values()].map((f) => f.name),
        activityNames: () => [...activities.values()].map((f) => f.name),
    };
}
