import { TableClient } from "@azure/data-tables";
import { QueueClient, QueueServiceClient } from "@azure/storage-queue";

const DEV_ACCOUNT = "devstoreaccount1";
const DEV_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/** A storage account reached through a connection string (Azurite or a real account). */
export class StorageAccount {
    readonly connectionString: string;
    readonly #tables = new Map<string, TableClient>();
    readonly #queues = new Map<string, QueueClient>();
    readonly #insecure: boolean;

    constructor(connectionString: string) {
        this.connectionString = normalizeConnectionString(connectionString);
        this.#insecure = /DefaultEndpointsProtocol=http(;|$)/i.test(this.connectionString) || /Endpoint=http:\/\//i.test(this.connectionString);
    }

    table(name: string): TableClient {
        let client = this.#tables.get(name);
        if (!client) {
            client = TableClient.fromConnectionString(this.connectionString, name, { allowInsecureConnection: this.#insecure });
            this.#tables.set(name, client);
        }
        return client;
    }

    queue(name: string): QueueClient {
        let client = this.#queues.get(name);
        if (!client) {
            client = QueueServiceClient.fromConnectionString(this.connectionString).getQueueClient(name);
            this.#queues.set(name, client);
        }
        return client;
    }
}

/**
 * Expands `UseDevelopmentStorage=true` (optionally with DevelopmentStorageProxyUri) into the
 * explicit Azurite connection string on the default ports (tables 10002, queues 10001).
 */
export function normalizeConnectionString(text: string): string {
    const parts = new Map<string, string>();
    for (const piece of text.split(";")) {
        const index = piece.indexOf("=");
        if (index > 0) parts.set(piece.slice(0, index).trim().toLowerCase(), piece.slice(index + 1).trim());
    }
    if (parts.get("usedevelopmentstorage")?.toLowerCase() === "true") {
        const proxy = parts.get("developmentstorageproxyuri") ?? "http://127.0.0.1";
        const origin = proxy.replace(/\/+$/, "").replace(/:\d+$/, "");
        return [
            "DefaultEndpointsProtocol=http",
            `AccountName=${DEV_ACCOUNT}`,
            `AccountKey=${DEV_KEY}`,
            `BlobEndpoint=${origin}:10000/${DEV_ACCOUNT}`,
            `QueueEndpoint=${origin}:10001/${DEV_ACCOUNT}`,
            `TableEndpoint=${origin}:10002/${DEV_ACCOUNT}`,
        ].join(";");
    }
    if (!parts.has("accountname") && !parts.has("sharedaccesssignature")) {
        throw new Error(`The storage connection string has no AccountName (got "${redact(text)}"). Use an Azurite connection string or "UseDevelopmentStorage=true".`);
    }
    return text;
}

function redact(text: string): string {
    return text.replace(/(AccountKey|SharedAccessSignature)=[^;]*/gi, "$1=***");
}

/** True for the storage SDKs' "not found" errors (404). */
export function isNotFound(error: unknown): boolean {
    return (error as { statusCode?: number } | null)?.statusCode === 404;
}

export function isConflict(error: unknown): boolean {
    return (error as { statusCode?: number } | null)?.statusCode === 409;
}

export function isPreconditionFailed(error: unknown): boolean {
    return (error as { statusCode?: number } | null)?.statusCode === 412;
}
