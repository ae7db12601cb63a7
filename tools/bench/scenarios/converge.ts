import type { JobKey, JobRow } from "../../../src/shared/jobs/JobRow";
import type { CallLogEntry } from "../../smartsheet-sim";
import { BenchStack, productRequests, SMARTSHEET_LATENCY_MS } from "../benchStack";
import type { Measured } from "../figures";
import { byOperation, quiet } from "../productRun";
import { COMPRESSED_PRODUCTION, COMPRESSED_RATE_LIMIT } from "../timings";

/** New approvals during the convergence (and the same without it): one every 4 s, a little less than one product's own time. */
const APPROVAL_INTERVAL_MS = 4_000;
/** The first approval this long after the convergence was asked for. */
const FIRST_APPROVAL_MS = 1_000;
/** The baseline's approvals: as many as during the convergence, at most this many (a convergence of 200 lasts minutes). */
const MAX_BASELINE_APPROVALS = 12;
/** At least one approval in each arm, however short the convergence (the first comes 1 s after the apply). */
const MIN_APPROVALS = 1;
/** Smartsheet calls a product's convergence is allowed in the deadline (plan reads, writes, audit reads: about 30), three times over at the full rate. */
const DEADLINE_CALLS_PER_PRODUCT = 3 * 35;
const DEADLINE_MARGIN_MS = 120_000;
const PROVISION_CALLS_PER_PRODUCT = 3 * 26;
const SETTLE_TIMEOUT_MS = 120_000;
/** The most products planned in one `GET /api/converge/plan`; more are planned product by product. */
const WHOLE_PLAN_MOST = 60;

/** The write operation each kind of planned change is carried out with (the summary fields' in bulk, per sheet). */
const OPERATION_OF: Record<string, string> = {
    addColumn: "addColumn",
    updateColumn: "updateColumn",
    deleteColumn: "deleteColumn",
    addSummaryField: "addSummaryFields",
    updateSummaryField: "updateSummaryFields",
    deleteSummaryField: "deleteSummaryFields",
    renameSheet: "updateSheet",
    addReferences: "createCrossSheetReference",
};

/** The part of `GET /api/converge/plan`'s answer the bench reads. */
interface PlanAnswer {
    targets: Array<{ site: string; version: string }>;
    total: { products: number; changes: number; changesByKind: Record<string, number>; conflicts: number; calls: { total: number; byOperation: Record<string, number> } };
    readCalls: { total: number; byOperation: Record<string, number> };
}

interface Approval {
    key: JobKey;
    approvedAt: number;
}

interface ApprovalTimes {
    /** Approval (the answer to the Approved write) → the job row's last progress once done, ms. */
    approvalToDoneMs: number[];
    /** The job's own time: its row's createdAt (the sweep that made it began) → done, ms. */
    ownMs: number[];
}

/**
 * Issue #22's figures: `products` products provisioned through the app at the rate limit (the
 * rate-limit scenarios' compressed window, latencies and timings), then the template changed as
 * the end-to-end test changes it (a picklist column added to Risk Register, the Change Log's
 * Approval Status formula fixed, a summary field added to Specifications) and the convergence
 * planned (`GET /api/converge/plan`, its `total.calls`) and applied (`POST /api/converge`),
 * while new approvals arrive one every 4 s, each followed by a fired intake sweep (standing for
 * the webhook). The convergence is over when every product's row is on the target version, its
 * convergence done. Its calls are the simulator's log entries on the converged products' own
 * sheets and folders (the new products' calls are on theirs). Then, on the same stack and without
 * a convergence, as many approvals again at the same pace: the baseline of approval → done.
 */
