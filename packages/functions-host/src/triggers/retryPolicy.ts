/**
 * A function-level retry policy (`app.timer(name, { retry })`), as the library hands it to the
 * host in the function's metadata: durations in whole seconds. The Functions runtime applies it
 * to timer (and Kafka, Event Hubs, Cosmos DB) triggers only; for queues the binding retries.
 */
export interface RetryPolicy {
    strategy: "fixedDelay" | "exponentialBackoff";
    /** -1: retry for ever. */
    maxRetryCount: number;
    delayMs: (retryCount: number) => number;
}

interface RpcDuration {
    seconds?: number | string | null;
    nanos?: number | null;
}

interface RpcRetryOptions {
    retryStrategy?: unknown;
    strategy?: unknown;
    maxRetryCount?: unknown;
    delayInterval?: RpcDuration | null;
    minimumInterval?: RpcDuration | null;
    maximumInterval?: RpcDuration | null;
}

const millis = (duration: RpcDuration | null | undefined): number | undefined =>
    duration ? Number(duration.seconds ?? 0) * 1000 + Math.round(Number(duration.nanos ?? 0) / 1e6) : undefined;

/** The policy in a function's metadata; undefined when it has none. Throws, naming the function, on one the runtime would refuse. */
export function retryPolicyOf(functionName: string, retryOptions: unknown): RetryPolicy | undefined {
    if (retryOptions === undefined || retryOptions === null) return undefined;
    const options = retryOptions as RpcRetryOptions;
    const strategy = String(options.retryStrategy ?? options.strategy ?? "");
    const maxRetryCount = Number(options.maxRetryCount);
    const refuse = (why: string) => new Error(`Function '${functionName}' has an invalid retry policy: ${why}`);
    if (!Number.isInteger(maxRetryCount) || maxRetryCount < -1) throw refuse(`maxRetryCount must be -1 (for ever) or a whole number ≥ 0, not ${String(options.maxRetryCount)}.`);
    if (strategy === "fixedDelay") {
        const delay = millis(options.delayInterval);
        if (delay === undefined) throw refuse("a fixedDelay policy needs delayInterval.");
        return { strategy, maxRetryCount, delayMs: () => delay };
    }
    if (strategy === "exponentialBackoff") {
        const minimum = millis(options.minimumInterval);
        const maximum = millis(options.maximumInterval);
        if (minimum === undefined || maximum === undefined) throw refuse("an exponentialBackoff policy needs minimumInterval and maximumInterval.");
        if (minimum > maximum) throw refuse("minimumInterval is longer than maximumInterval.");
        // WebJobs' ExponentialBackoffRetryAttribute: the minimum, doubled with each retry, capped at the maximum.
        return { strategy, maxRetryCount, delayMs: (retryCount) => Math.min(maximum, minimum * 2 ** Math.max(0, retryCount - 1)) };
    }
    throw refuse(`strategy must be fixedDelay or exponentialBackoff, not '${strategy}'.`);
}
