import { TableClient } from "@azure/data-tables";
import { QueueClient } from "@azure/storage-queue";
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { uniqueName } from "../../helpers/names";

export const APP_DIR = path.resolve(__dirname, "../../host-app");
export const DURABLE = "/runtime/webhooks/durabletask";

export interface Reply {
    status: number;
    headers: Headers;
    text: string;
    json<T = any>(): T;
}

/** The lines a test app has appended to `file`, one per run (none while the file does not exist). */
export function loggedLines(file: string): string[] {
    return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
}

export async function call(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
    const init: RequestInit = { method, headers: { ...headers } };
    if (body !== undefined) {
        init.body = typeof body === "string" ? body : JSON.stringify(body);
        (init.headers as Record<string, string>)["content-type"] ??= "application/json";
    }
    const response = await fetch(url, init);
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) };
}

/** Without an interval, waitFor polls after 20 ms, then twice as long each time, up to this. */
const MAX_POLL_INTERVAL_MS = 160;

/**
 * Polls `probe` until it returns something other than undefined/false: every `intervalMs` when
 * given, else soon at first and then less often (many tests wait at once on one host, and each
 * probe costs the host and Azurite a request).
 */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 15_000, intervalMs?: number): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    let lastError: unknown;
    let waitMs = intervalMs ?? 20;
    while (Date.now() < deadline) {
        try {
            const value = await probe();
            if (value !== undefined && value !== false) return value;
        } catch (error) {
            lastError = error;
        }
        await new Promise((r) => setTimeout(r, waitMs));
        if (intervalMs === undefined) waitMs = Math.min(waitMs * 2, MAX_POLL_INTERVAL_MS);
    }
    throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}${lastError ? ` (last error: ${(lastError as Error).message})` : ""}`);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** App settings the conformance app reads, with names no other test file uses. */
export function conformanceSettings(connectionString: string, extra: Record<string, string> = {}): Record<string, string> {
    return {
        AzureWebJobsStorage: connectionString,
        HOSTAPP_HUB: uniqueName("hub"),
        HOSTAPP_QUEUE: uniqueName("work"),
        HOSTAPP_QUEUE_OUT: uniqueName("echo"),
        HOSTAPP_START_QUEUE: uniqueName("start"),
        HOSTAPP_TICK_SCHEDULE: "*/1 * * * * *",
        HOSTAPP_TIMER_INSTANCE: uniqueName("timer"),
        "AzureWebJobs.tick.Disabled": "true",
        "AzureWebJobs.disabledTimer.Disabled": "true",
        ...extra,
    };
}

/** The Durable HTTP API of a running host. */
export function durableApi(baseUrl: string) {
    return {
        start: (name: string, id?: string, input?: unknown) => call("POST", `${baseUrl}${DURABLE}/orchestrators/${name}${id ? `/${encodeURIComponent(id)}` : ""}`, input === undefined ? "" : JSON.stringify(input)),
        status: (id: string, query = "") => call("GET", `${baseUrl}${DURABLE}/instances/${encodeURIComponent(id)}${query}`),
        raise: (id: string, event: string, data: unknown) => call("POST", `${baseUrl}${DURABLE}/instances/${encodeURIComponent(id)}/raiseEvent/${event}`, JSON.stringify(data)),
        op: (id: string, op: "terminate" | "suspend" | "resume" | "rewind", reason = "test") => call("POST", `${baseUrl}${DURABLE}/instances/${encodeURIComponent(id)}/${op}?reason=${encodeURIComponent(reason)}`),
        purge: (id: string) => call("DELETE", `${baseUrl}${DURABLE}/instances/${encodeURIComponent(id)}`),
        list: (query: string, token?: string) => call("GET", `${baseUrl}${DURABLE}/instances/${query}`, undefined, token ? { "x-ms-continuation-token": token } : {}),
        /** Waits until the instance reaches one of `statuses`; returns its status JSON. */
        async until(id: string, statuses: string[], timeoutMs = 20_000, query = ""): Promise<any> {
            return waitFor(
                `instance ${id} to be ${statuses.join("/")}`,
                async () => {
                    const reply = await call("GET", `${baseUrl}${DURABLE}/instances/${encodeURIComponent(id)}${query}`);
                    if (reply.status !== 200 && reply.status !== 202) return undefined;
                    const body = reply.json();
                    return statuses.includes(body.runtimeStatus) ? body : undefined;
                },
                timeoutMs,
            );
        },
    };
}

export function queue(connectionString: string, name: string): QueueClient {
    return new QueueClient(connectionString, name);
}

export function base64(text: string): string {
    return Buffer.from(text, "utf8").toString("base64");
}

export function fromBase64(text: string): string {
    return Buffer.from(text, "base64").toString("utf8");
}

export interface HistoryRow {
    EventType: string;
    EventId: number;
    TaskScheduledId?: number;
    TimerId?: number;
    FireAt?: Date;
    _Timestamp: Date;
    Name?: string;
    Reason?: string;
    Result?: string;
    rowKey: string;
}

/** The instance's rows of `<hub>History` (sentinel excluded), in sequence order. */
export async function historyRows(connectionString: string, hub: string, instanceId: string): Promise<HistoryRow[]> {
    const table = TableClient.fromConnectionString(connectionString, `${hub}History`, { allowInsecureConnection: true });
    const rows: HistoryRow[] = [];
    for await (const row of table.listEntities<HistoryRow>({ queryOptions: { filter: `PartitionKey eq '${instanceId.replace(/'/g, "''")}'` } })) {
        if (row.rowKey !== "sentinel") rows.push(row as unknown as HistoryRow);
    }
    return rows.sort((a, b) => a.rowKey.localeCompare(b.rowKey));
}

export async function probe(baseUrl: string): Promise<any> {
    return (await call("GET", `${baseUrl}/api/probe`)).json();
}

/** Host log sink for tests: silent, unless HOST_TEST_LOG_DIR is set (then one file per test file). */
export function testLog(name: string): (line: string) => void {
    const dir = process.env.HOST_TEST_LOG_DIR;
    if (!dir) return () => {};
    const file = path.join(dir, `${name}.log`);
    return (line) => appendFileSync(file, `${line}\n`);
}
