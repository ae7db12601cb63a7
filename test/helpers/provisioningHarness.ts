import { alertRetryPolicy } from "../../src/shared/alerts/delivery";
import { SiteOutages } from "../../src/shared/alerts/SiteOutages";
import { randomUUID } from "node:crypto";
import type { TableClient } from "@azure/data-tables";
import { afterAll, beforeAll, beforeEach, inject } from "vitest";
import { loadConfig, type Config } from "../../src/shared/config";
import { IntakeCursorStore } from "../../src/shared/intake/IntakeCursorStore";
import type { SweepDeps } from "../../src/shared/intake/intakeSweep";
import type { JobKey } from "../../src/shared/jobs/JobRow";
import { JobStore } from "../../src/shared/jobs/JobStore";
import type { OrchestrationState, Orchestrations } from "../../src/shared/orchestration/Orchestrations";
import { BlueprintStore } from "../../src/shared/provisioning/BlueprintStore";
import { SharedListings } from "../../src/shared/provisioning/SharedListings";
import type { Logger } from "../../src/shared/logger";
import type { ProvisioningDeps } from "../../src/shared/provisioning/ProvisioningDeps";
import { SdkSmartsheet, type SdkSmartsheetOptions } from "../../src/shared/smartsheet/SdkSmartsheet";
import type { SmartsheetPort } from "../../src/shared/smartsheet/SmartsheetPort";
import { sitesFrom, type Site } from "../../src/shared/sites/Sites";
import { storageAccessOf, tableClientFor } from "../../src/shared/storage";
import type { RunningSimulator, SimulatorOptions } from "../../tools/smartsheet-sim";
import { sitesSettingsFor } from "../../tools/stack/appSettings";
import { startTestSimulator } from "../sim/simTestKit";
import { uniqueName } from "./names";
import { WebhookHealth } from "../../src/shared/intake/WebhookHealth";

export interface Harness {
    sim: RunningSimulator;
    config: Config;
    /** The first site (the only one unless the simulator serves several). */
    site: Site;
    /** Every site, in the simulator's order. */
    sites: readonly Site[];
    deps: SweepDeps & {
        webhookHealth: WebhookHealth;
        /** The first site's client, for a test's own Smartsheet calls. */
        smartsheet: SmartsheetPort;
        logs: string[];
        enqueued: JobKey[];
        instances: Map<string, OrchestrationState>;
        started: string[];
        terminated: string[];
    };
    jobs: JobStore;
    /** The Jobs table itself, for a test's own view of it. */
    table: TableClient;
}

/**
 * Settings for the app pointed at a simulator's seeded workspace and the test Azurite: the
 * single-site settings, or SITES when the simulator serves several sites.
 */
export function settingsFor(sim: RunningSimulator, extra: Record<string, string> = {}): Record<string, string> {
    const state = sim.core.state();
    const sites =
        state.sites.length > 1
            ? sitesSettingsFor(state.sites)
            : {
                  SMARTSHEET_ACCESS_TOKEN: "sim-token",
                  INTAKE_SHEET_ID: String(state.intakeSheetId),
                  TEMPLATE_FOLDER_ID: String(state.templateFolderId),
                  PRODUCTS_FOLDER_ID: String(state.productsFolderId),
                  FILING_INDEX_SHEET_ID: String(state.filingIndexSheetId),
              };
    return {
        SMARTSHEET_BASE_URL: sim.baseUrl,
        ...sites,
        AzureWebJobsStorage: inject("azuriteConnectionString"),
        JOBS_TABLE: uniqueName("jobs"),
        PROVISION_QUEUE: uniqueName("provision-"),
        COPY_SETTLE_SECONDS: "0",
        TASK_HUB_NAME: "SheetwrightTest",
        ...extra,
    };
}