export async function converge(storage: string, products: number): Promise<Measured> {
    const stack = await BenchStack.start({
        storage,
        settings: COMPRESSED_PRODUCTION,
        simulator: { latencyMs: SMARTSHEET_LATENCY_MS, rateLimit: COMPRESSED_RATE_LIMIT },
    });
    const perSecond = COMPRESSED_RATE_LIMIT.requests / (COMPRESSED_RATE_LIMIT.windowMs / 1000);
    try {
        // The products to converge, provisioned by the app, drained at the rate limit.
        const provisionStarted = Date.now();
        const keys = await stack.addRequests(productRequests("CV", products));
        // The new approvals' requests, typed in now (unapproved) so that approving one is a single write.
        const pool = await stack.addRequests(productRequests("NEW", products + 40, false));
        await stack.sweep();
        const provisioned = await stack.waitUntilSettled(keys, (products * PROVISION_CALLS_PER_PRODUCT * 1000) / perSecond + DEADLINE_MARGIN_MS);
        const notDone = provisioned.filter((row) => row.state !== "done");
        if (notDone.length > 0) throw new Error(`${notDone.length} of ${products} products to converge did not end done (e.g. ${notDone[0]!.productCode}: ${notDone[0]!.state}, ${notDone[0]!.parkReason ?? notDone[0]!.lastError ?? ""}).`);
        const provisionSeconds = (Date.now() - provisionStarted) / 1000;
        await quiet(stack);

        await changeTemplate(stack);
        const planned = await plan(stack, provisioned.map((row) => row.productCode));
        if (planned.total.products !== products || planned.total.conflicts !== 0) {
            throw new Error(`The dry run planned ${planned.total.products} products with ${planned.total.conflicts} conflicts; expected ${products} and none.`);
        }
        const target = planned.targets[0]!.version;

        stack.sim.core.resetCalls();
        const applyStarted = Date.now();
        const applied = await stack.api("POST", "converge", { by: "bench" });
        if (applied.status !== 202) throw new Error(`POST /api/converge answered ${applied.status}: ${await applied.text()}`);
        const deadline = applyStarted + (products * DEADLINE_CALLS_PER_PRODUCT * 1000) / perSecond + DEADLINE_MARGIN_MS;
        let ended = false;
        const converging = waitUntilConverged(stack, keys, target, deadline).finally(() => (ended = true));
        converging.catch(() => undefined); // awaited below
        const during: Approval[] = [];
        for (let next = applyStarted + FIRST_APPROVAL_MS; !ended || during.length < MIN_APPROVALS; next += APPROVAL_INTERVAL_MS) {
            await sleepUntil(next, () => ended && during.length >= MIN_APPROVALS);
            if (ended && during.length >= MIN_APPROVALS) break;
            const key = pool[during.length];
            if (!key) throw new Error(`The convergence outlasted ${pool.length} approvals.`);
            during.push({ key, approvedAt: await stack.approve(key) });
            await stack.host.fire("intakeSweep");
        }
        const converged = await converging;
        const convergedAt = Math.max(...converged.map((row) => Date.parse(row.convergence!.lastProgressAt)));
        // Approvals made while the convergence ran (the first always counts, however short it was).
        const whileConverging = during.filter((approval, index) => index === 0 || approval.approvedAt < convergedAt);
        const duringTimes = await timesOf(stack, whileConverging);
        await timesOf(stack, during);
        await quiet(stack);
        const log = stack.callLog();

        // The baseline: as many approvals at the same pace, nothing converging.
        const baseline: Approval[] = [];
        for (let index = 0, next = Date.now(); index < Math.min(whileConverging.length, MAX_BASELINE_APPROVALS); index++, next += APPROVAL_INTERVAL_MS) {
            await sleepUntil(next, () => false);
            const key = pool[during.length + index]!;
            baseline.push({ key, approvedAt: await stack.approve(key) });
            await stack.host.fire("intakeSweep");
        }
        const baselineTimes = await timesOf(stack, baseline);

        return measured({ products, planned, converged, log, applyStarted, convergedAt, duringTimes, baselineTimes, provisionSeconds });
    } finally {
        await stack.stop();
    }
}

