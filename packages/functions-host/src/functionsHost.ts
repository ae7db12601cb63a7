import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { cpus } from "node:os";
import path from "node:path";
import { AppSettings, mergeAppSettings } from "./config/appSettings";
import { HostConfig } from "./config/hostConfig";
import type { DuplicateActivities } from "./durable/activityWorker";
import { DurableTaskEmulator } from "./durable/durableTaskEmulator";
import { readVersioning } from "./durable/versioning";
import { buildCatalog, type HostFunction, type RegisteredFunctionInfo } from "./functionCatalog";
import { FunctionRunner, type QueueMessageEncoding } from "./functionRunner";
import { AdminError, handleAdminApi, type HostState } from "./http/adminApi";
import { DURABLE_PREFIX, handleDurableApi } from "./http/durableApi";
import { HostKeys, isLoopback } from "./http/hostKeys";
import { HttpTriggerDispatcher } from "./http/httpTrigger";
import { StatusReadFaults } from "./http/statusReadFaults";
import { HttpError, sendEmpty, sendJson, sendText } from "./http/respond";
import { HostLogger, toRpcLogLevel } from "./logger";
import { QueueTriggerListener } from "./triggers/queueTrigger";
import { TimerTriggerScheduler } from "./triggers/timerTrigger";
import { HOST_VERSION, installCoreApi, type FunctionRegistry } from "./worker/coreApi";
import { loadAppEntryPoints, resolveAppEntryPoints } from "./worker/appLoader";
import { Invoker } from "./worker/invoker";

export interface HostOptions {
    /** Folder with the app's package.json; its "main" (a path or a glob like dist/src/functions/*.js) is loaded. */
    appDir: string;
    /** 0 = a free port; default 7071. */
    port?: number;
    /** Default 127.0.0.1. */
    host?: string;
    /** App settings, over process.env and <appDir>/local.settings.json "Values"; written to process.env before the app loads. */
    settings?: Record<string, string>;
    /** Replaces <appDir>/host.json (tests); AzureFunctionsJobHost__a__b settings still apply over it. */
    hostJson?: object;
    /** Longest idle poll interval of the queue pollers (default 1000 ms); polling speeds up to ~25 ms after work. */
    pollIntervalMs?: number;
    /** Test switch (also setting LOCALHOST_DUPLICATE_ACTIVITIES): run every activity work item twice. */
    duplicateActivities?: DuplicateActivities;
    /** Every host and function log line (default: stdout). */
    log?: (line: string) => void;
}

export interface RunningHost {
    url: string;
    masterKey: string;
    functionKey: string;
    functions: RegisteredFunctionInfo[];
    fire(name: string, input?: string): Promise<void>;
    stop(): Promise<void>;
}

const STOP_DRAIN_MS = 10_000;
const MIN_IDLE_POLL_MS = 25;
let startedInThisProcess = false;

/**
 * A local Azure Functions host for Node v4 apps: loads the unchanged app, captures its
 * registrations through `@azure/functions-core`, serves HTTP triggers, runs timers and queue
 * triggers against Azurite, and emulates the Durable Task extension. One per process.
 */
export async function startHost(options: HostOptions): Promise<RunningHost> {
    if (startedInThisProcess) {
        throw new Error(
            "startHost was already called in this process. Only one app can be loaded per process (the @azure/functions module and its registrations are process-wide); " +
                "start another host in a child process instead (functions-host --app <dir> --port <port>).",
        );
    }
    startedInThisProcess = true;
    const host = new FunctionsHost(options);
    try {
        await host.start();
    } catch (error) {
        await host.stop().catch(() => undefined);
        throw error;
    }
    return {
        url: host.url,
        masterKey: host.keys.masterKey,
        functionKey: host.keys.functionKey,
        functions: host.functionInfos(),
        fire: (name, input) => host.fire(name, input),
        stop: () => host.stop(),
    };
}