export interface HarnessOptions {
    simulator?: SimulatorOptions;
    settings?: Record<string, string>;
    /** For every site's Smartsheet client, over the harness's own (a 2 s call timeout, the app's back-offs). */
    smartsheet?: Partial<Omit<SdkSmartsheetOptions, "accessToken" | "baseUrl">>;
}

/**
 * A harness of its own for one test (its own simulator and jobs table), for tests that run side
 * by side (`it.concurrent`); `close` stops its simulator.
 */
export async function startProvisioningHarness(options: HarnessOptions = {}): Promise<Harness & { close(): Promise<void> }> {
    const sim = await startTestSimulator(options.simulator);
    try {
        return { ...(await harnessOn(sim, options)), close: () => sim.close() };
    } catch (error) {
        await sim.close();
        throw error;
    }
}

/** The steps' deps on `sim` (as it is) and a fresh jobs table. */
async function harnessOn(sim: RunningSimulator, options: HarnessOptions): Promise<Harness> {
    const config = loadConfig(settingsFor(sim, options.settings));
    const table = tableClientFor(storageAccessOf(config), config.JOBS_TABLE);
    await table.createTable();
    const jobs = new JobStore(table);
    const logs: string[] = [];
    const log: Logger = {
        info: (line) => logs.push(`info ${line}`),
        warn: (line) => logs.push(`warn ${line}`),
        error: (line) => logs.push(`error ${line}`),
    };
    const enqueued: JobKey[] = [];
    const instances = new Map<string, OrchestrationState>();
    const started: string[] = [];
    const terminated: string[] = [];
    const orchestrations: Orchestrations = {
        status: async (id) => instances.get(id),
        start: async (_name, id) => {
            started.push(id);
            instances.set(id, { runtimeStatus: "Running" });
        },
        raiseEvent: async () => undefined,
        terminate: async (id) => {
            terminated.push(id);
            instances.set(id, { runtimeStatus: "Terminated" });
        },
    };
    const sites = sitesFrom(config.sites, (accessToken) => new SdkSmartsheet({ accessToken, baseUrl: sim.baseUrl, callTimeoutMs: 2_000, requestsPerMinute: config.SMARTSHEET_REQUESTS_PER_MINUTE, ...options.smartsheet }));
    const site = sites.all()[0]!;
    const provisioning: ProvisioningDeps = {
        config,
        sites,
        jobs,
        blueprints: new BlueprintStore(table),
        log,
        now: () => new Date(),
        sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
        newRunId: () => randomUUID(),
        listings: new SharedListings(() => Date.now()),
        siteOutages: new SiteOutages(table, alertRetryPolicy(config.STALE_AFTER_MINUTES)),
        timing: { settleMs: 20, claimTtlMs: 3_000, claimPollMs: 20, lateWriteHorizonMs: 3_000, clockSkewMs: 1_000 },
    };
    return {
        sim,
        config,
        site,
        sites: sites.all(),
        jobs,
        table,
        deps: {
            ...provisioning,
            smartsheet: site.smartsheet,
            orchestrations,
            cursors: new IntakeCursorStore(table),
            webhookHealth: new WebhookHealth(table),
            enqueue: async (key) => void enqueued.push(key),
            logs,
            enqueued,
            instances,
            started,
            terminated,
        },
    };
}

/**
 * The provisioning steps wired to a simulator (no latency) and a fresh jobs table, with an
 * in-memory stand-in for Durable Functions' status API. Reset before every test.
 */
export function useProvisioningHarness(options: HarnessOptions = {}): { readonly current: Harness } {
    let sim: RunningSimulator | undefined;
    let harness: Harness | undefined;
    beforeAll(async () => {
        sim = await startTestSimulator(options.simulator);
    });
    afterAll(async () => {
        await sim?.close();
    });
    beforeEach(async () => {
        sim!.core.reset();
        harness = await harnessOn(sim!, options);
    });
    return {
        get current() {
            if (!harness) throw new Error("harness not ready");
            return harness;
        },
    };
}
