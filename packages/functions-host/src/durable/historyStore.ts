import { odata, type TableEntityResult, type TransactionAction } from "@azure/data-tables";
import { MAX_INLINE_CHARS } from "../storage/largeValueStore";
import { isNotFound } from "../storage/storageAccount";
import type { HistoryEvent, RuntimeStatus } from "./historyEvent";
import type { OutboundMessage } from "./messages";
import type { TaskHub } from "./taskHub";

/** A row of `<hub>Instances` (PartitionKey = instance id, RowKey = ""). */
export interface InstanceRecord {
    instanceId: string;
    executionId: string;
    name: string;
    version?: string;
    input?: string;
    output?: string;
    customStatus?: string;
    createdTime: Date;
    lastUpdatedTime: Date;
    completedTime?: Date;
    runtimeStatus: RuntimeStatus;
    /** ETag of the row as read (not stored). */
    etag?: string;
}

/**
 * The `sentinel` row of an instance's history partition: which execution the history belongs
 * to, how many rows are committed (rows past it are leftovers of an interrupted write), and the
 * messages of the last committed episode with whether they have all been sent.
 */
export interface Sentinel {
    executionId: string;
    historyLength: number;
    outbox: OutboundMessage[];
    outboxSent: boolean;
    etag: string;
}

export interface InstanceSnapshot {
    record: InstanceRecord | undefined;
    sentinel: Sentinel | undefined;
    history: HistoryEvent[];
}

const STRING_FIELDS = ["Name", "Input", "Result", "Reason", "Details", "FailureDetails", "Version", "InstanceId", "OrchestrationStatus", "ParentInstance", "MessageId", "RetryOptions", "TimerPurpose", "CustomStatus", "ChildId"] as const;
const NUMBER_FIELDS = ["TaskScheduledId", "TimerId", "ChainOf", "Attempt"] as const;
const DATE_FIELDS = ["FireAt", "FinalFireAt"] as const;
const RECORD_STRING_FIELDS = ["Name", "Version", "Input", "Output", "CustomStatus"] as const;

type Entity = Record<string, unknown> & { partitionKey: string; rowKey: string };

export class HistoryStore {
    constructor(private readonly hub: TaskHub) {}

