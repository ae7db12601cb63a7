import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { freePort, HostProcess } from "@sheetwright/functions-host";
import { afterEach, inject, type TestContext } from "vitest";
import { JobStore } from "../../src/shared/jobs/JobStore";
import { createQueueClient, createTableClient } from "../../src/shared/storage";
import type { RunningSimulator, SimulatorOptions } from "../../tools/smartsheet-sim";
import { appSettingsFor, ownAppSettings } from "../../tools/stack/appSettings";
import { appApi } from "../../tools/stack/clients";
import { startTestSimulator } from "../sim/simTestKit";

const APP_DIR = path.resolve(__dirname, "..", "..");
export const FUNCTION_KEY = "e2e-function-key";

/** The host as a child process: `url`, every output line in `logs`, `start(overrides)` (again, on the same port, with these settings changed), `stop()` (SIGTERM), `kill()` (SIGKILL). */
export type { HostProcess } from "@sheetwright/functions-host";

export interface E2E {
    sim: RunningSimulator;
    settings: Record<string, string>;
    host: HostProcess;
    jobs: JobStore;
    /** The app's HTTP API with the function key. */
    api(pathAndQuery: string, init?: RequestInit): Promise<Response>;
    /** Runs a timer or queue function now, as `POST /admin/functions/{name}`. */
    fire(name: string, input?: string): Promise<void>;
    /** The Durable HTTP API (the DurableClient's routes). */
    durable(pathAndQuery: string, init?: RequestInit): Promise<Response>;
    /** Sends a raw message to the provisioning queue, base64 like the app does. */
    sendRaw(text: string): Promise<void>;
    peekPoison(): Promise<string[]>;
    stop(): Promise<void>;
}

export interface E2EOptions {
    settings?: Record<string, string>;
    simulator?: SimulatorOptions;
    duplicateActivities?: "sequential" | "concurrent";
    /** The app folder the host runs (its package.json's main): the checkout by default, or a deploy package. */
    appDir?: string;
    /** The fast path on: WEBHOOK_BASE_URL is the host itself, the callbacks carry its function key, slots of 1 s. */
    webhooks?: boolean;
}

/** The end-to-end tests' time settings (over host.json's 10-minute functionTimeout); each set of settings passes start-up. */
export const E2E_TIMING = {
    COPY_SETTLE_SECONDS: "1",
    SMARTSHEET_CALL_TIMEOUT_SECONDS: "5",
    // Four slices of the shared budget's 60 s window (the start-up check asks for at least two, 3 s).
    SMARTSHEET_RATE_LIMIT_RETRY_SECONDS: "6",
    LATE_WRITE_HORIZON_SECONDS: "12",
    MAX_CLOCK_SKEW_SECONDS: "1",
    STEP_RETRY_FIRST_SECONDS: "1",
    STEP_RETRY_MAX_SECONDS: "2",
    STEP_RETRY_ATTEMPTS: "3",
};

/**
 * A simulator in this process and the local Functions host running the compiled app as a child
 * process, on the suite's Azurite with its own table, queue and task hub.
 */
