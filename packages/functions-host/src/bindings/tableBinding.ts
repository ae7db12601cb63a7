import type { TableClient, TableEntity, TransactionAction } from "@azure/data-tables";
import { isNotFound } from "../storage/storageAccount";
import type { RpcTypedData } from "../worker/coreTypes";

const MAX_BATCH = 100;

/**
 * Table output as the Tables extension's TableEntityWriter writes it: each entity's own
 * PartitionKey/RowKey, else the binding's; grouped per partition into entity-group
 * transactions of at most 100; an entity without an ETag is an insert (an existing row fails
 * the invocation with 409 Conflict), `ETag: "*"` replaces or inserts, any other ETag replaces
 * only that version. A row key repeated within one output flushes the earlier ones first. The
 * table is created when missing.
 */
export async function writeTableOutput(table: TableClient, data: RpcTypedData | null | undefined, keys: { partitionKey?: string; rowKey?: string }, where: string): Promise<number> {
    const items = outputItems(data, where);
    const partitions = new Map<string, Map<string, TransactionAction>>();
    for (const item of items) {
        const { entity, etag } = toTableEntity(item, keys, where);
        let partition = partitions.get(entity.partitionKey);
        if (partition?.has(entity.rowKey)) {
            await submit(table, [...partition.values()]);
            partition = undefined;
        }
        if (!partition) {
            partition = new Map();
            partitions.set(entity.partitionKey, partition);
        }
        partition.set(entity.rowKey, etag === undefined ? ["create", entity] : etag === "*" ? ["upsert", entity, "Replace"] : ["update", entity, "Replace", { etag }]);
        if (partition.size >= MAX_BATCH) {
            await submit(table, [...partition.values()]);
            partitions.delete(entity.partitionKey);
        }
    }
    for (const partition of partitions.values()) await submit(table, [...partition.values()]);
    return items.length;
}

async function submit(table: TableClient, actions: TransactionAction[]): Promise<void> {
    if (actions.length === 0) return;
    try {
        await table.submitTransaction(actions);
    } catch (error) {
        if (!isNotFound(error)) throw error;
        await table.createTable();
        await table.submitTransaction(actions);
    }
}

function outputItems(data: RpcTypedData | null | undefined, where: string): Record<string, unknown>[] {
    if (!data) return [];
    let value: unknown;
    const text = typeof data.json === "string" ? data.json : typeof data.string === "string" ? data.string : data.bytes ? Buffer.from(data.bytes).toString("utf8") : undefined;
    if (text === undefined) throw new Error(`${where}: a table output value must be an object or an array of objects.`);
    try {
        value = JSON.parse(text) as unknown;
    } catch {
        throw new Error(`${where}: a table output value must be an object or an array of objects (got text that is not JSON).`);
    }
    const items = Array.isArray(value) ? value : [value];
    for (const item of items) {
        if (item === null || typeof item !== "object" || Array.isArray(item)) throw new Error(`${where}: every table output entity must be an object (got ${JSON.stringify(item)}).`);
    }
    return items as Record<string, unknown>[];
}

/**
 * The extension's CreateTableEntityFromJObject: PartitionKey, RowKey and ETag matched
 * case-insensitively; JSON integers are Int64, other numbers Double, strings stay strings
 * (dates are not parsed), nested objects and arrays are stored as their (indented) JSON text.
 */
function toTableEntity(item: Record<string, unknown>, keys: { partitionKey?: string; rowKey?: string }, where: string): { entity: TableEntity; etag: string | undefined } {
    const properties: Record<string, unknown> = {};
    let partitionKey: unknown;
    let rowKey: unknown;
    let etag: unknown;
    for (const [name, value] of Object.entries(item)) {
        const lower = name.toLowerCase();
        if (lower === "partitionkey") partitionKey = value;
        else if (lower === "rowkey") rowKey = value;
        else if (lower === "etag" || lower === "odata.etag") etag = value;
        else if (lower === "timestamp") continue; // set by the service
        else if (value === null || value === undefined) continue;
        else properties[name] = toEdmValue(value);
    }
    partitionKey ??= keys.partitionKey;
    rowKey ??= keys.rowKey;
    validateKey(partitionKey, "PartitionKey", where);
    validateKey(rowKey, "RowKey", where);
    return { entity: { partitionKey: partitionKey as string, rowKey: rowKey as string, ...properties }, etag: typeof etag === "string" && etag !== "" ? etag : undefined };
}

