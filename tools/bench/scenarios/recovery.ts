import { BenchStack, productRequest, SMARTSHEET_LATENCY_MS } from "../benchStack";
import type { Measured } from "../figures";
import { byOperation, isWrite, runProduct, type ProductRun } from "../productRun";
import { SHRUNK_RATE_LIMIT, SHRUNK_RECOVERY } from "../timings";

/** Stacks interrupting products side by side (two rounds for 26 points): each point mostly waits (redelivery, claims, horizon). */
const WORKERS = 13;
const PRODUCT_TIMEOUT_MS = 120_000;

interface PointResult {
    /** The host was killed once the simulator had answered this many of the product's calls. */
    afterCall: number;
    extraReads: number;
    extraWrites: number;
    /** Calls beyond the uninterrupted product's, by operation: `getFolderChildren +2, updateRows +1`. */
    extraByOperation: string;
    /** The job's final state, or why the product could not be followed to the end. */
    outcome: string;
    /** Attempts the job took (the reaper's take-overs start new ones). */
    attempts: number;
    queuedToDoneSeconds: number;
}

/**
 * A product interrupted after each of its calls — the host SIGKILLed as soon as Smartsheet has
 * answered the k-th, for every k a happy-path product makes — and finished by what production
 * has: the host starting again, Durable Functions delivering the killed work again, the steps'
 * claims, the reaper. Each interrupted product is compared with an uninterrupted one on the
 * same stack: reads and writes beyond it.
 */
export async function recovery(storage: string): Promise<Measured> {
    const stacks = await BenchStack.startMany(WORKERS, { storage, settings: SHRUNK_RECOVERY, simulator: { latencyMs: SMARTSHEET_LATENCY_MS, rateLimit: SHRUNK_RATE_LIMIT } });
    const results: PointResult[] = [];
    const runs: ProductRun[] = [];
    let baselines: ProductRun[];
    try {
        let ordered = 0;
        const nextRequest = (worker: number) => productRequest(`RC${worker}`, ++ordered);
        baselines = await Promise.all(stacks.map((stack, worker) => runProduct(stack, nextRequest(worker), { timeoutMs: PRODUCT_TIMEOUT_MS })));
        const failed = baselines.find((run) => run.row.state !== "done");
        if (failed) throw new Error(`An uninterrupted product ended ${failed.row.state}: ${failed.row.parkReason ?? failed.row.lastError ?? ""}`);
        const points = Array.from({ length: baselines[0]!.calls.length }, (_, index) => index + 1);
        await Promise.all(
            stacks.map(async (stack, worker) => {
                for (let afterCall = points.shift(); afterCall !== undefined; afterCall = points.shift()) {
                    try {
                        const run = await runProduct(stack, nextRequest(worker), { killAtCall: afterCall, timeoutMs: PRODUCT_TIMEOUT_MS });
                        runs.push(run);
                        results.push(compare(afterCall, run, baselines[worker]!));
                    } catch (error) {
                        results.push({ afterCall, extraReads: 0, extraWrites: 0, extraByOperation: "", outcome: `not followed to the end: ${(error as Error).message}`, attempts: 0, queuedToDoneSeconds: 0 });
                        if (!stack.host.running()) await stack.host.start();
                    }
                }
            }),
        );
    } finally {
        await Promise.all(stacks.map((stack) => stack.stop()));
    }

    results.sort((a, b) => a.afterCall - b.afterCall);
    const resweeps = [...baselines, ...runs].reduce((sum, run) => sum + run.sweeps - 1, 0);
    const notDone = results.filter((point) => point.outcome !== "done");
    const worst = results.reduce((most, point) => (point.extraReads > most.extraReads ? point : most), results[0]!);
    const happyPath = [...new Set(baselines.map((run) => run.calls.length))].join("/");
    return {
        figures: {
            recoveryExtraWrites: results.reduce((sum, point) => sum + Math.max(0, point.extraWrites), 0),
            recoveryExtraReads: Math.max(0, ...results.map((point) => point.extraReads)),
            recoveryNotDone: notDone.length,
        },
        details: {
            recoveryPoints: results.length,
            recoveryExtraReadsByPoint: results.map((point) => point.extraReads),
            recoveryExtraWritesByPoint: results.map((point) => point.extraWrites),
            recoveryAttemptsByPoint: results.map((point) => point.attempts),
            recoverySecondsByPoint: results.map((point) => Math.round(point.queuedToDoneSeconds * 10) / 10),
        },
        notes: [
            `recovery: the happy path's calls in order: ${baselines[0]!.calls.map((call, index) => `${index + 1} ${call.op}`).join(", ")}`,
            `recovery: host killed after call k = 1…${results.length} of the happy path's ${happyPath}; extra reads by k: ` +
                results.map((point) => `${point.afterCall}:${point.extraReads}`).join(" "),
            `recovery: most extra reads after call ${worst.afterCall}: ${worst.extraByOperation}`,
            ...results
                .filter((point) => point.extraWrites > 0)
                .map((point) => `recovery: killed after call ${point.afterCall}: ${point.extraWrites} repeated writes (${point.extraByOperation}; ${point.attempts} attempts)`),
            ...notDone.map((point) => `recovery: killed after call ${point.afterCall}: ${point.outcome}`),
            `recovery: intake sweeps fired beyond one per product (a sweep whose site failed, as the shrunk rate-limit wait allows under load): ${resweeps}`,
        ],
    };
}

function compare(afterCall: number, run: ProductRun, baseline: ProductRun): PointResult {
    const writes = (product: ProductRun) => product.calls.filter(isWrite).length;
    const reads = (product: ProductRun) => product.calls.length - writes(product);
    const before = byOperation(baseline.calls);
    const after = byOperation(run.calls);
    const extraByOperation = [...new Set([...Object.keys(before), ...Object.keys(after)])]
        .map((operation) => [operation, (after[operation] ?? 0) - (before[operation] ?? 0)] as const)
        .filter(([, extra]) => extra !== 0)
        .map(([operation, extra]) => `${operation} ${extra > 0 ? "+" : ""}${extra}`)
        .join(", ");
    return {
        afterCall,
        extraReads: reads(run) - reads(baseline),
        extraWrites: writes(run) - writes(baseline),
        extraByOperation: extraByOperation || "none",
        outcome: run.row.state === "done" ? "done" : `${run.row.state} after ${run.row.recoveries} recoveries`,
        attempts: run.row.attempt,
        queuedToDoneSeconds: run.queuedToDoneMs / 1000,
    };
}
