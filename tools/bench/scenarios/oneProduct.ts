import { currentInstanceId } from "../../../src/shared/jobs/JobRow";
import { BenchStack, productRequest, SMARTSHEET_LATENCY_MS } from "../benchStack";
import type { Measured } from "../figures";
import { byOperation, describeOperations, runProduct, type ProductRun } from "../productRun";
import { ONE_ACTIVITY_AT_A_TIME } from "../timings";

const PRODUCT_TIMEOUT_MS = 120_000;
/** Smartsheet's limit per token, in real time. */
const SMARTSHEET_REQUESTS_PER_MINUTE = 300;

/**
 * One product on the happy path, on a freshly started host with production's settings: its
 * Smartsheet calls (by the simulator's log, beside the job row's own count), its orchestration
 * history, the host's cold start; then the same product with activities one at a time
 * (maxConcurrentActivityFunctions 1) on a host of its own, for the fan-out's speed-up.
 */
export async function oneProduct(storage: string): Promise<Measured> {
    const fanned = await onFreshHost(storage, {});
    const serial = await onFreshHost(storage, ONE_ACTIVITY_AT_A_TIME);
    const { run } = fanned;
    const operations = byOperation(run.calls);
    const errors4004 = [...run.calls, ...serial.run.calls].filter((call) => call.errorCode === 4004).length;
    return {
        figures: {
            callsPerProduct: run.calls.length,
            historyEventsPerProduct: fanned.history.events,
            episodesPerProduct: fanned.history.episodes,
            appLoadMs: fanned.coldStartMs,
            fanoutSpeedup: serial.run.queuedToDoneMs / run.queuedToDoneMs,
            fanoutErrors4004: errors4004,
        },
        details: {
            callsByOperation: operations,
            jobRowSmartsheetCalls: run.row.smartsheetCalls,
            productSecondsFannedOut: run.queuedToDoneMs / 1000,
            productSecondsOneAtATime: serial.run.queuedToDoneMs / 1000,
            productsPerMinutePerToken: SMARTSHEET_REQUESTS_PER_MINUTE / run.calls.length,
        },
        notes: [
            `calls by operation: ${describeOperations(run.calls)} (the job row counts ${run.row.smartsheetCalls})`,
            `physical limit: ${SMARTSHEET_REQUESTS_PER_MINUTE} requests a minute ÷ ${run.calls.length} calls = ` +
                `${(SMARTSHEET_REQUESTS_PER_MINUTE / run.calls.length).toFixed(1)} products a minute per token`,
            `fan-out: queued → done ${(serial.run.queuedToDoneMs / 1000).toFixed(1)} s with activities one at a time, ` +
                `${(run.queuedToDoneMs / 1000).toFixed(1)} s as implemented`,
        ],
    };
}

async function onFreshHost(storage: string, settings: Record<string, string>): Promise<{ run: ProductRun; history: { events: number; episodes: number }; coldStartMs: number }> {
    const stack = await BenchStack.start({ storage, settings, simulator: { latencyMs: SMARTSHEET_LATENCY_MS } });
    try {
        const run = await runProduct(stack, productRequest("ONE", 1), { timeoutMs: PRODUCT_TIMEOUT_MS });
        if (run.row.state !== "done") throw new Error(`The happy-path product ended ${run.row.state}: ${run.row.parkReason ?? run.row.lastError ?? ""}`);
        return { run, history: await stack.history(currentInstanceId(run.row)), coldStartMs: stack.coldStartsMs[0]! };
    } finally {
        await stack.stop();
    }
}
