import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import os from "node:os";
import path from "node:path";
import { QueueClient } from "@azure/storage-queue";
import { restartablePort, startAzurite, type RunningAzurite } from "@sheetwright/functions-host";
import { startSimulator, type RunningSimulator } from "../smartsheet-sim";
import { appSettingsFor, ownAppSettings } from "../stack/appSettings";
import { appApi, smartsheetAs } from "../stack/clients";
import { HarnessError, HostProcess } from "./hostProcess";
import { CALL_TIMEOUT_SECONDS, LATE_WRITE_HORIZON_SECONDS, type Plan } from "./plan";

export const FUNCTION_KEY = "chaos-function-key";
const SIM_TOKEN = "sim-token";
/** People's own edits come with a token of their own: the app's token's calls are the app's alone. */
const PEOPLE_TOKEN = "chaos-people-token";
/** A rate limit the schedules do not reach, in the app's shrunk window. */
const CHAOS_RATE_LIMIT = { requests: 3000, windowMs: 15_000 };
/** A rate limit a schedule reaches (a few products make about this many calls), so the app's shared budget must keep under it. */
const TIGHT_RATE_LIMIT = { requests: 150, windowMs: 15_000 };
const WEBHOOK_KEEPER_OPERATIONS = ["listWebhooks", "getWebhook", "createWebhook", "updateWebhook", "deleteWebhook", "resetSharedSecret"] as const;
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

/** What the webhook does with an alert: take it (204), answer 503, or accept the connection and never answer. */
type WebhookMode = "answer" | "hang" | "error5xx";

/** The alert receiver: `alerts` holds only the alerts it took (answered 204); the others were refused or left hanging. */
export class AlertWebhook {
    readonly alerts: ReceivedAlert[] = [];
    /** Every POST it got, taken or not. */
    attempts = 0;
    private mode: WebhookMode = "answer";
    private modeUntil = 0;

    private constructor(private readonly server: Server) {}

    static start(): Promise<AlertWebhook> {
        let webhook: AlertWebhook | undefined;
        const server = createServer((request, response) => webhook!.receive(request, response));
        webhook = new AlertWebhook(server);
        return new Promise((resolve, reject) => {
            server.once("error", reject);
            server.listen(0, "127.0.0.1", () => resolve(webhook!));
        });
    }

    get url(): string {
        return `http://127.0.0.1:${(this.server.address() as { port: number }).port}/alerts`;
    }

    /** Misbehaves as `mode` for `forMs`, then answers again. */
    misbehave(mode: Exclude<WebhookMode, "answer">, forMs: number): void {
        this.mode = mode;
        this.modeUntil = Date.now() + forMs;
    }

    heal(): void {
        this.mode = "answer";
    }

    close(): Promise<void> {
        this.server.closeAllConnections();
        return new Promise<void>((resolve) => this.server.close(() => resolve()));
    }

    private receive(request: IncomingMessage, response: ServerResponse): void {
        this.attempts += 1;
        const mode = Date.now() < this.modeUntil ? this.mode : "answer";
        if (mode === "hang") return;
        let body = "";
        request.on("data", (chunk: Buffer) => (body += chunk.toString()));
        request.on("end", () => {
            if (mode === "error5xx") return void response.writeHead(503).end("chaos: the webhook is failing");
            try {
                this.alerts.push(JSON.parse(body) as ReceivedAlert);
                response.writeHead(204).end();
            } catch {
                response.writeHead(400).end();
            }
        });
    }
}

/** Everything one schedule runs against: its simulator, storage names, host and webhook receiver. */
export class ScheduleStack {
    /** A Smartsheet REST call as a person (or another integration) makes it, with a token of its own. */
    readonly smartsheet: ReturnType<typeof smartsheetAs>;
    /** The app's HTTP API, with the function key. */
    readonly api: ReturnType<typeof appApi>;

    private constructor(
        readonly sim: RunningSimulator,
        readonly host: HostProcess,
        /** The second host on the same task hub, when the plan has one (its clock offset by the plan). */
        readonly peer: HostProcess | undefined,
        readonly settings: Record<string, string>,
        readonly webhook: AlertWebhook,
        readonly rateLimit: { requests: number; windowMs: number },
        private azurite: RunningAzurite | undefined,
        private readonly azuriteFolder: string | undefined,
    ) {
        this.smartsheet = smartsheetAs(sim.baseUrl, PEOPLE_TOKEN);
        this.api = appApi(host.url, FUNCTION_KEY, { "content-type": "application/json" });
    }

