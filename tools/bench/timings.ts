/**
 * The app's time settings for each kind of scenario. Each set passes the app's own start-up
 * checks (a reaper window longer than any live worker, a write that fits in functionTimeout, a
 * late-write horizon no shorter than one write), so the app runs as it would in production,
 * only faster.
 */

/** Smartsheet's 300 requests a minute with time compressed four times, as the latencies are. */
export const COMPRESSED_RATE_LIMIT = { requests: 300, windowMs: 15_000 };

/**
 * Production's defaults compressed four times, like the latencies and the rate-limit window:
 * a drain at the rate limit meets the reaper's window at the same point as it would in
 * production. The reaper looks every 15 s (production: every 5 min, 75 s compressed), which
 * only gives it more chances to take over a job it should leave alone.
 */
export const COMPRESSED_PRODUCTION = {
    SMARTSHEET_REQUESTS_PER_MINUTE: String(COMPRESSED_RATE_LIMIT.requests),
    SMARTSHEET_RATE_LIMIT_WINDOW_SECONDS: String(COMPRESSED_RATE_LIMIT.windowMs / 1000),
    AzureFunctionsJobHost__functionTimeout: "00:02:30",
    STALE_AFTER_MINUTES: "3.75",
    REAPER_SCHEDULE: "*/15 * * * * *",
    SMARTSHEET_CALL_TIMEOUT_SECONDS: "15",
    SMARTSHEET_RATE_LIMIT_RETRY_SECONDS: "30",
    COPY_SETTLE_SECONDS: "3",
    LATE_WRITE_HORIZON_SECONDS: "82.5",
    MAX_CLOCK_SKEW_SECONDS: "7.5",
    STEP_RETRY_FIRST_SECONDS: "1",
    STEP_RETRY_MAX_SECONDS: "15",
    AzureFunctionsJobHost__extensions__durableTask__storageProvider__workItemQueueVisibilityTimeout: "00:01:15",
    AzureFunctionsJobHost__extensions__durableTask__storageProvider__controlQueueVisibilityTimeout: "00:01:15",
};

/**
 * Recovery's rate limit: Smartsheet's minute shrunk to 10 s (the app's window and the simulator's),
 * so that its 1 s of rate-limit waits covers two slices of the shared budget's window.
 */
export const SHRUNK_RATE_LIMIT = { requests: 300, windowMs: 10_000 };

/**
 * Recovery's time shrunk further, in the e2e tests' proportions (test/helpers/recoveryKit.ts):
 * a killed host's work item comes back after 2 s, a dead run's claim goes stale after 5.5 s
 * (a write's 4 s + settle + skew), a job without progress for 9 s is the reaper's, which looks
 * every 2 s. The call timeout (3 s) stays well above the slowest call (a 700 ms copy), so a
 * busy machine does not turn a slow answer into an unanswered write.
 */
export const SHRUNK_RECOVERY = {
    AzureFunctionsJobHost__functionTimeout: "00:00:06",
    SMARTSHEET_CALL_TIMEOUT_SECONDS: "3",
    SMARTSHEET_RATE_LIMIT_RETRY_SECONDS: "1",
    SMARTSHEET_REQUESTS_PER_MINUTE: String(SHRUNK_RATE_LIMIT.requests),
    SMARTSHEET_RATE_LIMIT_WINDOW_SECONDS: String(SHRUNK_RATE_LIMIT.windowMs / 1000),
    COPY_SETTLE_SECONDS: "1",
    LATE_WRITE_HORIZON_SECONDS: "5",
    MAX_CLOCK_SKEW_SECONDS: "0.5",
    STALE_AFTER_MINUTES: "0.15",
    REAPER_SCHEDULE: "*/2 * * * * *",
    STEP_RETRY_FIRST_SECONDS: "1",
    STEP_RETRY_MAX_SECONDS: "2",
    STEP_RETRY_ATTEMPTS: "3",
    MAX_RECOVERIES: "2",
    AzureFunctionsJobHost__extensions__durableTask__storageProvider__workItemQueueVisibilityTimeout: "00:00:02",
    AzureFunctionsJobHost__extensions__durableTask__storageProvider__controlQueueVisibilityTimeout: "00:00:02",
    AzureFunctionsJobHost__extensions__queues__visibilityTimeout: "00:00:00",
};

/** Activities one at a time: what the orchestration's fan-out of the copies saves, measured against. */
export const ONE_ACTIVITY_AT_A_TIME = {
    AzureFunctionsJobHost__extensions__durableTask__maxConcurrentActivityFunctions: "1",
};
