import { readFile } from "node:fs/promises";
import { ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import path from "node:path";

/** The well-known development account every Azurite accepts. */
export const DEV_ACCOUNT = "devstoreaccount1";
export const DEV_KEY =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

export interface AzuriteOptions {
    /** 0 picks a free port. Defaults: 10002 tables, 10001 queues (Azurite's own). */
    tablePort?: number;
    queuePort?: number;
    host?: string;
    /** Print Azurite's access log. */
    verbose?: boolean;
    /** Keep the data in this folder instead of in memory, so a restarted Azurite still has it. */
    persistTo?: string;
}

export interface RunningAzurite {
    tablePort: number;
    queuePort: number;
    tableUrl: string;
    queueUrl: string;
    /** A full connection string for `AzureWebJobsStorage` and the Azure SDK clients. */
    connectionString: string;
    stop(): Promise<void>;
}

/**
 * Starts Azurite's Table and Queue services as child processes, in memory (or in `persistTo`), with
 * `--skipApiVersionCheck` (current SDKs send API versions Azurite does not know yet).
 */
export async function startAzurite(options: AzuriteOptions = {}): Promise<RunningAzurite> {
    const host = options.host ?? "127.0.0.1";
    const tablePort = options.tablePort === 0 ? await freePort(host) : (options.tablePort ?? 10002);
    const queuePort = options.queuePort === 0 ? await freePort(host) : (options.queuePort ?? 10001);
    const persistence = options.persistTo ? ["--location", options.persistTo] : ["--inMemoryPersistence"];
    const common = [...persistence, "--loose", "--skipApiVersionCheck", "--disableTelemetry"];
    if (!options.verbose) common.push("--silent");

    const table = await launch("table", [...common, "--tableHost", host, "--tablePort", String(tablePort)], /successfully/);
    let queue: ChildProcess;
    try {
        queue = await launch("queue", [...common, "--queueHost", host, "--queuePort", String(queuePort)], /successfully/);
    } catch (error) {
        table.kill();
        throw error;
    }

    const tableUrl = `http://${host}:${tablePort}/${DEV_ACCOUNT}`;
    const queueUrl = `http://${host}:${queuePort}/${DEV_ACCOUNT}`;
    return {
        tablePort,
        queuePort,
        tableUrl,
        queueUrl,
        connectionString: azuriteConnectionString(host, tablePort, queuePort),
        async stop() {
            // Only SIGINT makes Azurite save its data before it exits; in memory there is nothing to save.
            const persisted = options.persistTo !== undefined;
            await Promise.all([stopChild(table, persisted), stopChild(queue, persisted)]);
        },
    };
}

export function azuriteConnectionString(host: string, tablePort: number, queuePort: number): string {
    return [
        "DefaultEndpointsProtocol=http",
        `AccountName=${DEV_ACCOUNT}`,
        `AccountKey=${DEV_KEY}`,
        `TableEndpoint=http://${host}:${tablePort}/${DEV_ACCOUNT}`,
        `QueueEndpoint=http://${host}:${queuePort}/${DEV_ACCOUNT}`,
    ].join(";");
}

function launch(service: "table" | "queue", args: string[], ready: RegExp): Promise<ChildProcess> {
    const main = path.join(path.dirname(require.resolve("azurite/package.json")), "dist", "src", service, "main.js");
    const child = spawn(process.execPath, [main, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    return new Promise((resolve, reject) => {
        let output = "";
        const timer = setTimeout(() => {
            child.kill();
            reject(new Error(`Azurite ${service} did not start within 20 s. Output:\n${output}`));
        }, 20_000);
        const onData = (chunk: Buffer) => {
            output += chunk.toString();
            if (ready.test(output)) {
                clearTimeout(timer);
                child.stdout?.off("data", onData);
                child.stdout?.resume();
                child.stderr?.resume();
                resolve(child);
            }
        };
        child.stdout?.on("data", onData);
        child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
        child.once("exit", (code) => {
            clearTimeout(timer);
            reject(new Error(`Azurite ${service} exited with code ${code} before it was ready. Output:\n${output}`));
        });
    });
}

function stopChild(child: ChildProcess, saveFirst: boolean): Promise<void> {
    if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
        const force = setTimeout(() => child.kill("SIGKILL"), saveFirst ? 15_000 : 3_000);
        child.once("exit", () => {
            clearTimeout(force);
            resolve();
        });
        child.kill(saveFirst ? "SIGINT" : "SIGTERM");
    });
}

/** Asks the OS for a free TCP port on `host`. */
export function freePort(host = "127.0.0.1"): Promise<number> {
    return new Promise((resolve, reject) => {
        const server = createServer();
        server.unref();
        server.once("error", reject);
        server.listen(0, host, () => {
            const address = server.address();
            const port = typeof address === "object" && address ? address.port : 0;
            server.close(() => resolve(port));
        });
    });
}

/**
 * A free TCP port below the OS's ephemeral range, for a server that must come back on the same
 * port after a restart: a port from that range (what `freePort` gets) can be handed to another
 * port-0 listener, or to an outgoing connection, while the server is down.
 */
export async function restartablePort(host = "127.0.0.1", except: readonly number[] = []): Promise<number> {
    const ephemeralFrom = await readFile("/proc/sys/net/ipv4/ip_local_port_range", "utf8").then(
        (text) => Number(text.trim().split(/\s+/)[0]) || 32768,
        () => 32768,
    );
    const from = Math.min(15_000, ephemeralFrom - 1_000);
    for (let attempt = 0; attempt < 100; attempt++) {
        const port = from + Math.floor(Math.random() * (ephemeralFrom - from));
        if (!except.includes(port) && (await canListen(host, port))) return port;
    }
    throw new Error(`No free port between ${from} and ${ephemeralFrom} on ${host}.`);
}

function canListen(host: string, port: number): Promise<boolean> {
    return new Promise((resolve) => {
        const server = createServer();
        server.unref();
        server.once("error", () => resolve(false));
        server.listen(port, host, () => server.close(() => resolve(true)));
    });
}