class FunctionsHost {
    readonly appDir: string;
    readonly settings: AppSettings;
    readonly config: HostConfig;
    readonly keys: HostKeys;
    readonly logger: HostLogger;
    url = "";
    #state: HostState = "Starting";
    #server: Server | undefined;
    #registry: FunctionRegistry | undefined;
    #invoker: Invoker | undefined;
    #functions: HostFunction[] = [];
    #runner: FunctionRunner | undefined;
    #durable: DurableTaskEmulator | undefined;
    #dispatcher: HttpTriggerDispatcher | undefined;
    #timers = new Map<string, TimerTriggerScheduler>();
    #queues: QueueTriggerListener[] = [];
    #streamProxyUri: string | undefined;
    #stopping: Promise<void> | undefined;
    readonly #duplicates: DuplicateActivities;
    readonly #statusReadFaults = new StatusReadFaults();

    constructor(private readonly options: HostOptions) {
        this.appDir = path.resolve(options.appDir);
        const write = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
        const bootLogger = new HostLogger(write);
        const merged = mergeAppSettings(this.appDir, process.env, options.settings ?? {}, (line) => bootLogger.warn(line));
        for (const [key, value] of Object.entries(merged)) process.env[key] = value;
        this.settings = new AppSettings(merged);
        this.config = HostConfig.load(this.appDir, this.settings, options.hostJson);
        this.logger = new HostLogger(write, toRpcLogLevel(this.config.string("logging.logLevel.default"), "information"));
        this.keys = new HostKeys(this.settings);
        const duplicates = options.duplicateActivities ?? this.settings.get("LOCALHOST_DUPLICATE_ACTIVITIES") ?? "off";
        if (duplicates !== "off" && duplicates !== "sequential" && duplicates !== "concurrent") {
            throw new Error(`duplicateActivities must be "off", "sequential" or "concurrent" (got "${duplicates}").`);
        }
        this.#duplicates = duplicates;
    }

    async start(): Promise<void> {
        this.logger.info(`Local Functions host ${HOST_VERSION} starting for app ${this.appDir}`);
        await this.#listen();
        const registry = installCoreApi();
        this.#registry = registry;
        registry.systemLog = (level, _category, message) => {
            if (level === "warning" || level === "error" || level === "critical") this.logger.host(level, `Worker: ${message}`);
        };
        const app = resolveAppEntryPoints(this.appDir);
        this.logger.info(`Loading ${app.files.length} entry point file(s) for "main": "${app.main}"`);
        await loadAppEntryPoints(app, (line) => this.logger.host("debug", line));
        registry.startupFinished = true;
        if (!registry.programmingModel) {
            throw new Error(`The app in ${this.appDir} registered no functions through @azure/functions v4 (no programming model was set). Check that "main" points at the compiled files that call app.http/app.timer/df.app.* .`);
        }
        const capabilities = (await registry.programmingModel.getCapabilities?.({})) ?? {};
        this.#streamProxyUri = capabilities.HttpUri;
        if (this.#streamProxyUri) this.logger.info(`HTTP streaming is enabled; requests go through the worker's proxy at ${this.#streamProxyUri}`);

        const timeZone = this.settings.get("WEBSITE_TIME_ZONE") ?? undefined;
        this.#functions = buildCatalog(registry.functions.values(), this.settings, {
            timeZone,
            onError: (name, error) => this.logger.error(`Function '${name}' could not be loaded and will not run: ${error.message}`),
        });
        for (const fn of this.#functions) {
            if (fn.retry && !fn.timer) {
                this.logger.warn(
                    `Function '${fn.name}' has a retry policy, but the Functions runtime applies retry policies only to timer, Kafka, Event Hubs and ` +
                        `Cosmos DB triggers: a failed ${fn.triggerType} invocation is not retried by it (queue triggers retry through maxDequeueCount).`,
                );
            }
        }
        const functionTimeoutMs = this.config.timeSpan("functionTimeout", 30 * 60_000);
        this.#invoker = new Invoker(registry, this.logger, functionTimeoutMs);
        const encoding = (this.config.string("extensions.queues.messageEncoding") ?? "base64").toLowerCase();
        if (encoding !== "base64" && encoding !== "none") throw new Error(`host.json extensions.queues.messageEncoding must be "base64" or "none" (got "${encoding}").`);
        this.#runner = new FunctionRunner(this.#invoker, this.settings, this.logger, encoding as QueueMessageEncoding, () => this.#durable?.clientBindingData());
        await this.#startDurable(this.#runner);
        this.#dispatcher = new HttpTriggerDispatcher(this.#functions, this.#runner, this.keys, this.logger, () => this.#streamProxyUri);

