import { TableClient } from "@azure/data-tables";
import { QueueClient } from "@azure/storage-queue";

const DEVELOPMENT_STORAGE =
    "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;" +
    "AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;" +
    "TableEndpoint=http://127.0.0.1:10002/devstoreaccount1;QueueEndpoint=http://127.0.0.1:10001/devstoreaccount1";

/** `UseDevelopmentStorage=true` spelled out, as the Functions host does for Azurite. */
export function expandConnectionString(connectionString: string): string {
    return /^\s*UseDevelopmentStorage\s*=\s*true\s*;?\s*$/i.test(connectionString) ? DEVELOPMENT_STORAGE : connectionString;
}

function usesPlainHttp(connectionString: string): boolean {
    return /DefaultEndpointsProtocol=http(;|$)/i.test(connectionString) || /Endpoint=http:\/\//i.test(connectionString);
}

export function createTableClient(connectionString: string, tableName: string): TableClient {
    const expanded = expandConnectionString(connectionString);
    return TableClient.fromConnectionString(expanded, tableName, { allowInsecureConnection: usesPlainHttp(expanded) });
}

export function createQueueClient(connectionString: string, queueName: string): QueueClient {
    return new QueueClient(expandConnectionString(connectionString), queueName);
}
