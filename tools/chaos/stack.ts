import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import os from "node:os";
import path from "node:path";
import { QueueClient } from "@azure/storage-queue";
import { freePort, restartablePort, startAzurite, type RunningAzurite } from "../azurite/startAzurite";
import { startSimulator, type RunningSimulator } from "../smartsheet-sim";
import { appSettingsFor } from "../stack/appSettings";
import { HarnessError, HostProcess } from "./hostProcess";
import { CALL_TIMEOUT_SECONDS, LATE_WRITE_HORIZON_SECONDS, type Plan } from "./plan";

export const FUNCTION_KEY = "chaos-function-key";
const SIM_TOKEN = "sim-token";
/** Timers are fired by the plan, never by the clock (the reaper has its own fast schedule). */
const NEVER = "0 0 0 1 1 *";
/** A rate limit the schedules do not reach, in the app's shrunk window. */
const CHAOS_RATE_LIMIT = { requests: 3000, windowMs: 15_000 };
/** Compressed time: the same proportions as production, in seconds instead of minutes. */
export const HOST_TIMING = {
    AzureFunctionsJobHost__functionTimeout: "00:00:04",
    SMARTSHEET_CALL_TIMEOUT_SECONDS: String(CALL_TIMEOUT_SECONDS),
    // Longer than functionTimeout + the longest step retry + clock skew (4 + 2 + 0.5 s).
    STALE_AFTER_MINUTES: "0.125",
    REAPER_SCHEDULE: "*/2 * * * * *",
    STEP_RETRY_FIRST_SECONDS: "1",
    STEP_RETRY_MAX_SECONDS: "2",
    STEP_RETRY_ATTEMPTS: "3",
    MAX_RECOVERIES: "2",
    LATE_WRITE_HORIZON_SECONDS: String(LATE_WRITE_HORIZON_SECONDS),
    MAX_CLOCK_SKEW_SECONDS: "0.5",
    SMARTSHEET_REQUESTS_PER_MINUTE: String(CHAOS_RATE_LIMIT.requests),
    // One write (rate-limit waits + call timeout) and its settle must fit in functionTimeout.
    SMARTSHEET_RATE_LIMIT_RETRY_SECONDS: "1.5",
    // Smartsheet's minute shrunk to 15 s (the simulator's too): 1.5 s of rate-limit waits cover two slices of the shared budget.
    SMARTSHEET_RATE_LIMIT_WINDOW_SECONDS: String(CHAOS_RATE_LIMIT.windowMs / 1000),
    AzureFunctionsJobHost__extensions__durableTask__storageProvider__workItemQueueVisibilityTimeout: "00:00:02",
    AzureFunctionsJobHost__extensions__durableTask__storageProvider__controlQueueVisibilityTimeout: "00:00:02",
    AzureFunctionsJobHost__extensions__queues__visibilityTimeout: "00:00:00",
};

/** An alert the app POSTed to its webhook. */
export interface ReceivedAlert {
    event?: unknown;
    jobKey?: unknown;
    parkedAt?: unknown;
}

/** Everything one schedule runs against: its simulator, storage names, host and webhook receiver. */
export class ScheduleStack {
    private constructor(
        readonly sim: RunningSimulator,
        readonly host: HostProcess,
        readonly settings: Record<string, string>,
        readonly alerts: ReceivedAlert[],
        private readonly webhook: Server,
        private azurite: RunningAzurite | undefined,
        private readonly azuriteFolder: string | undefined,
    ) {}

    /**
     * Starts a simulator, a webhook receiver and the host on `sharedStorage`, or — for a plan that
     * restarts Azurite — on an Azurite of its own that keeps its data on disk.
     */
    static async start(plan: Plan, sharedStorage: string): Promise<ScheduleStack> {
        const sim = await startSimulator({ port: 0, rateLimit: CHAOS_RATE_LIMIT });
        const alerts: ReceivedAlert[] = [];
        const webhook = await startWebhook(alerts);
        let azurite: RunningAzurite | undefined;
        let azuriteFolder: string | undefined;
        if (plan.steps.some((step) => step.action.kind === "restartAzurite")) {
            azuriteFolder = await mkdtemp(path.join(os.tmpdir(), "chaos-azurite-"));
            // Restarted on the same ports by `restartAzurite`: none another listener or connection could take meanwhile.
            const tablePort = await restartablePort();
            azurite = await startAzurite({ tablePort, queuePort: await restartablePort(undefined, [tablePort]), persistTo: azuriteFolder });
        }
        const unique = randomBytes(4).toString("hex");
        const settings = appSettingsFor(
            { smartsheetBaseUrl: sim.baseUrl, anchors: sim.core.anchors, storageConnectionString: azurite?.connectionString ?? sharedStorage },
            {
                ...HOST_TIMING,
                FUNCTIONS_HOST_KEY: FUNCTION_KEY,
                JOBS_TABLE: `chaosjobs${unique}`,
                PROVISION_QUEUE: `chaos-provision-${unique}`,
                AzureFunctionsJobHost__extensions__durableTask__hubName: `chaoshub${unique}`,
                INTAKE_SWEEP_SCHEDULE: NEVER,
                INTAKE_FULL_SWEEP_SCHEDULE: NEVER,
                COPY_SETTLE_SECONDS: String(plan.copySettleSeconds),
                ALERT_WEBHOOK_URL: `http://127.0.0.1:${(webhook.address() as { port: number }).port}/alerts`,
                LOCALHOST_DUPLICATE_ACTIVITIES: plan.duplicateActivities,
            },
        );
        const host = new HostProcess(settings, await freePort());
        const stack = new ScheduleStack(sim, host, settings, alerts, webhook, azurite, azuriteFolder);
        try {
            await host.start();
        } catch (error) {
            await stack.stop();
            throw error;
        }
        return stack;
    }

