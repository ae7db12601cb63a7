/**
 * The events and metrics the app reports, by the names ops queries them by (docs/telemetry.md)
 * and the Azure Monitor alert rules of the template match on. Renaming one breaks those.
 */
export const TelemetryEvents = [
    "job.transition",
    "job.parked",
    "job.recovered",
    "job.done",
    "site.failed",
    "site.recovered",
    "sweep.completed",
    "reaper.completed",
    "alert.failed",
] as const;
export type TelemetryEvent = (typeof TelemetryEvents)[number];

export const TelemetryMetrics = [
    "sheetwright.products.done",
    "sheetwright.products.parked",
    "sheetwright.jobs.recovered",
    "sheetwright.smartsheet.calls",
    "sheetwright.budget.use",
    "sheetwright.sweep.found",
    "sheetwright.reaper.backlog",
    "sheetwright.approval_to_done.seconds",
    "sheetwright.webhook.callbacks",
] as const;
export type TelemetryMetric = (typeof TelemetryMetrics)[number];

/**
 * Every dimension a record may carry (customDimensions in Application Insights). Never a token
 * (`token` is the name of the app setting that holds it) and never customer text unescaped (the
 * implementations make every string inert, as the log does).
 */
export const DimensionNames = [
    // A job's record: which job, where it is.
    "jobKey",
    "site",
    "state",
    "stage",
    "attempt",
    "from",
    "to",
    "reason",
    // A Smartsheet call: what it did, how Smartsheet answered (the HTTP status, `none` when nothing answered).
    "operation",
    "status",
    "token",
    // What a sweep found (`new`, `missedByCursor`), or which sweep ran (`routine`, `full`).
    "kind",
    // Which run saw it (`intake sweep`, `reaper`…).
    "run",
    // What a webhook callback led to (`requested`, `coalesced`, `own writes`).
    "outcome",
    // A job.done's approval-to-done time, for percentiles over the traces table.
    "approvalToDoneSeconds",
    // A run's counts (sweep.completed, reaper.completed).
    "rowsRead",
    "queued",
    "rejected",
    "missedByCursor",
    "smartsheetCalls",
    "active",
    "stale",
    "backlogged",
    "transitions",
    "failedSites",
    // An alert given up (alert.failed): which alert, whom it was about, after how many tries.
    "alert",
    "about",
    "tries",
] as const;
type DimensionName = (typeof DimensionNames)[number];
export type Dimensions = Partial<Record<DimensionName, string | number | undefined>>;

/** Where the app's events and metrics go (`startTelemetry` picks the exporter from TELEMETRY_EXPORTER). */
export interface Telemetry {
    /** One log record named `name` (its attribute `event`), with its dimensions: the `traces` table in Application Insights. */
    event(name: TelemetryEvent, dimensions?: Dimensions): void;
    /** Adds one to a counter (`customMetrics`). */
    count(metric: TelemetryMetric, dimensions?: Dimensions): void;
    /** One measurement of a histogram (`customMetrics`: sum, count, min and max per export). */
    record(metric: TelemetryMetric, value: number, dimensions?: Dimensions): void;
}

/** Telemetry switched off: nothing is recorded. */
export const noTelemetry: Telemetry = {
    event: () => undefined,
    count: () => undefined,
    record: () => undefined,
};