    async load(instanceId: string): Promise<InstanceSnapshot> {
        const [record, rows] = await Promise.all([this.readRecord(instanceId), this.#historyRows(instanceId)]);
        const sentinelRow = rows.find((r) => r.rowKey === "sentinel");
        if (!sentinelRow) return { record, sentinel: undefined, history: [] };
        const sentinel: Sentinel = {
            executionId: String(sentinelRow.ExecutionId ?? ""),
            historyLength: Number(sentinelRow.HistoryLength ?? 0),
            outbox: sentinelRow.Outbox ? (JSON.parse(await this.#readString(sentinelRow, "Outbox")) as OutboundMessage[]) : [],
            outboxSent: sentinelRow.OutboxSent === true,
            etag: String(sentinelRow.etag ?? "*"),
        };
        const historyRows = rows
            .filter((r) => r.rowKey !== "sentinel" && r.ExecutionId === sentinel.executionId && parseInt(r.rowKey, 16) < sentinel.historyLength)
            .sort((a, b) => a.rowKey.localeCompare(b.rowKey));
        const history: HistoryEvent[] = [];
        for (const row of historyRows) history.push(await this.#decodeEvent(row));
        if (history.length !== sentinel.historyLength) {
            throw new Error(`History of instance '${instanceId}' is incomplete (${history.length} of ${sentinel.historyLength} rows); the ${this.hub.name}History table was modified outside the host.`);
        }
        return { record, sentinel, history };
    }

    /**
     * Appends an episode's events (or, with `reset`, replaces the history with a new execution's)
     * and the sentinel, in entity-group transactions; the sentinel goes in the last one, so a crash
     * part-way leaves the committed history unchanged.
     */
    async commit(instanceId: string, args: { executionId: string; startIndex: number; events: HistoryEvent[]; outbox: OutboundMessage[]; previous: Sentinel | undefined }): Promise<Sentinel> {
        const rows: Entity[] = [];
        for (let i = 0; i < args.events.length; i++) {
            rows.push(await this.#encodeEvent(instanceId, args.executionId, args.startIndex + i, args.events[i] as HistoryEvent));
        }
        const historyLength = args.startIndex + args.events.length;
        const sentinel: Entity = {
            partitionKey: instanceId,
            rowKey: "sentinel",
            ExecutionId: args.executionId,
            HistoryLength: historyLength,
            OutboxSent: args.outbox.length === 0,
            IsCheckpointComplete: true,
            CheckpointCompletedTimestamp: new Date(),
        };
        await this.#putString(instanceId, sentinel, "Outbox", JSON.stringify(args.outbox));
        // An entity-group transaction takes at most 100 entities and 4 MB.
        const batches: TransactionAction[][] = [[]];
        let batchBytes = 0;
        for (const row of rows) {
            const bytes = estimateBytes(row);
            const current = batches[batches.length - 1] as TransactionAction[];
            if (current.length >= 99 || (current.length > 0 && batchBytes + bytes > 3_000_000)) {
                batches.push([]);
                batchBytes = 0;
            }
            (batches[batches.length - 1] as TransactionAction[]).push(["upsert", row, "Replace"]);
            batchBytes += bytes;
        }
        const last = batches[batches.length - 1] as TransactionAction[];
        last.push(args.previous ? ["update", sentinel, "Replace", { etag: args.previous.etag }] : ["create", sentinel]);
        let etag = "*";
        for (const batch of batches) {
            const response = await this.hub.history.submitTransaction(batch);
            const sentinelResult = response.subResponses[response.subResponses.length - 1];
            if (sentinelResult?.etag) etag = sentinelResult.etag;
        }
        if (etag === "*") etag = (await this.hub.history.getEntity(instanceId, "sentinel")).etag;
        if (args.previous && args.previous.historyLength > historyLength) {
            for (let i = historyLength; i < args.previous.historyLength; i++) {
                await this.hub.history.deleteEntity(instanceId, rowKey(i)).catch(() => undefined);
            }
        }
        return { executionId: args.executionId, historyLength, outbox: args.outbox, outboxSent: args.outbox.length === 0, etag };
    }

    /** Sends a committed episode's (or entity batch's) outbox, then marks it sent; returns the sentinel as it now is. */
    async sendOutbox(instanceId: string, sentinel: Sentinel): Promise<Sentinel> {
        if (sentinel.outboxSent) return sentinel;
        await Promise.all(sentinel.outbox.map((outbound) => this.hub.send(outbound)));
        return this.markOutboxSent(instanceId, sentinel);
    }

    async markOutboxSent(instanceId: string, sentinel: Sentinel): Promise<Sentinel> {
        const response = await this.hub.history.updateEntity({ partitionKey: instanceId, rowKey: "sentinel", OutboxSent: true, Outbox: "" }, "Merge", { etag: sentinel.etag });
        return { ...sentinel, outbox: [], outboxSent: true, etag: response.etag ?? "*" };
    }

    async readRecord(instanceId: string): Promise<InstanceRecord | undefined> {
        try {
            const entity = await this.hub.instances.getEntity<Record<string, unknown>>(instanceId, "");
            return await this.#decodeRecord(entity);
        } catch (error) {
            if (isNotFound(error)) return undefined;
            throw error;
        }
    }

    /**
     * Writes the Instances row. With `condition` the write only succeeds if the row is unchanged
     * since it was read ({etag}) or does not exist yet ("create"); otherwise it throws (412/409).
     */
    async writeRecord(record: InstanceRecord, condition?: { etag: string } | "create"): Promise<void> {
        const entity: Entity = {
            partitionKey: record.instanceId,
            rowKey: "",
            ExecutionId: record.executionId,
            RuntimeStatus: record.runtimeStatus,
            CreatedTime: record.createdTime,
            LastUpdatedTime: record.lastUpdatedTime,
        };
        if (record.completedTime) entity.CompletedTime = record.completedTime;
        const values: Record<(typeof RECORD_STRING_FIELDS)[number], string | undefined> = {
            Name: record.name,
            Version: record.version,
            Input: record.input,
            Output: record.output,
            CustomStatus: record.customStatus,
        };
        for (const field of RECORD_STRING_FIELDS) {
            const value = values[field];
            if (value !== undefined) await this.#putString(record.instanceId, entity, field, value);
        }
        if (condition === "create") await this.hub.instances.createEntity(entity);
        else if (condition) await this.hub.instances.updateEntity(entity, "Replace", { etag: condition.etag });
        else await this.hub.instances.upsertEntity(entity, "Replace");
    }

    /** Instance records matching an OData filter, in instance-id order, one page at a time. */
    async queryRecords(filter: string, pageSize: number, after: string | undefined): Promise<{ records: InstanceRecord[]; more: boolean }> {
        const conditions = [filter, after ? odata`PartitionKey gt ${after}` : ""].filter((c) => c !== "");
        const records: InstanceRecord[] = [];
        const iterator = this.hub.instances.listEntities<Record<string, unknown>>({ queryOptions: conditions.length > 0 ? { filter: conditions.join(" and ") } : {} });
        for await (const entity of iterator) {
            if (records.length === pageSize) return { records, more: true };
            records.push(await this.#decodeRecord(entity));
        }
        return { records, more: false };
    }

    async purge(instanceId: string): Promise<void> {
        const rows = await this.#historyRows(instanceId);
        for (let i = 0; i < rows.length; i += 100) {
            await this.hub.history.submitTransaction(rows.slice(i, i + 100).map((r) => ["delete", { partitionKey: r.partitionKey, rowKey: r.rowKey }] as TransactionAction));
        }
        await this.hub.instances.deleteEntity(instanceId, "").catch((error: unknown) => {
            if (!isNotFound(error)) throw error;
        });
        await this.hub.large.deletePrefix(`${instanceId}|`);
    }

    async #historyRows(instanceId: string): Promise<Entity[]> {
        const rows: Entity[] = [];
        try {
            for await (const entity of this.hub.history.listEntities<Record<string, unknown>>({ queryOptions: { filter: odata`PartitionKey eq ${instanceId}` } })) {
                rows.push(entity as unknown as Entity);
            }
        } catch (error) {
            if (!isNotFound(error)) throw error;
        }
        return rows;
    }

    async #encodeEvent(instanceId: string, executionId: string, index: number, event: HistoryEvent): Promise<Entity> {
        const entity: Entity = {
            partitionKey: instanceId,
            rowKey: rowKey(index),
            ExecutionId: executionId,
            EventType: event.EventType,
            EventId: event.EventId,
            IsPlayed: false,
            _Timestamp: new Date(event.Timestamp),
        };
        for (const field of STRING_FIELDS) {
            const value = event[field];
            if (value !== undefined) await this.#putString(instanceId, entity, field, value);
        }
        for (const field of NUMBER_FIELDS) if (event[field] !== undefined) entity[field] = event[field];
        for (const field of DATE_FIELDS) if (event[field] !== undefined) entity[field] = new Date(event[field] as string);
        return entity;
    }

    async #decodeEvent(row: Entity): Promise<HistoryEvent> {
        const event: HistoryEvent = {
            EventType: row.EventType as HistoryEvent["EventType"],
            EventId: Number(row.EventId ?? -1),
            Timestamp: toIso(row._Timestamp),
        };
        const target = event as unknown as Record<string, unknown>;
        for (const field of STRING_FIELDS) {
            if (row[field] !== undefined && row[field] !== null) target[field] = await this.#readString(row, field);
        }
        for (const field of NUMBER_FIELDS) if (typeof row[field] === "number") target[field] = row[field];
        for (const field of DATE_FIELDS) if (row[field] !== undefined && row[field] !== null) target[field] = toIso(row[field]);
        return event;
    }

    async #decodeRecord(entity: TableEntityResult<Record<string, unknown>>): Promise<InstanceRecord> {
        const row = entity as unknown as Entity;
        const read = async (field: (typeof RECORD_STRING_FIELDS)[number]) => (row[field] !== undefined && row[field] !== null ? await this.#readString(row, field) : undefined);
        return {
            instanceId: row.partitionKey,
            executionId: String(row.ExecutionId ?? ""),
            name: (await read("Name")) ?? "",
            version: await read("Version"),
            input: await read("Input"),
            output: await read("Output"),
            customStatus: await read("CustomStatus"),
            createdTime: new Date(toIso(row.CreatedTime)),
            lastUpdatedTime: new Date(toIso(row.LastUpdatedTime)),
            completedTime: row.CompletedTime ? new Date(toIso(row.CompletedTime)) : undefined,
            runtimeStatus: String(row.RuntimeStatus ?? "Pending") as RuntimeStatus,
            etag: typeof row.etag === "string" ? row.etag : undefined,
        };
    }

    /** Sets a string column, moving it to the overflow table (column `<field>BlobName`) when it is too large. */
    async #putString(instanceId: string, entity: Entity, field: string, value: string): Promise<void> {
        if (value.length <= MAX_INLINE_CHARS) {
            entity[field] = value;
            return;
        }
        const key = `${instanceId}|${entity.rowKey || "record"}|${field}|${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
        await this.hub.large.put(key, value);
        entity[field] = "";
        entity[`${field}BlobName`] = key;
    }

    async #readString(row: Entity, field: string): Promise<string> {
        const blobName = row[`${field}BlobName`];
        if (typeof blobName === "string" && blobName !== "") return this.hub.large.get(blobName);
        return String(row[field]);
    }
}

function estimateBytes(entity: Entity): number {
    let bytes = 0;
    for (const value of Object.values(entity)) bytes += typeof value === "string" ? value.length * 2 + 16 : 16;
    return bytes;
}

export function rowKey(index: number): string {
    return index.toString(16).toUpperCase().padStart(16, "0");
}

function toIso(value: unknown): string {
    if (value instanceof Date) return value.toISOString();
    if (typeof value === "string") return new Date(value).toISOString();
    return new Date(0).toISOString();
}
