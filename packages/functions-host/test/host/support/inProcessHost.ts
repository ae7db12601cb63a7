import { afterAll, beforeAll, inject } from "vitest";
import { startHost, type HostOptions, type RunningHost } from "../../../src/index";
import { uniqueName } from "../../helpers/names";
import { durableApi } from "./hostTestClient";

type DurableApi = ReturnType<typeof durableApi>;

/** The host this test file runs in its own process; its RunningHost fields are there once beforeAll has run. */
export interface InProcessHost extends RunningHost {
    /** The shared test Azurite. */
    connectionString: string;
    /** A task hub name no other test file uses, for the settings that name the app's hub. */
    hub: string;
    /** The host's Durable HTTP API; can be taken at module scope, before the host runs. */
    api: DurableApi;
}

export interface InProcessHostOptions extends Omit<HostOptions, "appDir" | "port" | "settings"> {
    /** Prefix of `hub` (default "hub"). */
    hubPrefix?: string;
}

/**
 * Starts the app in `appDir` on a free port in beforeAll, with the app settings `settings` returns
 * (called then, so it may use what earlier beforeAll hooks set up), and stops it in afterAll.
 */
export function useInProcessHost(
    appDir: string,
    settings: (context: { connectionString: string; hub: string }) => Record<string, string>,
    options: InProcessHostOptions = {},
): InProcessHost {
    const { hubPrefix = "hub", ...hostOptions } = options;
    const connectionString = inject("azuriteConnectionString");
    const hub = uniqueName(hubPrefix);
    const host = {
        connectionString,
        hub,
        // Each call builds the API on the host's url of the moment, so the object works before the host runs.
        api: new Proxy({} as DurableApi, { get: (_api, method) => durableApi(host.url)[method as keyof DurableApi] }),
    } as InProcessHost;
    let running: RunningHost | undefined;

    beforeAll(async () => {
        running = await startHost({ appDir, port: 0, settings: settings({ connectionString, hub }), ...hostOptions });
        Object.assign(host, running);
    });

    afterAll(async () => {
        await running?.stop();
    });

    return host;
}
