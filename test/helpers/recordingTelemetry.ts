import type { Dimensions, Telemetry, TelemetryEvent, TelemetryMetric } from "../../src/shared/telemetry/Telemetry";

export type Recorded =
    | { kind: "event"; name: TelemetryEvent; dimensions: Dimensions }
    | { kind: "count"; name: TelemetryMetric; dimensions: Dimensions }
    | { kind: "record"; name: TelemetryMetric; value: number; dimensions: Dimensions };

/** The Telemetry port in memory: what the app recorded, in order, with its dimensions as given. */
export class RecordingTelemetry implements Telemetry {
    readonly recorded: Recorded[] = [];

    event(name: TelemetryEvent, dimensions: Dimensions = {}): void {
        this.recorded.push({ kind: "event", name, dimensions: defined(dimensions) });
    }

    count(name: TelemetryMetric, dimensions: Dimensions = {}): void {
        this.recorded.push({ kind: "count", name, dimensions: defined(dimensions) });
    }

    record(name: TelemetryMetric, value: number, dimensions: Dimensions = {}): void {
        this.recorded.push({ kind: "record", name, value, dimensions: defined(dimensions) });
    }

    /** The dimensions of every event named `name`. */
    events(name: TelemetryEvent): Dimensions[] {
        return this.recorded.flatMap((entry) => (entry.kind === "event" && entry.name === name ? [entry.dimensions] : []));
    }

    /** The dimensions of every count of `metric`. */
    counts(metric: TelemetryMetric): Dimensions[] {
        return this.recorded.flatMap((entry) => (entry.kind === "count" && entry.name === metric ? [entry.dimensions] : []));
    }

    /** Every measurement of `metric`, with its dimensions. */
    records(metric: TelemetryMetric): Array<{ value: number; dimensions: Dimensions }> {
        return this.recorded.flatMap((entry) => (entry.kind === "record" && entry.name === metric ? [{ value: entry.value, dimensions: entry.dimensions }] : []));
    }
}

function defined(dimensions: Dimensions): Dimensions {
    return Object.fromEntries(Object.entries(dimensions).filter(([, value]) => value !== undefined));
}
