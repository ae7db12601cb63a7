import { TableClient } from "@azure/data-tables";
import { BlobServiceClient } from "@azure/storage-blob";
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { freePort } from "../../src/azurite";
import { buildCatalog } from "../../src/functionCatalog";
import { AppSettings } from "../../src/config/appSettings";
import type { CapturedFunction } from "../../src/worker/coreApi";
import type { RpcBindingInfo } from "../../src/worker/coreTypes";
import { uniqueName } from "../helpers/names";
import { APP_DIR, call, fromBase64, queue, testLog, waitFor } from "./support/hostTestClient";
import { useInProcessHost } from "./support/inProcessHost";

// Blob bindings need Azurite's blob service, which the shared test Azurite does not run.
let blobAzurite: ChildProcess | undefined;
let connection: string;
const container = uniqueName("bind");
const tableName = uniqueName("bind");
const ordersQueue = uniqueName("orders");

async function startBlobAzurite(): Promise<string> {
    const port = await freePort();
    const main = path.join(path.dirname(require.resolve("azurite/package.json")), "dist", "src", "blob", "main.js");
    const child = spawn(process.execPath, [main, "--inMemoryPersistence", "--loose", "--skipApiVersionCheck", "--disableTelemetry", "--blobHost", "127.0.0.1", "--blobPort", String(port)], { stdio: ["ignore", "pipe", "pipe"] });
    blobAzurite = child;
    await new Promise<void>((resolve, reject) => {
        let output = "";
        const timer = setTimeout(() => reject(new Error(`Azurite blob did not start: ${output}`)), 20_000);
        child.stdout?.on("data", (chunk: Buffer) => {
            output += chunk.toString();
            if (/successfully/.test(output)) {
                clearTimeout(timer);
                resolve();
            }
        });
        child.once("exit", (code) => reject(new Error(`Azurite blob exited with ${code}: ${output}`)));
    });
    return `http://127.0.0.1:${port}/devstoreaccount1`;
}

beforeAll(async () => {
    connection = `${inject("azuriteConnectionString")};BlobEndpoint=${await startBlobAzurite()}`;
});

// Registered before the host's hooks: vitest runs afterAll hooks in reverse order, so this runs after the host has stopped.
afterAll(() => {
    blobAzurite?.kill();
});

const host = useInProcessHost(
    path.join(APP_DIR, "bindings"),
    ({ connectionString }) => ({ AzureWebJobsStorage: connectionString, BindingsStorage: connection, BINDINGS_CONTAINER: container, BINDINGS_TABLE: tableName, BINDINGS_QUEUE: uniqueName("bindq"), BINDINGS_ORDERS_QUEUE: ordersQueue }),
    { pollIntervalMs: 200, log: testLog("outputBindings") },
);

const blobs = () => BlobServiceClient.fromConnectionString(connection).getContainerClient(container);
const table = () => TableClient.fromConnectionString(connection, tableName, { allowInsecureConnection: true });
const runs = async (name: string): Promise<number> => (await call("GET", `${host.url}/api/seen`)).json().runs[name] ?? 0;

describe("blob output", () => {
    it("writes text, bytes and JSON to paths resolved from the route, the query and the JSON body, creating the container", async () => {
        const reply = await call("POST", `${host.url}/api/blobs/42?name=ann&code=ignored`, { customer: "acme", lines: [1, 2] }, { "x-part": "p7" });
        expect(reply.status).toBe(201);
        expect((await blobs().getBlockBlobClient("route/42.txt").downloadToBuffer()).toString("utf8")).toBe("text for 42");
        expect([...(await blobs().getBlockBlobClient("query/ann-ann.bin").downloadToBuffer())]).toEqual([0, 1, 2, 250]);
        expect(JSON.parse((await blobs().getBlockBlobClient("body/acme/p7.json").downloadToBuffer()).toString("utf8"))).toEqual({ customer: "acme", lines: [1, 2] });
    });

    it("fails the invocation without running the function when a path names data the trigger does not have", async () => {
        const before = await runs("blobNeedsMissingName");
        const reply = await call("GET", `${host.url}/api/blobs-missing`);
        expect(reply.status).toBe(500);
        expect(await runs("blobNeedsMissingName")).toBe(before);
    });

    it("feeds a blob input as bytes, and null for a blob that does not exist", async () => {
        await call("POST", `${host.url}/api/blobs/in1?name=x`, { customer: "c" }, { "x-part": "p" });
        expect((await call("GET", `${host.url}/api/blob-in/in1`)).json()).toEqual({ isBuffer: true, text: "text for in1" });
        expect((await call("GET", `${host.url}/api/blob-in/nope`)).json()).toEqual({ isBuffer: false, text: null });
    });
});