export async function startE2E(options: E2EOptions = {}): Promise<E2E> {
    const sim = await startTestSimulator(options.simulator);
    const connection = inject("azuriteConnectionString");
    const sites = sim.core.sites();
    const port = await freePort();
    const webhooks: Record<string, string> = options.webhooks
        ? { WEBHOOK_BASE_URL: `http://127.0.0.1:${port}/`, WEBHOOK_FUNCTION_KEY: FUNCTION_KEY, WEBHOOK_COALESCE_SECONDS: "1" }
        : {};
    const settings = appSettingsFor(
        // Several simulated sites go through SITES; one, through the single-site settings.
        { smartsheetBaseUrl: sim.baseUrl, anchors: sim.core.anchors, storageConnectionString: connection, ...(sites.length > 1 ? { sites } : {}) },
        {
            ...ownAppSettings("e2e", FUNCTION_KEY),
            ...E2E_TIMING,
            AzureFunctionsJobHost__extensions__durableTask__storageProvider__workItemQueueVisibilityTimeout: "00:00:03",
            AzureFunctionsJobHost__extensions__durableTask__storageProvider__controlQueueVisibilityTimeout: "00:00:03",
            AzureFunctionsJobHost__extensions__queues__visibilityTimeout: "00:00:00",
            ...(options.duplicateActivities ? { LOCALHOST_DUPLICATE_ACTIVITIES: options.duplicateActivities } : {}),
            ...webhooks,
            ...options.settings,
        },
    );
    // Every output line is kept: the tests look through a whole run's log.
    const host = new HostProcess({ appDir: options.appDir ?? APP_DIR, port, settings, keptLines: Infinity });
    await host.start();
    const jobs = new JobStore(createTableClient(connection, settings.JOBS_TABLE!));
    const queue = createQueueClient(connection, settings.PROVISION_QUEUE!);
    const poison = createQueueClient(connection, `${settings.PROVISION_QUEUE}-poison`);
    return {
        sim,
        settings,
        host,
        jobs,
        api: appApi(host.url, FUNCTION_KEY),
        fire: (name, input = "") => host.fire(name, input),
        durable: (pathAndQuery, init) => fetch(`${host.url}/runtime/webhooks/durabletask/${pathAndQuery.replace(/^\//, "")}`, init),
        async sendRaw(text) {
            await queue.createIfNotExists();
            await queue.sendMessage(Buffer.from(text, "utf8").toString("base64"));
        },
        async peekPoison() {
            if (!(await poison.exists())) return [];
            const peeked = await poison.peekMessages({ numberOfMessages: 32 });
            return peeked.peekedMessageItems.map((item) => Buffer.from(item.messageText, "base64").toString("utf8"));
        },
        async stop() {
            await host.stop();
            await sim.close();
        },
    };
}

/** Polls until `probe` returns something truthy; fails with `what` and the last value seen. */
export async function waitFor<T>(
    probe: () => Promise<T | undefined | false | null>,
    what: string,
    timeoutMs = 60_000,
    intervalMs = 200,
): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
        const value = await probe();
        if (value) return value;
        if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
        await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
}

/** What a test hands over so that its stack is stopped when it finishes: its context (`async (t) => …`), concurrent tests too. */
export type OwnTest = Pick<TestContext, "onTestFinished">;

const FAILED_LOGS_DIR = path.join(APP_DIR, "test-results", "e2e");
const FAILED_LOG_TAIL = 60;

/**
 * A failed end-to-end test keeps its host's whole log in test-results/e2e/ and prints the end of
 * it, so that a failure seen once (in CI, under load) can be read rather than guessed at.
 */
function keepHostLog(e2e: E2E, testName: string): void {
    const file = path.join(FAILED_LOGS_DIR, `${testName.replace(/[^A-Za-z0-9]+/g, "-").slice(0, 80)}-${Date.now()}.log`);
    mkdirSync(FAILED_LOGS_DIR, { recursive: true });
    writeFileSync(file, e2e.host.logs.join("\n") + "\n");
    console.error(`"${testName}" failed: its host's log (${e2e.host.logs.length} lines) is in ${path.relative(APP_DIR, file)}; the last ${FAILED_LOG_TAIL}:\n${e2e.host.logs.slice(-FAILED_LOG_TAIL).join("\n")}`);
}

/**
 * One stack per test, stopped after it together with whatever else the test deferred. In a
 * `describe.concurrent` block, give `start` and `defer` the test's context: the stop then hangs on
 * that test's own `onTestFinished`, as a shared afterEach cannot tell concurrent tests apart.
 */
export function useE2E<O>(starter: (options?: O) => Promise<E2E>) {
    let current: E2E | undefined;
    const cleanups: Array<() => Promise<void>> = [];
    afterEach(async (context) => {
        if (current && context.task.result?.state === "fail") keepHostLog(current, context.task.name);
        await current?.stop();
        current = undefined;
        for (const cleanup of cleanups.splice(0)) await cleanup();
    });
    return {
        async start(options?: O, test?: OwnTest): Promise<E2E> {
            const started = await starter(options);
            if (test) {
                test.onTestFinished(async (context) => {
                    if (context.task.result?.state === "fail") keepHostLog(started, context.task.name);
                    await started.stop();
                });
            } else current = started;
            return started;
        },
        defer(cleanup: () => Promise<void>, test?: OwnTest): void {
            if (test) test.onTestFinished(cleanup);
            else cleanups.push(cleanup);
        },
    };
}
