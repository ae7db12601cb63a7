import { odata, type TableClient } from "@azure/data-tables";
import { isConflict, isNotFound } from "./storageAccount";

/** Azure Table string properties hold at most 32K UTF-16 characters; queue messages at most 64 KB. */
export const MAX_INLINE_CHARS = 30_000;
const CHUNK_CHARS = 30_000;

/**
 * Values too large for one table property or one queue message, stored in an overflow table in
 * 30 000-character rows (PartitionKey = key, RowKey = chunk number). This stands in for the
 * blob container the Azure Storage provider uses (`<Prop>BlobName` columns point at a key here).
 */
export class LargeValueStore {
    #ready: Promise<void> | undefined;

    constructor(private readonly table: TableClient) {}

    async put(key: string, value: string): Promise<void> {
        await this.#ensureTable();
        const rows: { partitionKey: string; rowKey: string; Value: string }[] = [];
        for (let i = 0, n = 0; i < value.length || n === 0; i += CHUNK_CHARS, n++) {
            rows.push({ partitionKey: key, rowKey: String(n).padStart(6, "0"), Value: value.slice(i, i + CHUNK_CHARS) });
        }
        for (let i = 0; i < rows.length; i += 50) {
            await this.table.submitTransaction(rows.slice(i, i + 50).map((row) => ["upsert", row, "Replace"]));
        }
    }

    async get(key: string): Promise<string> {
        const parts: { rowKey: string; value: string }[] = [];
        for await (const row of this.table.listEntities<{ Value?: string }>({ queryOptions: { filter: odata`PartitionKey eq ${key}` } })) {
            parts.push({ rowKey: row.rowKey ?? "", value: row.Value ?? "" });
        }
        if (parts.length === 0) throw new Error(`Overflow value '${key}' is missing from table ${this.table.tableName}; the store was modified outside the host.`);
        return parts
            .sort((a, b) => a.rowKey.localeCompare(b.rowKey))
            .map((p) => p.value)
            .join("");
    }

    /** Deletes every value whose key starts with `prefix` (e.g. all overflow of one instance). */
    async deletePrefix(prefix: string): Promise<void> {
        const filter = odata`PartitionKey ge ${prefix} and PartitionKey lt ${prefix + "\uffff"}`;
        try {
            for await (const row of this.table.listEntities({ queryOptions: { filter, select: ["PartitionKey", "RowKey"] } })) {
                await this.table.deleteEntity(row.partitionKey ?? "", row.rowKey ?? "").catch((error: unknown) => {
                    if (!isNotFound(error)) throw error;
                });
            }
        } catch (error) {
            if (!isNotFound(error)) throw error;
        }
    }

    #ensureTable(): Promise<void> {
        this.#ready ??= this.table.createTable().catch((error: unknown) => {
            if (!isConflict(error)) throw error;
        });
        return this.#ready;
    }
}
