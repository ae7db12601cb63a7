import { randomBytes } from "node:crypto";
import path from "node:path";
import { freePort, startAzurite, startHost, type AzuriteOptions, type HostOptions, type RunningAzurite, type RunningHost } from "@sheetwright/functions-host";
import { startSimulator, type RunningSimulator, type SimulatorOptions } from "../smartsheet-sim";
import { appSettingsFor } from "./appSettings";
import { appApi } from "./clients";

/** The repository root: the app's package.json, host.json and dist/ live here. */
export const APP_DIR = path.resolve(__dirname, "..", "..", "..");

export interface LocalStackOptions {
    azurite?: AzuriteOptions;
    simulator?: SimulatorOptions;
    host?: Omit<HostOptions, "appDir" | "settings">;
    /** Settings over the ones that point the app at the stack. */
    settings?: Record<string, string>;
    /** The fast path on: the host on a port chosen first, WEBHOOK_BASE_URL pointing at it, callbacks carrying its function key. */
    webhooks?: boolean;
    /** Runs once the simulator is up and before the host starts (the app sees what it leaves). */
    beforeHost?: (sim: RunningSimulator) => Promise<void>;
}

export interface LocalStack {
    azurite: RunningAzurite;
    sim: RunningSimulator;
    host: RunningHost;
    settings: Record<string, string>;
    /** Calls the app's HTTP API with the function key. */
    api(pathAndQuery: string, init?: RequestInit): Promise<Response>;
    stop(): Promise<void>;
}

/** Azurite, the Smartsheet simulator and the local Functions host running Sheetwright, together. */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
    const azurite = await startAzurite(options.azurite);
    let sim: RunningSimulator | undefined;
    try {
        sim = await startSimulator(options.simulator);
        await options.beforeHost?.(sim);
        const port = options.webhooks ? await freePort() : options.host?.port;
        const webhookKey = `local-webhook-key-${randomBytes(12).toString("hex")}`;
        const webhooks: Record<string, string> = options.webhooks
            ? { FUNCTIONS_HOST_KEY: webhookKey, WEBHOOK_BASE_URL: `http://127.0.0.1:${port}/`, WEBHOOK_FUNCTION_KEY: webhookKey, WEBHOOK_COALESCE_SECONDS: "1" }
            : {};
        // Every simulated site through SITES, as a deployment serving several customers is configured.
        const settings = appSettingsFor(
            { smartsheetBaseUrl: sim.baseUrl, anchors: sim.core.anchors, storageConnectionString: azurite.connectionString, sites: sim.core.sites() },
            { ...webhooks, ...options.settings },
        );
        const host = await startHost({ ...options.host, ...(port === undefined ? {} : { port }), appDir: APP_DIR, settings });
        const running = sim;
        return {
            azurite,
            sim: running,
            host,
            settings,
            api: appApi(host.url, host.functionKey),
            async stop() {
                await host.stop().catch(() => undefined);
                await running.close().catch(() => undefined);
                await azurite.stop();
            },
        };
    } catch (error) {
        await sim?.close().catch(() => undefined);
        await azurite.stop();
        throw error;
    }
}