/** The end-to-end test's template change (test/e2e/convergence.test.ts), through Smartsheet's REST API, a second after the products' analysis. */
async function changeTemplate(stack: BenchStack): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 1_050 - (Date.now() % 1_000)));
    const sheet = (name: string) => {
        const state = stack.sim.core.state();
        const found = state.sheets.find((candidate) => candidate.folderId === state.templateFolderId && candidate.name === name);
        if (!found) throw new Error(`The simulator's template folder has no sheet "${name}".`);
        return found;
    };
    await stack.rest("POST", `sheets/${sheet("Risk Register").id}/columns`, { title: "Severity", type: "PICKLIST", options: ["Low", "Medium", "High"], index: 2 });
    const changeLog = sheet("Change Log");
    const status = changeLog.columns.find((column) => column.title === "Approval Status");
    if (!status) throw new Error('The template\'s Change Log has no "Approval Status" column.');
    await stack.rest("PUT", `sheets/${changeLog.id}/columns/${status.id}`, { formula: '=IF(COUNTIF({Approvals Decision}, "Pending") > 0, "Awaiting approval", "All approved")' });
    await stack.rest("POST", `sheets/${sheet("Specifications").id}/summary/fields`, [{ title: "Review Cycle", type: "TEXT_NUMBER", objectValue: "Quarterly" }]);
}

/**
 * The dry run, `GET /api/converge/plan`: read-only (it reads each product's copies). A fleet
 * larger than `WHOLE_PLAN_MOST` is planned product by product (`?product=`, then `&to=` the
 * version the first analysed) and the totals summed, as the README advises: a whole plan reads
 * about 11 calls a product at the token's pace, and 200 products' plan outlasts the compressed
 * `functionTimeout` (2.5 min; the bench's first run with 200 got a 500 with no body).
 */
async function plan(stack: BenchStack, codes: readonly string[]): Promise<PlanAnswer> {
    const ask = async (query: string) => {
        const answer = await stack.api("GET", `converge/plan${query}`);
        if (answer.status !== 200) throw new Error(`GET /api/converge/plan${query} answered ${answer.status}: ${await answer.text()}`);
        return (await answer.json()) as PlanAnswer;
    };
    if (codes.length <= WHOLE_PLAN_MOST) return ask("");
    const first = await ask(`?product=${encodeURIComponent(codes[0]!)}`);
    const to = first.targets[0]!.version;
    const plans = [first];
    for (const code of codes.slice(1)) plans.push(await ask(`?product=${encodeURIComponent(code)}&to=${to}`));
    const sum = (counts: Array<Record<string, number>>) => {
        const total: Record<string, number> = {};
        for (const each of counts) for (const [name, count] of Object.entries(each)) total[name] = (total[name] ?? 0) + count;
        return total;
    };
    return {
        targets: first.targets,
        total: {
            products: plans.reduce((total, each) => total + each.total.products, 0),
            changes: plans.reduce((total, each) => total + each.total.changes, 0),
            changesByKind: sum(plans.map((each) => each.total.changesByKind)),
            conflicts: plans.reduce((total, each) => total + each.total.conflicts, 0),
            calls: { total: plans.reduce((total, each) => total + each.total.calls.total, 0), byOperation: sum(plans.map((each) => each.total.calls.byOperation)) },
        },
        readCalls: { total: plans.reduce((total, each) => total + each.readCalls.total, 0), byOperation: sum(plans.map((each) => each.readCalls.byOperation)) },
    };
}

/** Polls the products' rows until each is on `target` with its convergence done; a parked one fails the scenario. */
async function waitUntilConverged(stack: BenchStack, keys: readonly JobKey[], target: string, deadline: number): Promise<JobRow[]> {
    for (;;) {
        const rows = (await Promise.all(keys.map((key) => stack.job(key)))) as JobRow[];
        const parked = rows.find((row) => row.convergence?.state === "parked" || row.state !== "done");
        if (parked) throw new Error(`${parked.productCode} did not converge: ${parked.state}, convergence ${parked.convergence?.state ?? "none"} (${parked.convergence?.parkReason ?? parked.lastError ?? ""}).`);
        const open = rows.filter((row) => row.blueprintVersion !== target || row.convergence?.state !== "done");
        if (open.length === 0) return rows;
        if (Date.now() > deadline) throw new Error(`${open.length} of ${keys.length} products were not converged by the deadline (e.g. ${open[0]!.productCode}: ${open[0]!.convergence?.state ?? "not claimed"}).`);
        await new Promise((resolve) => setTimeout(resolve, 500));
    }
}

