import { z } from "zod";
import { OtelTelemetry } from "./OtelTelemetry";
import { noTelemetry, type Telemetry } from "./Telemetry";

export const TelemetryExporter = z.enum(["azure-monitor", "console", "off"], {
    error: "expected azure-monitor, console or off (or leave it out: azure-monitor when APPLICATIONINSIGHTS_CONNECTION_STRING is set, else off)",
});
export type TelemetryExporter = z.infer<typeof TelemetryExporter>;

/** The settings telemetry reads: TELEMETRY_EXPORTER, and the two Application Insights settings as the platform sets them. */
interface TelemetrySettings {
    TELEMETRY_EXPORTER?: TelemetryExporter;
    APPLICATIONINSIGHTS_CONNECTION_STRING?: string;
    APPLICATIONINSIGHTS_AUTHENTICATION_STRING?: string;
}

/** Where telemetry goes, decided from the settings. */
type TelemetryPlan =
    | { exporter: "off" }
    | { exporter: "console" }
    /** `managedIdentity`: the exporter signs in with it (no key in the connection string is used); its client id for a user-assigned one. */
    | { exporter: "azure-monitor"; connectionString: string; managedIdentity?: { clientId?: string } };

/** Telemetry's settings do not fit together; the message says what to set. */
export class TelemetrySettingsError extends Error {
    constructor(message: string) {
        super(message);
        this.name = "TelemetrySettingsError";
    }
}

const AuthenticationString = z
    .string()
    .transform((text) => new Map(text.split(";").filter((part) => part.trim() !== "").map((part) => {
        const at = part.indexOf("=");
        return [(at < 0 ? part : part.slice(0, at)).trim().toLowerCase(), at < 0 ? "" : part.slice(at + 1).trim()] as const;
    })))
    .refine((parts) => parts.get("authorization")?.toUpperCase() === "AAD", {
        error: "APPLICATIONINSIGHTS_AUTHENTICATION_STRING: expected Authorization=AAD;ClientId=<client id of the app's user-assigned identity> (or Authorization=AAD for the system-assigned one)",
    })
    .transform((parts) => ({ clientId: parts.get("clientid") || undefined }));

/** The plan for `settings`, or a `TelemetrySettingsError` that says what to set. */
export function telemetryPlanOf(settings: TelemetrySettings): TelemetryPlan {
    const connectionString = settings.APPLICATIONINSIGHTS_CONNECTION_STRING?.trim() || undefined;
    const exporter = settings.TELEMETRY_EXPORTER ?? (connectionString ? "azure-monitor" : "off");
    if (exporter !== "azure-monitor") return { exporter };
    if (!connectionString) {
        throw new TelemetrySettingsError(
            "TELEMETRY_EXPORTER is azure-monitor but APPLICATIONINSIGHTS_CONNECTION_STRING is not set: set it to the Application Insights resource's " +
                "connection string (the template sets it), or set TELEMETRY_EXPORTER to console or off",
        );
    }
    const authentication = settings.APPLICATIONINSIGHTS_AUTHENTICATION_STRING?.trim();
    if (!authentication) return { exporter, connectionString };
    const parsed = AuthenticationString.safeParse(authentication);
    // Not zod's message: it could quote the value.
    if (!parsed.success) throw new TelemetrySettingsError(parsed.error.issues[0]!.message);
    return { exporter, connectionString, managedIdentity: parsed.data };
}

/** Telemetry, started; `shutdown` sends what is still buffered. */
export interface RunningTelemetry {
    plan: TelemetryPlan;
    telemetry: Telemetry;
    shutdown(): Promise<void>;
}

const SCOPE = "sheetwright";

type AzureMonitorExporterOptions = NonNullable<import("@azure/monitor-opentelemetry").AzureMonitorOpenTelemetryOptions["azureMonitorExporterOptions"]>;

/**
 * Starts the exporter the plan names. Call it once per process, before anything records.
 * `exporterHttpClient`: where the Azure Monitor exporter sends its requests (a test's own; else HTTPS to the ingestion endpoint).
 */
export function startTelemetry(plan: TelemetryPlan, options: { exporterHttpClient?: AzureMonitorExporterOptions["httpClient"] } = {}): RunningTelemetry {
    switch (plan.exporter) {
        case "off":
            return { plan, telemetry: noTelemetry, shutdown: async () => undefined };
        case "console": {
            // The SDKs are loaded only when chosen, like Azure Monitor's: an app with telemetry off starts without them.
            const { ConsoleLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } = require("@opentelemetry/sdk-logs") as typeof import("@opentelemetry/sdk-logs");
            const { ConsoleMetricExporter, MeterProvider, PeriodicExportingMetricReader } = require("@opentelemetry/sdk-metrics") as typeof import("@opentelemetry/sdk-metrics");
            const loggerProvider = new LoggerProvider({ processors: [new SimpleLogRecordProcessor(new ConsoleLogRecordExporter())] });
            const meterProvider = new MeterProvider({ readers: [new PeriodicExportingMetricReader({ exporter: new ConsoleMetricExporter() })] });
            return {
                plan,
                telemetry: new OtelTelemetry(loggerProvider.getLogger(SCOPE), meterProvider.getMeter(SCOPE)),
                shutdown: async () => void (await Promise.all([loggerProvider.shutdown(), meterProvider.shutdown()])),
            };
        }
        case "azure-monitor": {
            // Loaded only when chosen: it brings the whole OpenTelemetry Node SDK, which a local run need not load.
            const monitor = require("@azure/monitor-opentelemetry") as typeof import("@azure/monitor-opentelemetry");
            const { ManagedIdentityCredential } = require("@azure/identity") as typeof import("@azure/identity");
            const { logs } = require("@opentelemetry/api-logs") as typeof import("@opentelemetry/api-logs");
            const { metrics } = require("@opentelemetry/api") as typeof import("@opentelemetry/api");
            monitor.useAzureMonitor({
                // The alert rules count these records: none may be dropped because a span around it was sampled out.
                enableTraceBasedSamplingForLogs: false,
                azureMonitorExporterOptions: {
                    connectionString: plan.connectionString,
                    ...(options.exporterHttpClient ? { httpClient: options.exporterHttpClient } : {}),
                    ...(plan.managedIdentity ? { credential: new ManagedIdentityCredential(plan.managedIdentity.clientId ? { clientId: plan.managedIdentity.clientId } : {}) } : {}),
                },
            });
            return {
                plan,
                telemetry: new OtelTelemetry(logs.getLogger(SCOPE), metrics.getMeter(SCOPE)),
                shutdown: () => monitor.shutdownAzureMonitor(),
            };
        }
    }
}
