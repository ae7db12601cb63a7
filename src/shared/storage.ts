import { RestError, TableClient, type TableServiceClientOptions } from "@azure/data-tables";
import { DefaultAzureCredential, ManagedIdentityCredential, type TokenCredential } from "@azure/identity";
import { QueueClient } from "@azure/storage-queue";
import type { Config } from "./config";

const DEVELOPMENT_STORAGE =
    "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;" +
    "AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;" +
    "TableEndpoint=http://127.0.0.1:10002/devstoreaccount1;QueueEndpoint=http://127.0.0.1:10001/devstoreaccount1";

/** The HTTP status of a failed storage call (a `RestError`, or an error carrying a numeric `statusCode`), if it has one. */
export function storageErrorStatus(error: unknown): number | undefined {
    if (error instanceof RestError) return error.statusCode;
    const status = (error as { statusCode?: unknown })?.statusCode;
    return typeof status === "number" ? status : undefined;
}

/** `UseDevelopmentStorage=true` spelled out, as the Functions host does for Azurite. */
function expandConnectionString(connectionString: string): string {
    return /^\s*UseDevelopmentStorage\s*=\s*true\s*;?\s*$/i.test(connectionString) ? DEVELOPMENT_STORAGE : connectionString;
}

function usesPlainHttp(connectionString: string): boolean {
    return /DefaultEndpointsProtocol=http(;|$)/i.test(connectionString) || /Endpoint=http:\/\//i.test(connectionString);
}

export function createTableClient(connectionString: string, tableName: string, options: TableServiceClientOptions = {}): TableClient {
    const expanded = expandConnectionString(connectionString);
    return TableClient.fromConnectionString(expanded, tableName, { ...options, allowInsecureConnection: usesPlainHttp(expanded) });
}

export function createQueueClient(connectionString: string, queueName: string): QueueClient {
    return new QueueClient(expandConnectionString(connectionString), queueName);
}

/** How the app reaches its storage account: a connection string, or an identity and the service URIs. */
type StorageAccess =
    | { kind: "connectionString"; connectionString: string }
    | { kind: "identity"; tableServiceUri: string; queueServiceUri: string; credential: TokenCredential };

/**
 * The storage access the settings describe, the way the Functions host reads `AzureWebJobsStorage`:
 * a connection string when one is set; otherwise an identity-based connection from
 * `AzureWebJobsStorage__accountName` (or the `__tableServiceUri`/`__queueServiceUri` pair), with the
 * credential storageCredentialOf builds.
 */
export function storageAccessOf(config: Config): StorageAccess {
    if (config.AzureWebJobsStorage) return { kind: "connectionString", connectionString: config.AzureWebJobsStorage };
    const account = config.AzureWebJobsStorage__accountName;
    const tableServiceUri = config.AzureWebJobsStorage__tableServiceUri ?? `https://${account}.table.core.windows.net`;
    const queueServiceUri = config.AzureWebJobsStorage__queueServiceUri ?? `https://${account}.queue.core.windows.net`;
    const credential = storageCredentialOf(config);
    return { kind: "identity", tableServiceUri: tableServiceUri.replace(/\/+$/, ""), queueServiceUri: queueServiceUri.replace(/\/+$/, ""), credential };
}

/**
 * The credential the Functions host builds for `AzureWebJobsStorage`: with `__credential` =
 * managedidentity only the app's managed identity (a user-assigned one by `__clientId` or by
 * `__managedIdentityResourceId`), otherwise the default Azure credential chain, told the same identity.
 */
function storageCredentialOf(
    config: Pick<Config, "AzureWebJobsStorage__credential" | "AzureWebJobsStorage__clientId" | "AzureWebJobsStorage__managedIdentityResourceId">,
): TokenCredential {
    const clientId = config.AzureWebJobsStorage__clientId;
    const resourceId = config.AzureWebJobsStorage__managedIdentityResourceId;
    if (config.AzureWebJobsStorage__credential === "managedidentity") {
        return resourceId ? new ManagedIdentityCredential({ resourceId }) : new ManagedIdentityCredential(clientId ? { clientId } : {});
    }
    if (resourceId) return new DefaultAzureCredential({ managedIdentityResourceId: resourceId });
    return new DefaultAzureCredential(clientId ? { managedIdentityClientId: clientId } : {});
}

/** `options` tunes the client, e.g. `retryOptions` for a caller that handles its own retries. */
export function tableClientFor(access: StorageAccess, tableName: string, options: TableServiceClientOptions = {}): TableClient {
    return access.kind === "connectionString"
        ? createTableClient(access.connectionString, tableName, options)
        : new TableClient(access.tableServiceUri, tableName, access.credential, options);
}

export function queueClientFor(access: StorageAccess, queueName: string): QueueClient {
    return access.kind === "connectionString"
        ? createQueueClient(access.connectionString, queueName)
        : new QueueClient(`${access.queueServiceUri}/${queueName}`, access.credential);
}