/** Waits for each approval's job to end done, and answers its times. */
async function timesOf(stack: BenchStack, approvals: readonly Approval[]): Promise<ApprovalTimes> {
    const deadline = Date.now() + SETTLE_TIMEOUT_MS;
    for (;;) {
        const rows = await Promise.all(approvals.map(({ key }) => stack.job(key)));
        if (rows.every((row) => row && row.state !== "queued" && row.state !== "running")) {
            const notDone = rows.filter((row) => row!.state !== "done");
            if (notDone.length > 0) throw new Error(`${notDone.length} new products did not end done (e.g. ${notDone[0]!.productCode}: ${notDone[0]!.state}, ${notDone[0]!.parkReason ?? notDone[0]!.lastError ?? ""}).`);
            const doneAt = rows.map((row) => Date.parse(row!.lastProgressAt));
            return {
                approvalToDoneMs: doneAt.map((done, index) => done - approvals[index]!.approvedAt),
                ownMs: rows.map((row, index) => doneAt[index]! - Date.parse(row!.createdAt)),
            };
        }
        if (Date.now() > deadline) throw new Error(`New products had not ended ${SETTLE_TIMEOUT_MS / 1000} s after their approvals (${rows.filter((row) => !row).length} without a job).`);
        await new Promise((resolve) => setTimeout(resolve, 250));
    }
}

async function sleepUntil(at: number, stop: () => boolean): Promise<void> {
    while (Date.now() < at && !stop()) await new Promise((resolve) => setTimeout(resolve, Math.min(100, at - Date.now())));
}

interface Observed {
    products: number;
    planned: PlanAnswer;
    converged: JobRow[];
    log: CallLogEntry[];
    applyStarted: number;
    convergedAt: number;
    duringTimes: ApprovalTimes;
    baselineTimes: ApprovalTimes;
    provisionSeconds: number;
}

