import { randomUUID } from "node:crypto";
import type { InvocationContext } from "@azure/functions";
import type * as df from "durable-functions";
import { loadConfig, timingOf, type Config } from "./config";
import type { ConvergeApiDeps, JobsApiDeps } from "./recovery/jobsApi";
import { sitesFrom, type Sites } from "./sites/Sites";
import { functionTimeoutMs } from "./hostTimeout";
import { IntakeCursorStore } from "./intake/IntakeCursorStore";
import { WebhookHealth } from "./intake/WebhookHealth";
import type { SweepDeps } from "./intake/intakeSweep";
import { JobStore } from "./jobs/JobStore";
import { provisionMessage } from "./jobs/ProvisionMessage";
import type { StarterDeps } from "./orchestration/startJob";
import { orchestrationsOver } from "./orchestration/Orchestrations";
import { BlueprintStore } from "./provisioning/BlueprintStore";
import { SharedListings } from "./provisioning/SharedListings";
import type { Logger } from "./logger";
import type { ProvisioningDeps } from "./provisioning/ProvisioningDeps";
import type { RecoveryDeps } from "./recovery/reconcile";
import { BudgetTable } from "./smartsheet/BudgetTable";
import { RateLimiter, systemClock } from "./smartsheet/RateLimiter";
import { SdkSmartsheet } from "./smartsheet/SdkSmartsheet";
import { SharedTokenBudget } from "./smartsheet/SharedTokenBudget";
import { queueClientFor, storageAccessOf, tableClientFor } from "./storage";
import { logLine } from "./text/logText";
import type { TableClient } from "@azure/data-tables";
import { WebhookAlertChannel, type AlertChannel } from "./alerts/AlertChannel";
import { alertRetryPolicy } from "./alerts/delivery";
import { SiteOutages } from "./alerts/SiteOutages";
import type { QueueClient } from "@azure/storage-queue";
import { startTelemetry, telemetryPlanOf, type RunningTelemetry } from "./telemetry/startTelemetry";
import { RefusalTally, type ReceiverDeps } from "./webhooks/receiveCallback";
import { SweepRequests } from "./webhooks/SweepRequests";
import { WebhookDirectory } from "./webhooks/WebhookDirectory";
import { WebhookCreations } from "./webhooks/WebhookCreations";
import type { KeeperDeps } from "./webhooks/keepWebhooks";

/** Long-lived clients, built once per process from the validated configuration. */
interface Shared {
    config: Config;
    jobs: JobStore;
    blueprints: BlueprintStore;
    cursors: IntakeCursorStore;
    sites: Sites;
    listings: SharedListings;
    alerts?: AlertChannel;
    telemetry: RunningTelemetry;
    siteOutages: SiteOutages;
    queue: QueueClient;
    poisonQueue: QueueClient;
    reconcileQueue: QueueClient;
    sweepRequestQueue: QueueClient;
    /** The app's webhooks and their secrets, in memory only. */
    webhooks: WebhookDirectory;
    sweepRequests: SweepRequests;
    webhookRefusals: RefusalTally;
    webhookCreations: WebhookCreations;
    webhookHealth: WebhookHealth;
    /** Creates the table and queues if missing; started on first use, retried after a failure. */
    ready?: Promise<void>;
    table: TableClient;
}

let shared: Shared | undefined;

/** The configuration, validated once; a bad setting throws a `ConfigError` naming every problem. */
export function appConfig(): Config {
    return (shared ??= build(loadConfig(process.env, { functionTimeoutMs: functionTimeoutMs() }), process.env)).config;
}

/** Sends the telemetry still buffered (the app's terminate hook). */
export async function shutdownTelemetry(): Promise<void> {
    await shared?.telemetry.shutdown();
}

