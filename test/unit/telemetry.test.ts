import { SeverityNumber } from "@opentelemetry/api-logs";
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from "@opentelemetry/sdk-logs";
import { AggregationTemporality, DataPointType, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader, type MetricData } from "@opentelemetry/sdk-metrics";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Alert, AlertChannel } from "../../src/shared/alerts/AlertChannel";
import { ConfigError, loadConfig, type SiteConfig } from "../../src/shared/config";
import type { Logger } from "../../src/shared/logger";
import { SdkSmartsheet } from "../../src/shared/smartsheet/SdkSmartsheet";
import { forEachSite } from "../../src/shared/sites/eachSite";
import { sitesFrom } from "../../src/shared/sites/Sites";
import { jobEvents } from "../../src/shared/telemetry/jobEvents";
import { DIMENSION_MAX_CHARS, OtelTelemetry } from "../../src/shared/telemetry/OtelTelemetry";
import { telemetryPlanOf, TelemetrySettingsError } from "../../src/shared/telemetry/startTelemetry";
import { ACME_SITE } from "../helpers/exampleSites";

const ACME: SiteConfig = { ...ACME_SITE, token: "tok_acme_SECRET" };

/** The site registry as the composition builds it; nothing here calls Smartsheet. */
const sites = sitesFrom([ACME], (accessToken) => new SdkSmartsheet({ accessToken, baseUrl: "http://127.0.0.1:9/" }));

const quietLog: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe("the dimensions, through the real OpenTelemetry SDK and its in-memory exporters", () => {
    let logExporter: InMemoryLogRecordExporter;
    let metricExporter: InMemoryMetricExporter;
    let reader: PeriodicExportingMetricReader;
    let loggerProvider: LoggerProvider;
    let meterProvider: MeterProvider;
    let telemetry: OtelTelemetry;

    beforeEach(() => {
        logExporter = new InMemoryLogRecordExporter();
        metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
        reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
        loggerProvider = new LoggerProvider({ processors: [new SimpleLogRecordProcessor(logExporter)] });
        meterProvider = new MeterProvider({ readers: [reader] });
        telemetry = new OtelTelemetry(loggerProvider.getLogger("sheetwright"), meterProvider.getMeter("sheetwright"));
    });
    afterEach(async () => {
        await Promise.all([loggerProvider.shutdown(), meterProvider.shutdown()]);
    });

    const logRecords = () => logExporter.getFinishedLogRecords().map((record) => ({ body: record.body, severity: record.severityNumber, attributes: record.attributes }));
    async function metricsExported(): Promise<MetricData[]> {
        await reader.forceFlush();
        return metricExporter.getMetrics().flatMap((resource) => resource.scopeMetrics.flatMap((scope) => scope.metrics));
    }

    it("a job done arrives as log records whose attributes are its dimensions, and as a counter and a histogram by site", async () => {
        const createdAt = "2026-03-02T09:00:00.000Z";
        const now = new Date("2026-03-02T09:02:30.000Z");
        jobEvents.done(telemetry, { intakeSheetId: String(ACME.intakeSheetId), intakeRowId: "77", state: "running", stage: "register", attempt: 2, createdAt }, sites, "running", now);

        const job = { jobKey: `${ACME.intakeSheetId}-77`, site: "acme", state: "done", stage: "register", attempt: 2 };
        expect(logRecords()).toEqual([
            { body: "job.transition", severity: SeverityNumber.INFO, attributes: { event: "job.transition", ...job, from: "running", to: "done" } },
            { body: "job.done", severity: SeverityNumber.INFO, attributes: { event: "job.done", ...job, approvalToDoneSeconds: 150 } },
        ]);
        const exported = await metricsExported();
        const done = exported.find((metric) => metric.descriptor.name === "sheetwright.products.done")!;
        expect(done.dataPointType).toBe(DataPointType.SUM);
        expect(done.dataPoints.map((point) => ({ attributes: point.attributes, value: point.value }))).toEqual([{ attributes: { site: "acme" }, value: 1 }]);
        const seconds = exported.find((metric) => metric.descriptor.name === "sheetwright.approval_to_done.seconds")!;
        expect(seconds.dataPointType).toBe(DataPointType.HISTOGRAM);
        expect(seconds.dataPoints.map((point) => ({ attributes: point.attributes, value: point.value }))).toEqual([
            { attributes: { site: "acme" }, value: expect.objectContaining({ count: 1, sum: 150 }) },
        ]);
    });

    it("a site that fails, whose alert fails too, then runs again: site.failed and alert.failed as warnings, then site.recovered", async () => {
        const refusing: AlertChannel = {
            send: async (alert: Alert) => {
                throw new Error(`the webhook answered 410 Gone to ${alert.event}`);
            },
        };
        const deps = { sites, log: quietLog, alerts: refusing, telemetry, now: () => new Date() };
        await forEachSite(deps, "intake sweep", async () => {
            throw new Error("Smartsheet answered 503");
        });
        await forEachSite(deps, "intake sweep", async () => "swept");
        await forEachSite(deps, "intake sweep", async () => "swept");

        expect(logRecords()).toEqual([
            { body: "site.failed", severity: SeverityNumber.WARN, attributes: { event: "site.failed", site: "acme", run: "intake sweep", reason: "Smartsheet answered 503" } },
            { body: "alert.failed", severity: SeverityNumber.WARN, attributes: { event: "alert.failed", site: "acme", run: "intake sweep", reason: "the webhook answered 410 Gone to site.failed" } },
            { body: "site.recovered", severity: SeverityNumber.INFO, attributes: { event: "site.recovered", site: "acme", run: "intake sweep" } },
        ]);
    });

    it("customer text in a dimension arrives inert, on one line, and bounded", () => {
        const typed = "Widget\n[ERROR] forged line \u202eevil" + "x".repeat(2 * DIMENSION_MAX_CHARS);
        jobEvents.parked(telemetry, { intakeSheetId: "1", intakeRowId: "2", state: "running", attempt: 1 }, undefined, "running", typed);

        const reasons = logRecords().map((record) => String(record.attributes.reason));
        expect(reasons).toHaveLength(2);
        for (const reason of reasons) {
            expect(reason.startsWith("Widget\\u000a[ERROR] forged line \\u202eevil")).toBe(true);
            expect(reason).toHaveLength(DIMENSION_MAX_CHARS);
            expect(reason.endsWith("…")).toBe(true);
        }
    });
});