function measured(observed: Observed): Measured {
    const { products, planned, converged, log, applyStarted, convergedAt, duringTimes, baselineTimes } = observed;
    const sheets = new Set(converged.flatMap((row) => Object.values(row.copies).map((copy) => String(copy.sheetId))));
    const folders = new Set(converged.map((row) => String(row.folderId)));
    const ours = log.filter((call) => {
        const sheet = /\/sheets\/(\d+)/.exec(call.path)?.[1];
        const folder = /\/folders\/(\d+)/.exec(call.path)?.[1];
        return (sheet !== undefined && sheets.has(sheet)) || (folder !== undefined && folders.has(folder));
    });
    const answered = ours.filter((call) => call.status !== 429);
    const writes = answered.filter((call) => call.method !== "GET");
    const reads = answered.filter((call) => call.method === "GET");
    const made = byOperation(writes);
    const perKind: Record<string, number> = {};
    for (const [kind, changes] of Object.entries(planned.total.changesByKind)) {
        const operation = OPERATION_OF[kind];
        if (operation !== undefined && changes > 0) perKind[kind] = (made[operation] ?? 0) / changes;
    }
    const seconds = (convergedAt - applyStarted) / 1000;
    const inWindow = log.filter((call) => call.status !== 429 && Date.parse(call.at) >= applyStarted && Date.parse(call.at) <= convergedAt);
    const perSecond = inWindow.length / seconds;
    const median = (values: readonly number[]) => {
        const sorted = [...values].sort((a, b) => a - b);
        const middle = Math.floor(sorted.length / 2);
        return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
    };
    const slowdown = median(duringTimes.approvalToDoneMs) / median(baselineTimes.approvalToDoneMs);
    const s = (ms: number) => (ms / 1000).toFixed(1);
    const list = (values: readonly number[]) => values.map(s).join(" ");
    const share429 = ours.length === 0 ? 0 : ours.filter((call) => call.status === 429).length / ours.length;
    return {
        figures: {
            ...(perKind.addColumn !== undefined ? { convergeCallsPerAddColumn: perKind.addColumn } : {}),
            ...(perKind.updateColumn !== undefined ? { convergeCallsPerUpdateColumn: perKind.updateColumn } : {}),
            ...(perKind.addSummaryField !== undefined ? { convergeCallsPerAddSummaryField: perKind.addSummaryField } : {}),
            convergePlannedEqualsMade: planned.total.calls.total === 0 ? (writes.length === 0 ? 1 : Infinity) : writes.length / planned.total.calls.total,
            convergeReadsPerProduct: reads.length / products,
            convergeProductsPerMinute: products / (seconds / 60),
            convergeProvisioningSlowdown: slowdown,
        },
        details: {
            convergeProducts: products,
            convergeSeconds: seconds,
            convergeProvisionSeconds: observed.provisionSeconds,
            convergeChangesByKind: planned.total.changesByKind,
            convergeCallsPerChangeByKind: perKind,
            convergePlannedCalls: planned.total.calls.total,
            convergePlannedByOperation: planned.total.calls.byOperation,
            convergeMadeWriteCalls: writes.length,
            convergeMadeByOperation: made,
            convergeReadsByOperation: byOperation(reads),
            convergeDryRunReadCalls: planned.readCalls.total,
            convergeShare429: share429,
            convergeRequestsPerSecond: perSecond,
            convergeApprovalToDoneMs: duringTimes.approvalToDoneMs,
            convergeBaselineApprovalToDoneMs: baselineTimes.approvalToDoneMs,
            convergeOwnMs: duringTimes.ownMs,
            convergeBaselineOwnMs: baselineTimes.ownMs,
        },
        notes: [
            `convergence: ${products} products (provisioned in ${observed.provisionSeconds.toFixed(0)} s at the rate limit) converged in ${seconds.toFixed(1)} s ` +
                `(${(products / (seconds / 60)).toFixed(1)} a minute compressed, ${(products / ((seconds * 4) / 60)).toFixed(1)} in production's time); ` +
                `the stack's requests meanwhile (new products' included) ${perSecond.toFixed(1)} a second (the limit: ${perSecondLimit()} a second over ${COMPRESSED_RATE_LIMIT.windowMs / 1000} s); the converged products' calls ${(share429 * 100).toFixed(2)} % answered 429`,
            `convergence: planned ${planned.total.calls.total} write calls (${describe(planned.total.calls.byOperation)}) for ${planned.total.changes} changes (${describe(planned.total.changesByKind)}); ` +
                `made ${writes.length} (${describe(made)}); reads ${reads.length} (${describe(byOperation(reads))}), ${(reads.length / products).toFixed(1)} a product; the dry run read ${planned.readCalls.total}`,
            `convergence: provisioning approval → done while converging (${duringTimes.approvalToDoneMs.length}, one every ${APPROVAL_INTERVAL_MS / 1000} s) ${list(duringTimes.approvalToDoneMs)} s, ` +
                `median ${s(median(duringTimes.approvalToDoneMs))}; without ${list(baselineTimes.approvalToDoneMs)} s, median ${s(median(baselineTimes.approvalToDoneMs))}; ` +
                `own time (queued → done) medians ${s(median(duringTimes.ownMs))} and ${s(median(baselineTimes.ownMs))} s`,
        ],
    };
}

function perSecondLimit(): number {
    return COMPRESSED_RATE_LIMIT.requests / (COMPRESSED_RATE_LIMIT.windowMs / 1000);
}

function describe(counts: Record<string, number>): string {
    return Object.entries(counts)
        .map(([name, count]) => `${name} ${count}`)
        .join(", ");
}