    get storageConnectionString(): string {
        return this.settings.AzureWebJobsStorage!;
    }

    get jobsTable(): string {
        return this.settings.JOBS_TABLE!;
    }

    /** A Smartsheet REST call as a person (or another integration) makes it, with the same token. */
    async smartsheet<T = unknown>(method: string, pathAndQuery: string, body?: unknown): Promise<T> {
        const response = await fetch(new URL(pathAndQuery, this.sim.baseUrl), {
            method,
            headers: { authorization: `Bearer ${SIM_TOKEN}`, "content-type": "application/json" },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        const text = await response.text();
        if (!response.ok) throw new Error(`${method} ${pathAndQuery} answered ${response.status}: ${text}`);
        return JSON.parse(text) as T;
    }

    async simAdmin(method: string, route: string, body?: unknown): Promise<unknown> {
        const response = await fetch(new URL(route, this.sim.adminUrl), {
            method,
            headers: { "content-type": "application/json" },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        if (!response.ok) throw new HarnessError(`${method} /__sim/${route} answered ${response.status}: ${await response.text()}`);
        return response.json();
    }

    /** The app's HTTP API, with the function key. */
    api(pathAndQuery: string, init: RequestInit = {}): Promise<Response> {
        return fetch(`${this.host.url}/api/${pathAndQuery}`, {
            ...init,
            headers: { "x-functions-key": FUNCTION_KEY, "content-type": "application/json", ...(init.headers as Record<string, string> | undefined) },
        });
    }

    /** Sends the key-only provisioning message again, as a queue that delivers twice would. */
    async sendProvisionMessage(rowId: number): Promise<void> {
        const client = new QueueClient(this.storageConnectionString, this.settings.PROVISION_QUEUE!);
        await client.createIfNotExists();
        const message = JSON.stringify({ v: 1, jobKey: { pk: this.settings.INTAKE_SHEET_ID, rk: String(rowId) } });
        await client.sendMessage(Buffer.from(message, "utf8").toString("base64"));
    }

    /** After the plan: a host or Azurite that did not come back is the harness's failure, not the app's. */
    ensureHealthy(): void {
        if (!this.host.running()) throw new HarnessError("the host is down after the plan (a restart failed)");
        if (this.azuriteFolder && !this.azurite) throw new HarnessError("Azurite is down after the plan (a restart failed)");
    }

    /** Stops Azurite for `downMs` and starts it again on the same ports with the same data. */
    async restartAzurite(downMs: number): Promise<void> {
        const running = this.azurite;
        if (!running || !this.azuriteFolder) throw new HarnessError("restartAzurite needs the schedule's own Azurite");
        await running.stop();
        this.azurite = undefined;
        await new Promise((resolve) => setTimeout(resolve, downMs));
        this.azurite = await startAzurite({ tablePort: running.tablePort, queuePort: running.queuePort, persistTo: this.azuriteFolder });
    }

    async stop(): Promise<void> {
        await this.host.stop();
        await this.sim.close();
        await new Promise<void>((resolve) => this.webhook.close(() => resolve()));
        await this.azurite?.stop();
        if (this.azuriteFolder) await rm(this.azuriteFolder, { recursive: true, force: true });
    }
}

function startWebhook(alerts: ReceivedAlert[]): Promise<Server> {
    const server = createServer((request, response) => {
        let body = "";
        request.on("data", (chunk: Buffer) => (body += chunk.toString()));
        request.on("end", () => {
            try {
                alerts.push(JSON.parse(body) as ReceivedAlert);
                response.writeHead(204).end();
            } catch {
                response.writeHead(400).end();
            }
        });
    });
    return new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(0, "127.0.0.1", () => resolve(server));
    });
}