function build(config: Config, env: NodeJS.ProcessEnv): Shared {
    // First, so that every record of this process goes to the exporter; a bad telemetry setting stops the app here, saying what to set.
    const telemetry = startTelemetry(
        telemetryPlanOf({
            TELEMETRY_EXPORTER: config.TELEMETRY_EXPORTER,
            APPLICATIONINSIGHTS_CONNECTION_STRING: env.APPLICATIONINSIGHTS_CONNECTION_STRING,
            APPLICATIONINSIGHTS_AUTHENTICATION_STRING: env.APPLICATIONINSIGHTS_AUTHENTICATION_STRING,
        }),
    );
    const storage = storageAccessOf(config);
    const table = tableClientFor(storage, config.JOBS_TABLE);
    const queue = queueClientFor(storage, config.PROVISION_QUEUE);
    const poisonQueue = queueClientFor(storage, `${config.PROVISION_QUEUE}-poison`);
    const reconcileQueue = queueClientFor(storage, reconcileQueueName(config));
    const sweepRequestQueue = queueClientFor(storage, sweepRequestQueueName(config));
    const windowMs = config.SMARTSHEET_RATE_LIMIT_WINDOW_SECONDS * 1000;
    // The budget retries on its own terms (ETag conflicts) and falls back rather than wait on storage: no SDK retries.
    const budgetRows = new BudgetTable(tableClientFor(storage, config.JOBS_TABLE, { retryOptions: { maxRetries: 0 } }));
    // One client per token (the Sites registry calls this once per token), each paced by this process and by the
    // token's budget shared with every other instance of the app.
    const clientFor = (accessToken: string, tokenSetting: string) => {
        const budget = new SharedTokenBudget({
            accessToken,
            limit: config.SMARTSHEET_REQUESTS_PER_MINUTE,
            windowMs,
            leaseSize: config.SMARTSHEET_BUDGET_LEASE_SIZE,
            fallbackInstances: config.SMARTSHEET_BUDGET_FALLBACK_INSTANCES,
            rows: budgetRows,
            clock: systemClock,
            // Its lines (the share taken each window, storage falling away and coming back) go out with the next invocation's log.
            log: logFromApp,
            telemetry: telemetry.telemetry,
            tokenSetting,
        });
        return new SdkSmartsheet({
            accessToken,
            baseUrl: config.SMARTSHEET_BASE_URL,
            limiter: new RateLimiter(config.SMARTSHEET_REQUESTS_PER_MINUTE, windowMs, systemClock, budget),
            callTimeoutMs: config.SMARTSHEET_CALL_TIMEOUT_SECONDS * 1000,
            rateLimitBackoff: { baseMs: 2_000, maxMs: 60_000, maxTotalMs: config.SMARTSHEET_RATE_LIMIT_RETRY_SECONDS * 1000 },
            telemetry: telemetry.telemetry,
            tokenSetting,
        });
    };
    const sites = sitesFrom(config.sites, clientFor);
    return {
        config,
        jobs: new JobStore(table),
        blueprints: new BlueprintStore(table),
        cursors: new IntakeCursorStore(table),
        sites,
        listings: new SharedListings(() => Date.now()),
        alerts: config.ALERT_WEBHOOK_URL
            ? new WebhookAlertChannel(config.ALERT_WEBHOOK_URL, { format: config.ALERT_WEBHOOK_FORMAT, signingSecret: config.ALERT_WEBHOOK_SIGNING_SECRET, appHost: config.appHost })
            : undefined,
        siteOutages: new SiteOutages(table, alertRetryPolicy(config.STALE_AFTER_MINUTES)),
        telemetry,
        queue,
        poisonQueue,
        reconcileQueue,
        sweepRequestQueue,
        webhooks: new WebhookDirectory(sites.all(), () => Date.now()),
        sweepRequests: new SweepRequests(
            table,
            { send: async (message, delaySeconds) => void (await sweepRequestQueue.sendMessage(base64(JSON.stringify(message)), { visibilityTimeout: delaySeconds })) },
            config.WEBHOOK_COALESCE_SECONDS * 1000,
            () => Date.now(),
        ),
        webhookRefusals: new RefusalTally(() => Date.now()),
        webhookCreations: new WebhookCreations(table),
        webhookHealth: new WebhookHealth(table),
        table,
    };
}

/** Creates the table and queues the app needs if they are missing (idempotent). */
async function ensureStorage(): Promise<void> {
    appConfig();
    const state = shared!;
    state.ready ??= Promise.all([
        state.table.createTable(),
        state.queue.createIfNotExists(),
        state.poisonQueue.createIfNotExists(),
        state.reconcileQueue.createIfNotExists(),
        state.sweepRequestQueue.createIfNotExists(),
    ]).then(
        () => undefined,
        (error: unknown) => {
            state.ready = undefined;
            throw error;
        },
    );
    await state.ready;
}

/** What the jobs API reads: the Jobs table and the sites. */
export async function jobsApiDeps(): Promise<JobsApiDeps> {
    await ensureStorage();
    return { jobs: shared!.jobs, sites: shared!.sites, webhookHealth: shared!.webhookHealth };
}