describe("TELEMETRY_EXPORTER and the Application Insights settings", () => {
    const CONNECTION = "InstrumentationKey=00000000-0000-0000-0000-000000000000;IngestionEndpoint=https://westeurope-5.in.applicationinsights.azure.com/";

    it("is off without a connection string, and azure-monitor with one", () => {
        expect(telemetryPlanOf({})).toEqual({ exporter: "off" });
        expect(telemetryPlanOf({ APPLICATIONINSIGHTS_CONNECTION_STRING: CONNECTION })).toEqual({ exporter: "azure-monitor", connectionString: CONNECTION });
    });

    it("goes where TELEMETRY_EXPORTER says, whatever the connection string", () => {
        expect(telemetryPlanOf({ TELEMETRY_EXPORTER: "console", APPLICATIONINSIGHTS_CONNECTION_STRING: CONNECTION })).toEqual({ exporter: "console" });
        expect(telemetryPlanOf({ TELEMETRY_EXPORTER: "off", APPLICATIONINSIGHTS_CONNECTION_STRING: CONNECTION })).toEqual({ exporter: "off" });
    });

    it("signs in with the user-assigned identity the authentication string names, or the system-assigned one", () => {
        const plan = (authentication: string) => telemetryPlanOf({ APPLICATIONINSIGHTS_CONNECTION_STRING: CONNECTION, APPLICATIONINSIGHTS_AUTHENTICATION_STRING: authentication });
        expect(plan("Authorization=AAD;ClientId=5d1f2a3b-0000-4000-8000-000000000001")).toMatchObject({ managedIdentity: { clientId: "5d1f2a3b-0000-4000-8000-000000000001" } });
        expect(plan("Authorization=AAD")).toMatchObject({ managedIdentity: { clientId: undefined } });
    });

    it("refuses azure-monitor without a connection string, and an authentication string that is not AAD, saying what to set and quoting no value", () => {
        expect(() => telemetryPlanOf({ TELEMETRY_EXPORTER: "azure-monitor" })).toThrow(
            new TelemetrySettingsError(
                "TELEMETRY_EXPORTER is azure-monitor but APPLICATIONINSIGHTS_CONNECTION_STRING is not set: set it to the Application Insights resource's " +
                    "connection string (the template sets it), or set TELEMETRY_EXPORTER to console or off",
            ),
        );
        const refusal = (() => {
            try {
                telemetryPlanOf({ APPLICATIONINSIGHTS_CONNECTION_STRING: CONNECTION, APPLICATIONINSIGHTS_AUTHENTICATION_STRING: "Authorization=Key;Secret=hunter2" });
            } catch (error) {
                return error as Error;
            }
        })();
        expect(refusal).toBeInstanceOf(TelemetrySettingsError);
        expect(refusal!.message).toMatch(/^APPLICATIONINSIGHTS_AUTHENTICATION_STRING: expected Authorization=AAD;ClientId=/);
        expect(refusal!.message).not.toContain("hunter2");
    });

    it("is a setting of the app's schema: the three exporters pass, anything else is refused with the choices", () => {
        const base = {
            SMARTSHEET_ACCESS_TOKEN: ACME.token,
            INTAKE_SHEET_ID: String(ACME.intakeSheetId),
            TEMPLATE_FOLDER_ID: String(ACME.templateFolderId),
            PRODUCTS_FOLDER_ID: String(ACME.productsFolderId),
            FILING_INDEX_SHEET_ID: String(ACME.filingIndexSheetId),
            AzureWebJobsStorage: "UseDevelopmentStorage=true",
            TASK_HUB_NAME: "Sheetwright",
        };
        for (const exporter of ["azure-monitor", "console", "off"] as const) expect(loadConfig({ ...base, TELEMETRY_EXPORTER: exporter }).TELEMETRY_EXPORTER).toBe(exporter);
        expect(loadConfig(base).TELEMETRY_EXPORTER).toBeUndefined();
        expect(() => loadConfig({ ...base, TELEMETRY_EXPORTER: "datadog" })).toThrow(ConfigError);
        expect(() => loadConfig({ ...base, TELEMETRY_EXPORTER: "datadog" })).toThrow(/TELEMETRY_EXPORTER.*expected azure-monitor, console or off/);
    });
});
