import type { Attributes, Counter, Histogram, Meter } from "@opentelemetry/api";
import { SeverityNumber, type Logger } from "@opentelemetry/api-logs";
import { inertText } from "../text/logText";
import type { Dimensions, Telemetry, TelemetryEvent, TelemetryMetric } from "./Telemetry";

/** Events a person should look at: a warning, not information, in the traces table. */
const WARNINGS: ReadonlySet<TelemetryEvent> = new Set(["job.parked", "site.failed", "alert.failed"]);

/**
 * The app's telemetry as OpenTelemetry log records and metric instruments, for whichever
 * exporter the providers behind `logger` and `meter` send to (Azure Monitor, the console, or
 * a test's in-memory exporters).
 */
export class OtelTelemetry implements Telemetry {
    private readonly counters = new Map<TelemetryMetric, Counter>();
    private readonly histograms = new Map<TelemetryMetric, Histogram>();

    constructor(
        private readonly logger: Logger,
        private readonly meter: Meter,
    ) {}

    event(name: TelemetryEvent, dimensions: Dimensions = {}): void {
        const warning = WARNINGS.has(name);
        this.logger.emit({
            severityNumber: warning ? SeverityNumber.WARN : SeverityNumber.INFO,
            severityText: warning ? "WARN" : "INFO",
            body: name,
            attributes: { event: name, ...attributesOf(dimensions) },
        });
    }

    count(metric: TelemetryMetric, dimensions: Dimensions = {}): void {
        let counter = this.counters.get(metric);
        if (!counter) this.counters.set(metric, (counter = this.meter.createCounter(metric)));
        counter.add(1, attributesOf(dimensions));
    }

    record(metric: TelemetryMetric, value: number, dimensions: Dimensions = {}): void {
        let histogram = this.histograms.get(metric);
        if (!histogram) this.histograms.set(metric, (histogram = this.meter.createHistogram(metric)));
        histogram.record(value, attributesOf(dimensions));
    }
}

/** Longest string a dimension keeps (Application Insights cuts customDimensions values at 8,192 characters). */
export const DIMENSION_MAX_CHARS = 1_000;

/** The dimensions that have a value, each string made inert (a park reason may quote what a customer typed) and bounded. */
function attributesOf(dimensions: Dimensions): Attributes {
    const attributes: Attributes = {};
    for (const [name, value] of Object.entries(dimensions)) {
        if (value !== undefined) attributes[name] = typeof value === "string" ? bounded(inertText(value)) : value;
    }
    return attributes;
}

function bounded(text: string): string {
    return text.length <= DIMENSION_MAX_CHARS ? text : `${text.slice(0, DIMENSION_MAX_CHARS - 1)}…`;
}
