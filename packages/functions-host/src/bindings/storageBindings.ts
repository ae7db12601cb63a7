import type { RpcBindingInfo } from "../worker/coreTypes";

/** A storage blob input or output, its `%SETTING%`s resolved; `{...}` expressions wait for the trigger data. */
export interface BlobBinding {
    kind: "blob";
    bindingName: string;
    direction: "in" | "out";
    path: string;
    connection: string | undefined;
    dataType: string | undefined;
}

/** A table input or output, its `%SETTING%`s resolved; `{...}` expressions wait for the trigger data. */
export interface TableBinding {
    kind: "table";
    bindingName: string;
    direction: "in" | "out";
    tableName: string;
    partitionKey: string | undefined;
    rowKey: string | undefined;
    take: number | undefined;
    filter: string | undefined;
    connection: string | undefined;
}

export type StorageBinding = BlobBinding | TableBinding;

/** Reads a blob or table binding's properties; `resolve` applies `%SETTING%`s. Returns undefined for other binding types. */
export function describeStorageBinding(
    functionName: string,
    bindingName: string,
    binding: RpcBindingInfo,
    resolve: (value: unknown, property: string) => string | undefined,
): StorageBinding | undefined {
    const type = String(binding.type ?? "").toLowerCase();
    const direction = binding.direction === "out" ? "out" : "in";
    const where = `Function '${functionName}' ${type} ${direction === "in" ? "input" : "output"} binding '${bindingName}'`;
    if (type === "blob") {
        const path = resolve(binding.path, "path");
        if (!path) throw new Error(`${where} has no 'path'.`);
        if (!/^[^/]+\/./.test(path)) throw new Error(`${where}: invalid blob path '${path}'. Blob identifiers must be in the format 'container/blob'.`);
        return { kind: "blob", bindingName, direction, path, connection: resolve(binding.connection, "connection"), dataType: typeof binding.dataType === "string" ? binding.dataType : undefined };
    }
    if (type === "table") {
        const tableName = resolve(binding.tableName, "tableName");
        if (!tableName) throw new Error(`${where} has no 'tableName'.`);
        const rowKey = resolve(binding.rowKey, "rowKey");
        const take = binding.take === undefined || binding.take === null ? undefined : Number(binding.take);
        const filter = resolve(binding.filter, "filter");
        if (direction === "in" && rowKey && (take !== undefined || filter)) throw new Error(`${where}: 'rowKey' cannot be combined with 'take' or 'filter'.`);
        if (take !== undefined && (!Number.isInteger(take) || take < 0)) throw new Error(`${where}: 'take' must be a non-negative integer (got ${String(binding.take)}).`);
        return { kind: "table", bindingName, direction, tableName, partitionKey: resolve(binding.partitionKey, "partitionKey"), rowKey, take, filter, connection: resolve(binding.connection, "connection") };
    }
    return undefined;
}
