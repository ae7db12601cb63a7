import type { JobKey, JobRow } from "../../src/shared/jobs/JobRow";
import type { CallLogEntry } from "../smartsheet-sim";
import type { BenchStack, ProductRequest } from "./benchStack";

/** One product followed from its intake row to the end of its job. */
export interface ProductRun {
    key: JobKey;
    row: JobRow;
    /** The product's Smartsheet calls, as the simulator logged them. */
    calls: CallLogEntry[];
    /** From the sweep's `Queued` reaching Smartsheet to the job row's last progress (done). */
    queuedToDoneMs: number;
    /** Whether the host was killed at the asked-for call (a run can end before reaching it). */
    interrupted: boolean;
    /** Intake sweeps fired until one made the job: more than 1 when a sweep failed for its site. */
    sweeps: number;
}

export interface RunOptions {
    /** SIGKILL the host as soon as the simulator has answered this many of the product's calls, then start it again. */
    killAtCall?: number;
    timeoutMs: number;
}

/** Smartsheet is quiet this long after a job ended: a duplicate of a finished step would have called by then. */
const QUIET_MS = 1_500;
const WATCH_MS = 5;

/**
 * Orders one product (an approved intake row), fires the sweep and follows the job until it is
 * done or parked and Smartsheet has gone quiet. The product's calls are the ones logged after the
 * sweep's status write: that write (`Queued`) is the sweep's last call and is made before the
 * job's message is sent, so nothing of the product can come before it. Only one product may be
 * in flight on the stack.
 */
export async function runProduct(stack: BenchStack, request: ProductRequest, options: RunOptions): Promise<ProductRun> {
    const [key] = await stack.addRequests([request]);
    stack.sim.core.resetCalls();
    const deadline = Date.now() + options.timeoutMs;
    const sweeping = sweepUntilJobExists(stack, key!, deadline);
    sweeping.catch(() => undefined); // awaited below; never an unhandled rejection while the loop throws
    let interrupted = false;
    let row: JobRow | undefined;
    let lastRead = 0;
    for (;;) {
        const calls = productCalls(stack);
        if (options.killAtCall !== undefined && !interrupted && calls && calls.product.length >= options.killAtCall) {
            await stack.host.kill();
            interrupted = true;
            await stack.host.start();
        }
        if (Date.now() - lastRead >= 100) {
            lastRead = Date.now();
            row = await stack.job(key!);
            if (row && (row.state === "done" || row.state === "parked") && calls) break;
        }
        if (Date.now() > deadline) {
            throw new Error(`Product ${request.code} was not done after ${options.timeoutMs / 1000} s (job ${row ? `${row.state}, stage ${row.stage}` : "not created"}).`);
        }
        await new Promise((resolve) => setTimeout(resolve, WATCH_MS));
    }
    const sweeps = await sweeping;
    await quiet(stack);
    const { queuedAt, product } = productCalls(stack)!;
    row = (await stack.job(key!))!;
    return { key: key!, row, calls: product, queuedToDoneMs: Date.parse(row.lastProgressAt) - queuedAt, interrupted, sweeps };
}

/**
 * Fires the intake sweep, and again each time one ends without having made the job, as the
 * sweep's timer would in production: a sweep whose site failed (a request the rate limit would
 * hold past the shrunk retry time while thirteen stacks start at once, say) makes nothing, and
 * the bench's own timer never fires. Returns the number of sweeps fired.
 */
async function sweepUntilJobExists(stack: BenchStack, key: JobKey, deadline: number): Promise<number> {
    for (let sweeps = 1; ; sweeps++) {
        let ended = false;
        stack.host.nextLine(/Executed 'Functions\.intakeSweep'/, Math.max(1, deadline - Date.now())).then(
            () => (ended = true),
            () => (ended = true),
        );
        await stack.host.fire("intakeSweep");
        for (;;) {
            if (await stack.job(key)) return sweeps;
            if (Date.now() > deadline) return sweeps;
            if (ended) break;
            await new Promise((resolve) => setTimeout(resolve, 200));
        }
    }
}

/** The calls after the sweep's status write, or `undefined` while the sweep has not written it. */
function productCalls(stack: BenchStack): { queuedAt: number; product: CallLogEntry[] } | undefined {
    const log = stack.callLog();
    const statusWrite = `/sheets/${stack.intakeSheetId}/rows`;
    const queued = log.findIndex((call) => call.op === "updateRows" && call.path.endsWith(statusWrite));
    if (queued < 0) return undefined;
    return { queuedAt: Date.parse(log[queued]!.at), product: log.slice(queued + 1) };
}

/** Resolves once the simulator has heard no call for `quietMs`. */
export async function quiet(stack: BenchStack, quietMs = QUIET_MS): Promise<void> {
    let count = stack.callLog().length;
    let since = Date.now();
    while (Date.now() - since < quietMs) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        const now = stack.callLog().length;
        if (now !== count) {
            count = now;
            since = Date.now();
        }
    }
}

export function isWrite(call: CallLogEntry): boolean {
    return call.method === "POST" || call.method === "PUT" || call.method === "DELETE";
}

/** Calls per operation, most frequent first. */
export function byOperation(calls: readonly CallLogEntry[]): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const call of calls) counts[call.op] = (counts[call.op] ?? 0) + 1;
    return Object.fromEntries(Object.entries(counts).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])));
}

/** `copySheet 7, updateRows 4, …` */
export function describeOperations(calls: readonly CallLogEntry[]): string {
    return Object.entries(byOperation(calls))
        .map(([operation, count]) => `${operation} ${count}`)
        .join(", ");
}