function toEdmValue(value: unknown): unknown {
    if (typeof value === "number") return Number.isInteger(value) ? { value: String(value), type: "Int64" } : { value, type: "Double" };
    if (typeof value === "object") return JSON.stringify(value, null, 2);
    return value;
}

/** TableClientHelpers.ValidateAzureTableKeyValue: a string of at most 1024 characters without / \ # ? or control characters. */
function validateKey(value: unknown, name: string, where: string): void {
    if (typeof value !== "string") {
        throw new Error(`${where}: the entity has no ${name} string${value === undefined ? " (set it on the value or on the binding)" : ` (got ${JSON.stringify(value)})`}.`);
    }
    // eslint-disable-next-line no-control-regex
    if (value.length > 1024 || /[/\\#?\u0000-\u001f\u007f-\u009f]/.test(value)) throw new Error(`${where}: '${value}' is not a valid value for a partition key or row key.`);
}

/**
 * Table input as the extension reads it: with a row key, the one entity (null when missing);
 * otherwise an array: `PartitionKey eq '<key>'` joined to the binding's filter with "and",
 * at most `take` entities. Timestamp and ETag are left out, as the extension's
 * ConvertEntityToJObject does.
 */
export async function readTableInput(table: TableClient, binding: { partitionKey?: string; rowKey?: string; take?: number; filter?: string }): Promise<RpcTypedData> {
    if (binding.rowKey) {
        if (binding.partitionKey === undefined) throw new Error("A table input with a rowKey needs a partitionKey too.");
        try {
            const entity = await table.getEntity(binding.partitionKey, binding.rowKey, { disableTypeConversion: true });
            return { json: JSON.stringify(fromTableEntity(entity)) };
        } catch (error) {
            if (isNotFound(error)) return { json: "null" };
            throw error;
        }
    }
    let filter = binding.filter;
    if (binding.partitionKey) {
        const partitionFilter = `PartitionKey eq '${binding.partitionKey.replace(/'/g, "''")}'`;
        filter = filter ? `${partitionFilter} and ${filter}` : partitionFilter;
    }
    const result: Record<string, unknown>[] = [];
    const take = binding.take && binding.take > 0 ? binding.take : undefined;
    try {
        for await (const entity of table.listEntities({ queryOptions: filter ? { filter } : undefined, disableTypeConversion: true })) {
            result.push(fromTableEntity(entity));
            if (take !== undefined && result.length >= take) break;
        }
    } catch (error) {
        if (!isNotFound(error)) throw error;
    }
    return { json: JSON.stringify(result) };
}

function fromTableEntity(entity: Record<string, unknown>): Record<string, unknown> {
    const result: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(entity)) {
        if (name === "etag" || name === "timestamp" || name === "odata.metadata") continue;
        const key = name === "partitionKey" ? "PartitionKey" : name === "rowKey" ? "RowKey" : name;
        result[key] = fromEdmValue(value);
    }
    return result;
}

function fromEdmValue(value: unknown): unknown {
    if (value === null || typeof value !== "object" || !("type" in value) || !("value" in value)) return value;
    const { type, value: raw } = value as { type: string; value: string };
    switch (type) {
        case "Int32":
        case "Int64":
        case "Double":
            return Number(raw);
        case "Boolean":
            return raw === "true" || (raw as unknown) === true;
        default:
            return raw;
    }
}