describe("table output", () => {
    it("inserts one entity or an array, with Int64 for integers, Double for fractions and nested values as JSON text", async () => {
        expect((await call("POST", `${host.url}/api/entities`, { PartitionKey: "p1", RowKey: "a", size: 3, ratio: 0.5, ok: true, nested: { x: 1 } })).status).toBe(201);
        expect((await call("POST", `${host.url}/api/entities`, [{ partitionKey: "p1", rowKey: "b", size: 1 }, { PartitionKey: "p2", RowKey: "c", size: 5 }])).status).toBe(201);
        const a = await table().getEntity<Record<string, unknown>>("p1", "a", { disableTypeConversion: true });
        expect(a.size).toEqual({ value: "3", type: "Int64" });
        expect(a.ratio).toEqual({ value: "0.5", type: "Double" });
        expect(a.ok).toEqual({ value: "true", type: "Boolean" });
        expect(JSON.parse((a.nested as { value: string }).value)).toEqual({ x: 1 });
        expect((await table().getEntity("p1", "b")).rowKey).toBe("b");
        expect((await table().getEntity("p2", "c")).rowKey).toBe("c");
    });

    it("fails the invocation on an existing row (insert, not upsert) and replaces it when the entity carries ETag '*'", async () => {
        expect((await call("POST", `${host.url}/api/entities`, { PartitionKey: "dup", RowKey: "r", v: 1 })).status).toBe(201);
        expect((await call("POST", `${host.url}/api/entities`, { PartitionKey: "dup", RowKey: "r", v: 2 })).status).toBe(500);
        expect(Number((await table().getEntity<{ v: bigint }>("dup", "r")).v)).toBe(1);
        expect((await call("POST", `${host.url}/api/entities`, { PartitionKey: "dup", RowKey: "r", ETag: "*", v: 3 })).status).toBe(201);
        expect(Number((await table().getEntity<{ v: bigint }>("dup", "r")).v)).toBe(3);
    });

    it("takes keys the value lacks from the binding's expressions, and refuses an entity without a row key", async () => {
        expect((await call("POST", `${host.url}/api/keyed/row9?pk=fromQuery`, { size: 2 })).status).toBe(201);
        expect((await table().getEntity("fromQuery", "row9")).size).toBeDefined();
        expect((await call("POST", `${host.url}/api/keyed/row10?pk=fromQuery`, { RowKey: "own", size: 2 })).status).toBe(201);
        expect((await table().getEntity("fromQuery", "own")).size).toBeDefined();
        expect((await call("POST", `${host.url}/api/entities`, { PartitionKey: "nokey", size: 1 })).status).toBe(500);
    });

    it("feeds a table input: one entity by row key (null when missing), or a partition filtered and limited by take", async () => {
        for (const [rk, size] of [["t1", 1], ["t2", 2], ["t3", 3], ["t4", 4]] as const) {
            await call("POST", `${host.url}/api/entities`, { PartitionKey: "inp", RowKey: rk, size });
        }
        expect((await call("GET", `${host.url}/api/entities/inp/t2`)).json()).toEqual({ entity: { PartitionKey: "inp", RowKey: "t2", size: 2 } });
        expect((await call("GET", `${host.url}/api/entities/inp/none`)).json()).toEqual({ entity: null });
        const partition = (await call("GET", `${host.url}/api/partitions/inp`)).json().entities as { RowKey: string; size: number }[];
        expect(partition.map((e) => e.RowKey)).toEqual(["t2", "t3"]);
    });
});

describe("queue output", () => {
    it("resolves a queue name expression from the query before writing", async () => {
        const name = uniqueName("named");
        expect((await call("POST", `${host.url}/api/to-queue?q=${name.toUpperCase()}`, "payload", { "content-type": "text/plain" })).status).toBe(202);
        const [message] = (await queue(inject("azuriteConnectionString"), name).receiveMessages()).receivedMessageItems;
        expect(fromBase64(message?.messageText ?? "")).toBe("payload");
    });
});

describe("queue trigger data", () => {
    it("makes a JSON message's top-level properties binding data and trigger metadata, as the script host does", async () => {
        const orders = queue(inject("azuriteConnectionString"), ordersQueue);
        await orders.createIfNotExists();
        await orders.sendMessage(Buffer.from(JSON.stringify({ orderId: 77, customer: { name: "ann" } })).toString("base64"));
        const content = await waitFor("the order blob", () => blobs().getBlockBlobClient("orders/77-ann.txt").downloadToBuffer());
        expect(content.toString("utf8")).toBe("order 77");
        expect((await call("GET", `${host.url}/api/seen`)).json().orderMetadata).toEqual({ orderId: 77, dequeueCount: 1 });
    });
});

describe("HTTP trigger data without streaming", () => {
    it("gives request.params the route only, no triggerMetadata, and resolves query, header and body expressions", async () => {
        const reply = await call("POST", `${host.url}/api/data/7?kind=meta&other=1`, { customer: "zed", flag: true }, { "x-row": "r1" });
        expect(reply.status).toBe(200);
        expect(reply.json()).toEqual({ params: { id: "7" }, triggerMetadata: null });
        expect((await table().getEntity<{ seen: string }>("meta", "r1-zed-True")).seen).toBe("yes");
    });
});

describe("binding catalog", () => {
    const settings = new AppSettings({});
    const fn = (name: string, bindings: Record<string, RpcBindingInfo>): CapturedFunction => ({ metadata: { name, bindings }, callback: () => undefined });
    const http = { type: "httpTrigger", direction: "in" as const, methods: ["GET"] };

    // The refusal of unimplemented bindings is in unsupportedBindings.test.ts (it needs a process of its own).
    it("accepts blob and table bindings and reads them into the function's storage bindings", () => {
        const catalog = buildCatalog(
            [
                fn("blobAndTable", {
                    req: http,
                    b: { type: "blob", direction: "out", path: "c/{id}" },
                    t: { type: "table", direction: "in", tableName: "t", partitionKey: "p" },
                    $return: { type: "http", direction: "out" },
                }),
            ],
            settings,
            { onError: () => undefined },
        );
        expect(catalog[0]?.storageBindings.map((b) => `${b.kind}:${b.direction}`)).toEqual(["blob:out", "table:in"]);
    });
});