        await registry.executeHooks("appStart", {
            get hookData() {
                return registry.appLevelOnlyHookData;
            },
            get appHookData() {
                return registry.appHookData;
            },
            functionAppDirectory: this.appDir,
        });
        this.#startTriggers(this.#runner);
        this.#durable?.start();
        this.#state = "Running";
        this.#printBanner(functionTimeoutMs);
    }

    async #listen(): Promise<void> {
        const server = createServer((req, res) => void this.#handle(req, res));
        this.#server = server;
        const hostName = this.options.host ?? "127.0.0.1";
        await new Promise<void>((resolve, reject) => {
            server.once("error", (error: NodeJS.ErrnoException) =>
                reject(error.code === "EADDRINUSE" ? new Error(`Port ${this.options.port ?? 7071} is already in use. Stop the other process or pass --port (HostOptions.port, 0 = any free port).`) : error),
            );
            server.listen(this.options.port ?? 7071, hostName, () => resolve());
        });
        const port = (server.address() as AddressInfo).port;
        const publicHost = hostName === "0.0.0.0" || hostName === "::" ? "127.0.0.1" : hostName;
        this.url = `http://${publicHost}:${port}`;
        // The durable-functions client rewrites webhook origins to localhost:7071 unless this is set.
        process.env.WEBSITE_HOSTNAME = `${publicHost}:${port}`;
    }

    async #startDurable(runner: FunctionRunner): Promise<void> {
        const durableTypes = new Set(["orchestrationtrigger", "activitytrigger", "entitytrigger"]);
        const needsDurable = this.#functions.some((f) => durableTypes.has(f.triggerType.toLowerCase()) || f.durableClientBindings.length > 0);
        if (!needsDurable) return;
        const hubSetting = this.config.string("extensions.durableTask.hubName") ?? "TestHubName";
        const hubName = this.settings.resolve(hubSetting, "host.json extensions.durableTask.hubName");
        const connectionName =
            this.config.string("extensions.durableTask.storageProvider.connectionStringName") ?? this.config.string("extensions.durableTask.storageProvider.connectionName") ?? "AzureWebJobsStorage";
        const account = runner.account(connectionName, "The Durable Task emulator");
        const cores = Math.max(1, cpus().length);
        this.#durable = new DurableTaskEmulator(account, this.#functions, runner, this.logger, {
            hubName,
            connectionName: connectionName === "AzureWebJobsStorage" ? "Storage" : connectionName,
            workItemVisibilityMs: this.config.timeSpan("extensions.durableTask.storageProvider.workItemQueueVisibilityTimeout", 5 * 60_000),
            controlVisibilityMs: this.config.timeSpan("extensions.durableTask.storageProvider.controlQueueVisibilityTimeout", 5 * 60_000),
            maxConcurrentActivities: this.config.number("extensions.durableTask.maxConcurrentActivityFunctions", 10 * cores),
            maxConcurrentOrchestrations: this.config.number("extensions.durableTask.maxConcurrentOrchestratorFunctions", 10 * cores),
            duplicateActivities: this.#duplicates,
            minIdleMs: MIN_IDLE_POLL_MS,
            maxIdleMs: this.options.pollIntervalMs ?? 1000,
            versioning: readVersioning(this.config),
        });
        await this.#durable.prepare(this.url);
    }

    #startTriggers(runner: FunctionRunner): void {
        const queueOptions = {
            batchSize: this.config.number("extensions.queues.batchSize", 16),
            newBatchThreshold: this.config.number("extensions.queues.newBatchThreshold", Math.floor(this.config.number("extensions.queues.batchSize", 16) / 2)),
            maxDequeueCount: this.config.number("extensions.queues.maxDequeueCount", 5),
            visibilityTimeoutMs: this.config.timeSpan("extensions.queues.visibilityTimeout", 0),
            maxPollingIntervalMs: this.options.pollIntervalMs ?? 1000,
        };
        for (const fn of this.#functions) {
            if (fn.timer) {
                const scheduler = new TimerTriggerScheduler(fn, runner, this.logger);
                this.#timers.set(fn.name, scheduler);
                if (!fn.disabled) scheduler.start();
            }
            if (fn.queueTrigger && !fn.disabled) {
                const listener = new QueueTriggerListener(fn, runner, this.logger, queueOptions, MIN_IDLE_POLL_MS);
                this.#queues.push(listener);
                listener.start();
            }
            if (fn.disabled) this.logger.info(`Function '${fn.name}' is disabled (AzureWebJobs.${fn.name}.Disabled).`);
        }
    }

    functionInfos(): RegisteredFunctionInfo[] {
        return this.#functions.map((f) => ({ ...f.info }));
    }

    async fire(name: string, input: string | undefined): Promise<void> {
        if (this.#state !== "Running") throw new AdminError(503, `The host is ${this.#state}.`);
        const fn = this.#functions.find((f) => f.name.toLowerCase() === name.toLowerCase());
        const runner = this.#runner;
        if (!fn || !runner) throw new AdminError(404, `No function named '${name}' is registered.`);
        const type = fn.triggerType.toLowerCase();
        if (type === "httptrigger") throw new AdminError(400, `'${fn.name}' is an HTTP function; call its route instead of the admin API.`);
        if (type === "orchestrationtrigger" || type === "entitytrigger") {
            throw new AdminError(400, `'${fn.name}' is an ${fn.triggerType}; start orchestrations through the Durable HTTP API (POST ${DURABLE_PREFIX}/orchestrators/${fn.name}).`);
        }
        const reason = "This function was programmatically called via the host APIs.";
        let run: Promise<unknown>;
        const timer = this.#timers.get(fn.name);
        if (timer) {
            run = timer.fireNow();
        } else if (type === "queuetrigger") {
            const text = input ?? "";
            run = runner.run(fn, fn.queueTrigger?.dataType === "binary" ? { bytes: Buffer.from(text) } : { string: text }, {
                reason,
                triggerMetadata: { QueueTrigger: { string: text }, DequeueCount: { json: "1" } },
            });
        } else {
            run = runner.run(fn, input === undefined ? undefined : { string: input }, { reason });
        }
        run.catch(() => undefined);
    }

    async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
        let url: URL;
        try {
            url = new URL(req.url ?? "/", `http://${req.headers.host ?? "127.0.0.1"}`);
        } catch {
            return sendText(res, 400, "Bad request URL.");
        }
        try {
            const pathname = url.pathname;
            if (pathname === "/" || pathname === "") return sendText(res, 200, "The local Azure Functions host is running.");
            if (pathname.startsWith("/admin/") || pathname === "/admin") {
                if (!isLoopback(req) && !this.keys.allows("admin", HostKeys.presented(req, url))) return sendEmpty(res, 401);
                return await handleAdminApi(
                    { state: () => this.#state, functions: () => this.functionInfos(), fire: (name, input) => this.fire(name, input), version: HOST_VERSION, statusReadFaults: this.#statusReadFaults },
                    req,
                    res,
                    url,
                );
            }
            if (pathname === DURABLE_PREFIX || pathname.startsWith(`${DURABLE_PREFIX}/`)) {
                const key = HostKeys.presented(req, url);
                if (!isLoopback(req) && !this.keys.allows("admin", key) && key !== this.#durable?.systemKey) return sendEmpty(res, 401);
                if (!this.#durable) return sendJson(res, 404, { message: "This app registers no durable functions, so the Durable Task emulator is not running." });
                if (this.#state !== "Running") return sendText(res, 503, "The Functions host is not running.");
                return await handleDurableApi(this.#durable, req, res, url, this.#statusReadFaults);
            }
            const prefix = this.#routePrefix();
            const routePath = prefix === "" ? pathname : pathname.toLowerCase().startsWith(`/${prefix.toLowerCase()}/`) || pathname.toLowerCase() === `/${prefix.toLowerCase()}` ? pathname.slice(prefix.length + 1) : undefined;
            if (routePath !== undefined) {
                if (this.#state !== "Running") return sendText(res, 503, "The Functions host is not running.");
                if (this.#dispatcher && (await this.#dispatcher.handle(req, res, url, routePath))) return;
            }
            sendEmpty(res, 404);
        } catch (error) {
            if (error instanceof HttpError) return sendText(res, error.statusCode, error.message);
            this.logger.error(`Request ${req.method} ${url.pathname} failed in the host: ${(error as Error).stack ?? String(error)}`);
            if (!res.headersSent) sendEmpty(res, 500);
            else res.destroy();
        }
    }

    #routePrefix(): string {
        const value = this.config.get("extensions.http.routePrefix");
        return (typeof value === "string" ? value : "api").replace(/^\/+|\/+$/g, "");
    }

    #printBanner(functionTimeoutMs: number): void {
        const lines = ["", "Functions:", ""];
        for (const fn of this.#functions) {
            const disabled = fn.disabled ? " (disabled)" : "";
            if (fn.http) {
                const prefix = this.#routePrefix();
                lines.push(`        ${fn.name}: [${fn.http.methods.join(",")}] ${this.url}/${prefix ? `${prefix}/` : ""}${fn.http.route} (authLevel ${fn.http.authLevel})${disabled}`);
            } else {
                const detail = fn.timer ? ` ${fn.timer.schedule.expression}` : fn.queueTrigger ? ` queue '${fn.queueTrigger.queueName}'` : "";
                lines.push(`        ${fn.name}: ${fn.triggerType}${detail}${disabled}`);
            }
        }
        lines.push("");
        lines.push(`Function key (x-functions-key header or ?code=): ${this.keys.functionKey}${this.keys.generated.functionKey ? " (generated; set FUNCTIONS_HOST_KEY to fix it)" : ""}`);
        if (this.keys.generated.masterKey) lines.push(`Master key (generated; set FUNCTIONS_MASTER_KEY to fix it): ${this.keys.masterKey}`);
        if (this.#durable) lines.push(`Durable task hub: ${this.#durable.hubName}; HTTP API ${this.url}${DURABLE_PREFIX}/`);
        lines.push(`functionTimeout: ${functionTimeoutMs < 0 ? "none" : `${functionTimeoutMs} ms`}`);
        lines.push(`Host started: ${this.url}`);
        this.logger.info(lines.join("\n"));
    }

    stop(): Promise<void> {
        this.#stopping ??= this.#stop();
        return this.#stopping;
    }

    async #stop(): Promise<void> {
        const wasRunning = this.#state === "Running";
        this.#state = "Stopping";
        this.logger.info("Stopping the host...");
        const deadline = Date.now() + STOP_DRAIN_MS;
        await Promise.all([...this.#timers.values()].map((t) => t.stop()));
        await Promise.all(this.#queues.map((q) => q.stop(Math.max(0, deadline - Date.now()))));
        await this.#durable?.stop(Math.max(0, deadline - Date.now()));
        await this.#invoker?.drain(Math.max(0, deadline - Date.now()));
        const registry = this.#registry;
        if (wasRunning && registry) {
            try {
                await registry.executeHooks("appTerminate", {
                    get hookData() {
                        return registry.appLevelOnlyHookData;
                    },
                    get appHookData() {
                        return registry.appHookData;
                    },
                });
            } catch (error) {
                this.logger.error(`An appTerminate hook failed: ${(error as Error).message}`);
            }
        }
        const server = this.#server;
        if (server) {
            await new Promise<void>((resolve) => {
                server.close(() => resolve());
                server.closeAllConnections();
            });
        }
        this.#state = "Stopped";
        this.logger.info("Host stopped.");
    }
}