/** What the convergence routes read: the jobs API's, the stored blueprints, and the sites' Smartsheet clients (each token's shared budget). */
export async function convergeApiDeps(context: InvocationContext): Promise<ConvergeApiDeps> {
    const deps = await provisioningDeps(context);
    return { ...deps, webhookHealth: shared!.webhookHealth };
}

type Level = keyof Logger;
/** Lines written outside any invocation (the app start-up hook), waiting for one to carry them. */
const appLines: Array<{ level: Level; message: string }> = [];

/**
 * Logs from app-level code, which has no invocation: the line is written by the next invocation's
 * logger, so that it reaches Application Insights like every other line of the app.
 */
export function logFromApp(level: Level, message: string): void {
    appLines.push({ level, message });
}

/** The invocation's log, one line per message: nothing a customer or caller typed can forge a line. */
export function loggerFor(context: InvocationContext): Logger {
    for (const { level, message } of appLines.splice(0)) context[level](logLine(message));
    return {
        info: (message) => context.info(logLine(message)),
        warn: (message) => context.warn(logLine(message)),
        error: (message) => context.error(logLine(message)),
    };
}

export async function provisioningDeps(context: InvocationContext): Promise<ProvisioningDeps> {
    await ensureStorage();
    const { config, jobs, blueprints, sites, listings, alerts, telemetry, siteOutages } = shared!;
    return {
        config,
        sites,
        jobs,
        blueprints,
        alerts,
        telemetry: telemetry.telemetry,
        siteOutages,
        listings,
        log: loggerFor(context),
        now: () => new Date(),
        sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
        newRunId: () => randomUUID(),
        timing: { ...timingOf(config), claimPollMs: 1000 },
    };
}

const base64 = (text: string) => Buffer.from(text, "utf8").toString("base64");

export async function sweepDeps(context: InvocationContext, client: df.DurableClient): Promise<SweepDeps> {
    const deps = await provisioningDeps(context);
    return {
        ...deps,
        orchestrations: orchestrationsOver(client),
        cursors: shared!.cursors,
        webhookHealth: shared!.webhookHealth,
        // The Functions queue trigger decodes base64 by default (messageEncoding).
        enqueue: async (key) => void (await shared!.queue.sendMessage(base64(provisionMessage(key)))),
    };
}

export async function recoveryDeps(context: InvocationContext, client: df.DurableClient): Promise<RecoveryDeps> {
    return { ...(await provisioningDeps(context)), orchestrations: orchestrationsOver(client) };
}

/** The queue a webhook callback asks for a site's sweep on. */
export function sweepRequestQueueName(config: Config): string {
    return `${config.PROVISION_QUEUE}-sweep`;
}

/** What the webhook receiver needs: the app's webhooks, the coalesced sweep requests, the refusal tally. */
export async function receiverDeps(context: InvocationContext): Promise<ReceiverDeps> {
    await ensureStorage();
    return { directory: shared!.webhooks, sweeps: shared!.sweepRequests, refusals: shared!.webhookRefusals, log: loggerFor(context), telemetry: shared!.telemetry.telemetry };
}

/** What the webhook keeper needs: the recovery's bookkeeping, and the webhooks' directory, claims and key. */
export async function keeperDeps(context: InvocationContext): Promise<KeeperDeps> {
    const deps = await provisioningDeps(context);
    return {
        ...deps,
        directory: shared!.webhooks,
        sweeps: shared!.sweepRequests,
        creations: shared!.webhookCreations,
        health: shared!.webhookHealth,
        ...(deps.config.WEBHOOK_FUNCTION_KEY ? { functionKey: deps.config.WEBHOOK_FUNCTION_KEY } : {}),
    };
}

/** The queue the app start-up hook asks for a reconciliation on (hooks get no DurableClient). */
export function reconcileQueueName(config: Config): string {
    return `${config.PROVISION_QUEUE}-reconcile`;
}

export async function requestReconciliation(occasion: string): Promise<void> {
    await ensureStorage();
    await shared!.reconcileQueue.sendMessage(base64(JSON.stringify({ v: 1, occasion, at: new Date().toISOString() })));
}

export async function starterDeps(context: InvocationContext, client: df.DurableClient): Promise<StarterDeps> {
    await ensureStorage();
    return {
        jobs: shared!.jobs,
        orchestrations: orchestrationsOver(client),
        log: loggerFor(context),
        poison: async (raw) => void (await shared!.poisonQueue.sendMessage(base64(raw))),
    };
}
