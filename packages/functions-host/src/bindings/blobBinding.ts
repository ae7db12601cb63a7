import { BlobServiceClient, type ContainerClient } from "@azure/storage-blob";
import { isNotFound } from "../storage/storageAccount";
import type { RpcTypedData } from "../worker/coreTypes";

/**
 * Blob reads and writes for blob bindings, through the account's blob endpoint. A write
 * replaces the blob (a block-blob upload) and creates the container when it is missing, as the
 * Blobs extension does.
 */
export class BlobBindingStore {
    readonly #service: BlobServiceClient;

    constructor(connectionString: string, what: string) {
        if (/(^|;)\s*(TableEndpoint|QueueEndpoint)=/i.test(connectionString) && !/(^|;)\s*BlobEndpoint=/i.test(connectionString)) {
            throw new Error(`${what} needs blob storage, but its connection string names table/queue endpoints and no BlobEndpoint. Add BlobEndpoint=http://127.0.0.1:<blob port>/devstoreaccount1 (Azurite's blob service) or use "UseDevelopmentStorage=true".`);
        }
        this.#service = BlobServiceClient.fromConnectionString(connectionString);
    }

    /** The blob's bytes, or undefined when the blob (or its container) does not exist. */
    async read(path: string): Promise<Buffer | undefined> {
        const [container, name] = splitBlobPath(path);
        try {
            return await this.#service.getContainerClient(container).getBlockBlobClient(name).downloadToBuffer();
        } catch (error) {
            if (isNotFound(error)) return undefined;
            throw error;
        }
    }

    async write(path: string, content: Buffer): Promise<void> {
        const [containerName, name] = splitBlobPath(path);
        const container = this.#service.getContainerClient(containerName);
        try {
            await upload(container, name, content);
        } catch (error) {
            if (!isNotFound(error)) throw error;
            await container.createIfNotExists();
            await upload(container, name, content);
        }
    }
}

function upload(container: ContainerClient, name: string, content: Buffer): Promise<unknown> {
    return container.getBlockBlobClient(name).upload(content, content.length);
}

export function splitBlobPath(path: string): [string, string] {
    const slash = path.indexOf("/");
    if (slash <= 0 || slash === path.length - 1) throw new Error(`Invalid blob path specified : '${path}'. Blob identifiers must be in the format 'container/blob'.`);
    return [path.slice(0, slash), path.slice(slash + 1)];
}

/** What an output value writes: text as UTF-8, bytes as they are, JSON as its text; nothing for null. */
export function blobContent(data: RpcTypedData | null | undefined): Buffer | undefined {
    if (!data) return undefined;
    if (typeof data.string === "string") return Buffer.from(data.string, "utf8");
    if (data.bytes) return Buffer.from(data.bytes);
    if (data.stream) return Buffer.from(data.stream);
    if (typeof data.json === "string") return Buffer.from(data.json, "utf8");
    if (typeof data.int === "number") return Buffer.from(String(data.int));
    if (typeof data.double === "number") return Buffer.from(String(data.double));
    return undefined;
}
