import type { HostLogger } from "../logger";
import type { StorageAccount } from "../storage/storageAccount";
import type { RpcInvocationResponse, RpcParameterBinding, RpcTypedData } from "../worker/coreTypes";
import { BindingData, resolveBindingProperty } from "./bindingExpressions";
import { blobContent, BlobBindingStore } from "./blobBinding";
import type { BlobBinding, StorageBinding, TableBinding } from "./storageBindings";
import { readTableInput, writeTableOutput } from "./tableBinding";

type ResolvedBinding = (BlobBinding & { resolvedPath: string }) | (TableBinding & { resolvedTable: string; resolvedPartitionKey?: string; resolvedRowKey?: string; resolvedFilter?: string });

/**
 * Blob and table inputs and outputs of one function. As the host binds every parameter before
 * the function runs, `{...}` expressions are resolved from the trigger data first; a name the
 * trigger does not carry fails the invocation without running the function.
 */
export class StorageBindingRunner {
    readonly #blobStores = new Map<string, BlobBindingStore>();

    constructor(
        private readonly account: (connection: string | undefined, what: string) => StorageAccount,
        private readonly logger: HostLogger,
    ) {}

    /** Resolves the function's storage bindings against the trigger metadata; throws with the host's wording when an expression has no value. */
    bind(functionName: string, bindings: StorageBinding[], triggerMetadata: Record<string, RpcTypedData> | undefined): BoundStorageBindings {
        if (bindings.length === 0) return new BoundStorageBindings(this, functionName, []);
        const data = BindingData.fromTriggerMetadata(triggerMetadata);
        const resolved = bindings.map((binding): ResolvedBinding => {
            const resolve = (template: string | undefined) => (template === undefined ? undefined : resolveBindingProperty(functionName, binding.bindingName, template, data));
            if (binding.kind === "blob") return { ...binding, resolvedPath: resolve(binding.path) as string };
            return {
                ...binding,
                resolvedTable: resolve(binding.tableName) as string,
                resolvedPartitionKey: resolve(binding.partitionKey),
                resolvedRowKey: resolve(binding.rowKey),
                resolvedFilter: resolve(binding.filter),
            };
        });
        return new BoundStorageBindings(this, functionName, resolved);
    }

    blobStore(connection: string | undefined, what: string): BlobBindingStore {
        const account = this.account(connection, what);
        let store = this.#blobStores.get(account.connectionString);
        if (!store) {
            store = new BlobBindingStore(account.connectionString, what);
            this.#blobStores.set(account.connectionString, store);
        }
        return store;
    }

    tableAccount(connection: string | undefined, what: string): StorageAccount {
        return this.account(connection, what);
    }

    log(functionName: string, message: string): void {
        this.logger.function("debug", functionName, undefined, message);
    }
}

export class BoundStorageBindings {
    constructor(
        private readonly runner: StorageBindingRunner,
        private readonly functionName: string,
        private readonly bindings: ResolvedBinding[],
    ) {}

    /** The input bindings' data: a blob's bytes (a string with dataType "string"; null when missing), a table entity or array of entities. */
    async readInputs(): Promise<RpcParameterBinding[]> {
        const inputs: RpcParameterBinding[] = [];
        for (const binding of this.bindings) {
            if (binding.direction !== "in") continue;
            const what = `Function '${this.functionName}' ${binding.kind} input '${binding.bindingName}'`;
            if (binding.kind === "blob") {
                const content = await this.runner.blobStore(binding.connection, what).read(binding.resolvedPath);
                const data: RpcTypedData | null = content === undefined ? null : binding.dataType?.toLowerCase() === "string" ? { string: content.toString("utf8") } : { bytes: content };
                inputs.push({ name: binding.bindingName, data });
            } else {
                const table = this.runner.tableAccount(binding.connection, what).table(binding.resolvedTable);
                const data = await readTableInput(table, { partitionKey: binding.resolvedPartitionKey, rowKey: binding.resolvedRowKey, take: binding.take, filter: binding.resolvedFilter });
                inputs.push({ name: binding.bindingName, data });
            }
        }
        return inputs;
    }

    /** Writes the output bindings' values after the function succeeded; a value the function did not set writes nothing. */
    async writeOutputs(response: RpcInvocationResponse): Promise<void> {
        for (const binding of this.bindings) {
            if (binding.direction !== "out") continue;
            const data = binding.bindingName === "$return" ? response.returnValue : response.outputData?.find((o) => o.name === binding.bindingName)?.data;
            const what = `Function '${this.functionName}' ${binding.kind} output '${binding.bindingName}'`;
            if (binding.kind === "blob") {
                const content = blobContent(data);
                if (content === undefined) continue;
                await this.runner.blobStore(binding.connection, what).write(binding.resolvedPath, content);
                this.runner.log(this.functionName, `Wrote ${content.length} byte(s) to blob '${binding.resolvedPath}'.`);
            } else {
                const table = this.runner.tableAccount(binding.connection, what).table(binding.resolvedTable);
                const count = await writeTableOutput(table, data, { partitionKey: binding.resolvedPartitionKey, rowKey: binding.resolvedRowKey }, what);
                if (count > 0) this.runner.log(this.functionName, `Wrote ${count} entit${count === 1 ? "y" : "ies"} to table '${binding.resolvedTable}'.`);
            }
        }
    }
}