    /**
     * Starts a simulator, a webhook receiver and the host on `sharedStorage`, or — for a plan that
     * restarts Azurite — on an Azurite of its own that keeps its data on disk.
     */
    static async start(plan: Plan, sharedStorage: string): Promise<ScheduleStack> {
        const rateLimit = plan.budget === "tight" ? TIGHT_RATE_LIMIT : CHAOS_RATE_LIMIT;
        const sim = await startSimulator({ port: 0, rateLimit, tokens: [SIM_TOKEN, PEOPLE_TOKEN], ...(plan.webhooks ? { webhooks: webhookTiming(plan.webhooks.debounceMs) } : {}) });
        const webhook = await AlertWebhook.start();
        let azurite: RunningAzurite | undefined;
        let azuriteFolder: string | undefined;
        if ([...plan.steps, ...(plan.convergence?.steps ?? [])].some((step) => step.action.kind === "restartAzurite")) {
            azuriteFolder = await mkdtemp(path.join(os.tmpdir(), "chaos-azurite-"));
            // Restarted on the same ports by `restartAzurite`: none another listener or connection could take meanwhile.
            const tablePort = await restartablePort();
            azurite = await startAzurite({ tablePort, queuePort: await restartablePort(undefined, [tablePort]), persistTo: azuriteFolder });
        }
        const [hostPort, peerPort] = await hostPorts();
        // Timers are fired by the plan, never by the clock; the reaper has its own fast schedule (HOST_TIMING).
        const settings = appSettingsFor(
            { smartsheetBaseUrl: sim.baseUrl, anchors: sim.core.anchors, storageConnectionString: azurite?.connectionString ?? sharedStorage },
            {
                ...ownAppSettings("chaos", FUNCTION_KEY),
                ...HOST_TIMING,
                COPY_SETTLE_SECONDS: String(plan.copySettleSeconds),
                SMARTSHEET_REQUESTS_PER_MINUTE: String(rateLimit.requests),
                ALERT_WEBHOOK_URL: webhook.url,
                LOCALHOST_DUPLICATE_ACTIVITIES: plan.duplicateActivities,
                // Both hosts keep the webhook (one, by its name); Smartsheet calls the first back.
                ...(plan.webhooks ? { WEBHOOK_BASE_URL: `http://127.0.0.1:${hostPort}/`, WEBHOOK_FUNCTION_KEY: FUNCTION_KEY, WEBHOOK_COALESCE_SECONDS: "1" } : {}),
            },
        );
        const host = new HostProcess(settings, hostPort);
        const peer = plan.peer ? new HostProcess(settings, peerPort, plan.peer.clockOffsetMs) : undefined;
        const stack = new ScheduleStack(sim, host, peer, settings, webhook, rateLimit, azurite, azuriteFolder);
        try {
            await Promise.all([host.start(), peer?.start()]);
        } catch (error) {
            await stack.stop();
            throw error;
        }
        return stack;
    }

    get hosts(): HostProcess[] {
        return this.peer ? [this.host, this.peer] : [this.host];
    }

    get alerts(): readonly ReceivedAlert[] {
        return this.webhook.alerts;
    }

    get storageConnectionString(): string {
        return this.settings.AzureWebJobsStorage!;
    }

    get jobsTable(): string {
        return this.settings.JOBS_TABLE!;
    }

    /** The key the app's HTTP functions (the webhook receiver among them) want. */
    get functionKey(): string {
        return FUNCTION_KEY;
    }

    /** The token the app calls Smartsheet with (its rate limit is the one the app's budget keeps). */
    get appToken(): string {
        return SIM_TOKEN;
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

    /**
     * Smartsheet calls so far, but for the webhook keeper's: it runs after every reaper run (every
     * 2 s here), so only the other calls stop when the work does.
     */
    async workCalls(): Promise<number> {
        const { total, byOperation } = (await this.simAdmin("GET", "calls")) as { total: number; byOperation: Record<string, number | undefined> };
        return total - WEBHOOK_KEEPER_OPERATIONS.reduce((sum, op) => sum + (byOperation[op] ?? 0), 0);
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
        if (this.peer && !this.peer.running()) throw new HarnessError("the second host exited during the plan");
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
        await Promise.all([this.host.stop(), this.peer?.stop()]);
        await this.sim.close();
        await this.webhook.close();
        await this.azurite?.stop();
        if (this.azuriteFolder) await rm(this.azuriteFolder, { recursive: true, force: true });
    }
}

/**
 * Smartsheet's webhook delivery in the harness's compressed time: its minute of debounce in well
 * under a second, and retries that give up (DISABLED_CALLBACK_FAILED) within a few seconds of a
 * host that stays down, so the keeper's re-enabling is exercised too.
 */
function webhookTiming(debounceMs: number) {
    return { debounceMs, retryBaseMs: 250, retryLongMs: 1_000, maxRetries: 4, callbackTimeoutMs: 2_000 };
}

/**
 * Ports for the schedule's host and its peer. A killed host comes back on its port, and even its
 * first start follows the pick by a moment: a port from the OS's ephemeral range (what `freePort`
 * gets) can meanwhile be given to an outgoing connection of another schedule run beside it.
 */
export async function hostPorts(): Promise<[number, number]> {
    const host = await restartablePort();
    return [host, await restartablePort(undefined, [host])];
}
