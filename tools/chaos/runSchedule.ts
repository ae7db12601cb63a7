import { execFile } from "node:child_process";
import path from "node:path";
import { intakeWebhooks, perform, ScheduleContext, seedIntake, sleep, typeRequestsAtRest } from "./actions";
import { audit, type ApprovalSnapshot, type AuditedOutput, type AuditResult } from "./auditor";
import { APP_DIR, HarnessError } from "./hostProcess";
import { MAX_CLOCK_SKEW_MS, OUTSIDE_REFERENCE, SAFETY_NET_INTERVAL_MS, type Plan, type Step } from "./plan";
import { LIST_MARKER } from "./jobsCliListsMarker";
import { sweepUntilClean } from "./owedStatusSweep";
import { FUNCTION_KEY, ScheduleStack } from "./stack";

/** After the plan: sweep and reaper runs, then this long at most for every job to come to rest. */
const SETTLE_DEADLINE_MS = 60_000;
/** All jobs at rest and no Smartsheet call for this long: nothing is moving any more. */
const QUIET_MS = 1_500;
/** How long the host may take from its start to an enabled intake webhook (its keeper runs at start-up). */
const WEBHOOK_START_DEADLINE_MS = 15_000;
/** Sweeps at rest that may still find a request before a request without a job counts as lost. */
const SWEEPS_FOR_A_WAITING_REQUEST = 3;
/** The SDK backs off 2 s after a 429, doubling per retry. */
const RATE_LIMIT_BACKOFF_MS = 2_000;
/** One sweep interval in compressed time: a sweep ends within functionTimeout (4 s), so by then every approval is answered. */
const SWEEP_INTERVAL_MS = 4_000;
const JOBS_CLI_LISTS = path.join(APP_DIR, "dist", "tools", "chaos", "jobsCliLists.js");
/** The states whose jobs carry customer text the CLI prints (active jobs are listed without --state). */
const CLI_LISTS = [[], ["--state", "rejected"], ["--state", "parked"], ["--state", "done"]] as const;

export type ScheduleOutcome =
    | { kind: "audited"; plan: Plan; result: AuditResult; journal: string[]; hostLog: string[]; seconds: number }
    | { kind: "harnessError"; plan: Plan; error: string; journal: string[]; seconds: number };

/** Runs one plan against a fresh stack on `sharedStorage`, waits for rest, and audits it. */
export async function runSchedule(plan: Plan, sharedStorage: string): Promise<ScheduleOutcome> {
    const started = Date.now();
    const seconds = () => (Date.now() - started) / 1000;
    let stack: ScheduleStack | undefined;
    let context: ScheduleContext | undefined;
    try {
        const running = await ScheduleStack.start(plan, sharedStorage);
        stack = running;
        const schedule = new ScheduleContext(running, plan);
        context = schedule;
        if (plan.webhooks) await waitForIntakeWebhook(schedule);
        await seedIntake(schedule);
        await playSteps(schedule);
        if (schedule.harnessErrors.length > 0) throw new HarnessError(schedule.harnessErrors.join("; "));
        await running.simAdmin("POST", "faults", { rules: [] });
        if (plan.webhooks) await running.simAdmin("POST", "webhookFaults", { rules: [] });
        running.webhook.heal();
        schedule.note("faults cleared (locked rows and unreadable statuses stay)");
        running.ensureHealthy();
        const approvals = await comeToRest(schedule, lateWritesLandBy(plan, Date.now(), await lastRateLimitAt(running)));
        if (schedule.lockedRows.size > 0) await sweepOwedStatuses(schedule);
        const approvalsAtRest = plan.webhooks ? await approveAtRest(schedule) : undefined;
        if (plan.convergence) await converge(schedule);
        const outputs = [...(await jobsCliOutputs(running)), ...running.hosts.map((host, index) => ({ source: `host ${index + 1} log`, text: host.allLines.join("\n") }))];
        const skewMs = plan.peer?.clockOffsetMs ?? 0;
        const result = await audit({
            simAdminUrl: running.sim.adminUrl,
            storageConnectionString: running.storageConnectionString,
            jobsTable: running.jobsTable,
            requests: plan.products.map((product, index) => {
                const rowId = schedule.rowIds[index]!;
                return {
                    rowId,
                    code: product.code,
                    valid: validAtRest(plan, schedule, index),
                    deleted: schedule.deletedRows.has(rowId),
                    withdrawn: schedule.withdrawnRows.has(rowId),
                    locked: schedule.lockedRows.has(rowId),
                    statusUnreadable: schedule.statusUnreadableRows.has(rowId),
                    ...(product.typedAtRest ? { typedAtRest: true } : {}),
                };
            }),
            alerts: running.alerts,
            // A template formula reaching an earlier product's sheet parks every product copied after it, rightly.
            permanentFaultsPlanned:
                plan.steps.some(({ action }) => action.kind === "faults" && action.rules.some((rule) => rule.kind === "error1004")) ||
                schedule.outsideReferences.some((reference) => reference.variant === "otherProduct"),
            outsideReferences: schedule.outsideReferences.map((reference) => ({ ...reference, name: OUTSIDE_REFERENCE.name })),
            rateLimit: { ...running.rateLimit, tokens: [running.appToken] },
            outputs,
            ...(running.peer && Math.abs(skewMs) > MAX_CLOCK_SKEW_MS ? { skewedHost: { source: `host ${running.hosts.indexOf(running.peer) + 1} log`, offsetMs: skewMs } } : {}),
            ...(approvals ? { approvals } : {}),
            ...(plan.convergence ? { convergence: convergenceAudited(schedule) } : {}),
            ...(plan.webhooks
                ? {
                      webhooks: {
                          intakeSheetId: Number(running.settings.INTAKE_SHEET_ID),
                          appToken: running.appToken,
                          callbackHost: new URL(running.host.url).host,
                          forged: schedule.forgedCallbacks,
                          approvedAtRest: approvalsAtRest ?? [],
                          safetyNetIntervalMs: SAFETY_NET_INTERVAL_MS,
                      },
                  }
                : {}),
        });
        const hostLog = running.hosts.flatMap((host, index) => host.logs.map((line) => (running.peer ? `[host ${index + 1}] ${line}` : line)));
        return { kind: "audited", plan, result, journal: schedule.journal, hostLog, seconds: seconds() };
    } catch (error) {
        const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        return { kind: "harnessError", plan, error: text, journal: context?.journal ?? [], seconds: seconds() };
    } finally {
        await stack?.stop();
    }
}

/** Starts every step at its time; steps overlap (a sweep may run while the host is being killed). */
async function playSteps(context: ScheduleContext, steps: readonly Step[] = context.plan.steps): Promise<void> {
    const start = Date.now();
    const running: Array<Promise<void>> = [];
    for (const step of [...steps].sort((a, b) => a.atMs - b.atMs)) {
        await sleep(Math.max(0, start + step.atMs - Date.now()));
        running.push(perform(context, step.action));
    }
    await Promise.all(running);
}

/** How long a convergence may take, from its faults cleared, to come to rest (a step's transient rounds pause 4 s, 8 s, …). */
const CONVERGENCE_DEADLINE_MS = 90_000;
/** How many times a person unparks one product parked on its convergence. */
const UNPARKS_PER_PRODUCT = 2;

/**
 * The products, done and at rest, brought to a changed template while things break: the
 * customers' edits and the template change first, then the apply and the plan's chaos from it,
 * then — faults cleared — until every product done at the apply is on a version the applies
 * answered, or parked on its convergence (a person having unparked it with the plan's decision,
 * as often as they would), and Smartsheet is quiet.
 */
async function converge(context: ScheduleContext): Promise<void> {
    const { stack } = context;
    const convergence = context.plan.convergence!;
    for (const action of convergence.before) await perform(context, action);
    const done = (await context.jobRows()).filter((row) => row.state === "done").map((row) => Number(row.rowKey));
    context.convergence.convergedRows.push(...done);
    context.note(`converging: ${done.length} products done (rows ${done.join(", ")})`);
    await playSteps(context, convergence.steps);
    if (context.harnessErrors.length > 0) throw new HarnessError(context.harnessErrors.join("; "));
    await stack.simAdmin("POST", "faults", { rules: [] });
    context.note("convergence faults cleared");
    stack.ensureHealthy();
    const lateBy = lateWritesLandBy({ ...context.plan, steps: convergence.steps }, Date.now(), await lastRateLimitAt(stack));
    const targets = context.convergence.targets;
    const unparks = new Map<string, number>();
    const deadline = Date.now() + CONVERGENCE_DEADLINE_MS;
    let lastCallCount = -1;
    let quietSince = Date.now();
    while (Date.now() < deadline) {
        await sleep(500);
        const calls = await stack.workCalls();
        if (calls !== lastCallCount) [lastCallCount, quietSince] = [calls, Date.now()];
        const rows = (await context.jobRows()).filter((row) => done.includes(Number(row.rowKey)));
        let settled = targets.size > 0;
        for (const row of rows) {
            const run = convergenceOf(row);
            const key = `${String(row.partitionKey)}-${String(row.rowKey)}`;
            if (run?.state === "parked" && convergence.decision && (unparks.get(key) ?? 0) < UNPARKS_PER_PRODUCT && Date.now() >= lateBy) {
                unparks.set(key, (unparks.get(key) ?? 0) + 1);
                await perform(context, { kind: "unparkDecision", decision: convergence.decision, jobKey: key });
                settled = false;
                continue;
            }
            const converged = run?.state === "done" && targets.has(String(row.blueprintVersion));
            const parked = run?.state === "parked";
            if (!converged && !parked) settled = false;
        }
        if (settled && Date.now() >= lateBy && Date.now() - quietSince >= QUIET_MS) {
            context.note("convergence at rest");
            return;
        }
    }
    context.note(`convergence not at rest after ${CONVERGENCE_DEADLINE_MS} ms`);
}

function convergenceOf(row: Record<string, unknown>): { state?: string; to?: string } | undefined {
    if (typeof row.convergence !== "string") return undefined;
    try {
        return JSON.parse(row.convergence) as { state?: string; to?: string };
    } catch {
        return undefined;
    }
}

/** What the auditor needs of the schedule's convergence. */
function convergenceAudited(context: ScheduleContext) {
    const record = context.convergence;
    return {
        targets: [...record.targets],
        applies: record.applies,
        changes: [...record.changes],
        changesAgain: [...record.changesAgain],
        customerEdits: record.customerEdits,
        decisions: Object.fromEntries(record.decisions),
        convergedRows: [...record.convergedRows],
    };
}

/**
 * A write the plan delayed past the client's timeout lands up to its delay after the faults were
 * cleared; a call refused with 429 is sent again after the SDK's back-off.
 */
function lateWritesLandBy(plan: Plan, clearedAt: number, lastRateLimit: number | undefined): number {
    const rules = plan.steps.flatMap((step) => (step.action.kind === "faults" ? step.action.rules : []));
    const longestDelay = Math.max(0, ...rules.filter((rule) => rule.kind === "delay").map((rule) => rule.delayMs));
    const longestBurst = Math.max(0, ...rules.filter((rule) => rule.kind === "rate429").map((rule) => rule.times));
    const backoff = longestBurst > 0 && lastRateLimit !== undefined ? lastRateLimit + RATE_LIMIT_BACKOFF_MS * 2 ** (longestBurst - 1) : 0;
    return Math.max(clearedAt + longestDelay, backoff) + 500;
}

async function lastRateLimitAt(stack: ScheduleStack): Promise<number | undefined> {
    const calls = (await stack.simAdmin("GET", "calls")) as { log: Array<{ at: string; fault?: string }> };
    const times = calls.log.filter((call) => call.fault === "rate429").map((call) => Date.parse(call.at));
    return times.length ? Math.max(...times) : undefined;
}

/**
 * Fires the sweep and the reaper a few times, then waits until every job is at rest (done,
 * rejected, or parked and alerted), every request that should have a job has one, late writes have landed
 * and Smartsheet has been quiet for a while — or the deadline passes (the auditor then finds
 * what is still open).
 */
async function comeToRest(context: ScheduleContext, lateWritesBy: number): Promise<ApprovalSnapshot | undefined> {
    const { stack } = context;
    for (let round = 0; round < 3; round += 1) {
        // The second host sweeps too (first round): a host whose clock is off spends budget, reads the storage clock and warns.
        const sweepers = round === 0 ? stack.hosts : [stack.host];
        await Promise.all([...sweepers.map((host) => host.fire("intakeSweep")), stack.host.fire("reaper")]).catch((error: Error) => context.note(`endgame fire failed: ${error.message}`));
        await sleep(700);
    }
    const deadline = Date.now() + SETTLE_DEADLINE_MS;
    let lastCallCount = -1;
    let quietSince = Date.now();
    let lastSweep = Date.now();
    let sweepsForWaiting = 0;
    let answerSweepAt: number | undefined;
    let approvals: ApprovalSnapshot | undefined;
    while (Date.now() < deadline) {
        await sleep(300);
        const calls = await stack.workCalls();
        if (calls !== lastCallCount) {
            lastCallCount = calls;
            quietSince = Date.now();
        }
        const rows = await context.jobRows();
        // A parked job is at rest once ops has been told (by its worker, or by the reaper after the worker's window).
        const atRest = rows.every(
            (row) =>
                row.state === "done" ||
                row.state === "rejected" ||
                (row.state === "parked" && row.parkAlerted === true) ||
                context.statusUnreadableRows.has(Number(row.rowKey)),
        );
        if (answerSweepAt === undefined && Date.now() >= lateWritesBy) {
            // Once nothing late can land: one more sweep that ends with every site swept (fired again after a pause when
            // the budget refused it, as the timer would come round: seed 26120302, schedule 64), and one sweep interval
            // after it every approval must be answered.
            const swept = await sweepUntilClean(stack.host).catch((error: Error) => {
                context.note(`answer sweep failed to fire: ${error.message}`);
                return undefined;
            });
            if (swept && !swept.clean) context.note(`the answer sweep did not end clean in ${swept.fired} tries`);
            answerSweepAt = Date.now();
        } else if (answerSweepAt !== undefined && !approvals && Date.now() - answerSweepAt >= SWEEP_INTERVAL_MS) {
            approvals = { intake: (await context.simView()).sheets.find((sheet) => sheet.id === Number(stack.settings.INTAKE_SHEET_ID)), jobRowIds: rows.map((row) => Number(row.rowKey)), queuedRowIds: rows.filter((row) => row.state === "queued").map((row) => Number(row.rowKey)) };
            context.note(`approvals read ${SWEEP_INTERVAL_MS} ms after a sweep`);
        }
        const withJob = new Set(rows.map((row) => Number(row.rowKey)));
        const waiting = context.rowIds.filter((rowId) => !withJob.has(rowId) && !context.deletedRows.has(rowId) && !context.withdrawnRows.has(rowId));
        const sweptEnough = sweepsForWaiting >= SWEEPS_FOR_A_WAITING_REQUEST;
        if (waiting.length > 0 && !sweptEnough && Date.now() - lastSweep > 3_000) {
            // The sweep runs on a timer in production; a request it has not seen yet is not lost.
            lastSweep = Date.now();
            sweepsForWaiting += 1;
            await stack.host.fire("intakeSweep").catch(() => undefined);
        }
        if (approvals && atRest && (waiting.length === 0 || sweptEnough) && Date.now() >= lateWritesBy && Date.now() - quietSince >= QUIET_MS) {
            if (waiting.length > 0) context.note(`rows ${waiting.join(", ")} still have no job after ${sweepsForWaiting} more sweeps`);
            return approvals;
        }
    }
    context.note(`not at rest after ${SETTLE_DEADLINE_MS} ms`);
    return approvals;
}

/** Before the first approval: the app makes and enables its intake webhook at start-up (or the auditor finds it missing). */
async function waitForIntakeWebhook(context: ScheduleContext): Promise<void> {
    const deadline = Date.now() + WEBHOOK_START_DEADLINE_MS;
    while (Date.now() < deadline) {
        const hooks = await intakeWebhooks(context);
        if (hooks.some((hook) => hook.owner === context.stack.appToken && hook.enabled)) return context.note("the app's intake webhook is enabled");
        await sleep(200);
    }
    context.note(`no enabled intake webhook ${WEBHOOK_START_DEADLINE_MS} ms after the host started; approving anyway`);
}

/**
 * The fast path after the chaos: the plan's requests kept for the rest are approved with no sweep
 * fired, and the harness notes how long each waited for its job row (null: longer than one safety-
 * net interval); then they come to rest like the others (faults are cleared: they must end done).
 */
async function approveAtRest(context: ScheduleContext): Promise<Array<{ rowId: number; jobAfterMs: number | null }>> {
    const { stack } = context;
    const typedAt = Date.now();
    const rowIds = await typeRequestsAtRest(context);
    const waited = new Map<number, number | null>(rowIds.map((rowId) => [rowId, null]));
    while (Date.now() - typedAt <= SAFETY_NET_INTERVAL_MS && [...waited.values()].includes(null)) {
        for (const rowId of rowIds) {
            if (waited.get(rowId) !== null) continue;
            if (await context.job(rowId)) waited.set(rowId, Date.now() - typedAt);
        }
        await sleep(200);
    }
    context.note(`approved at rest, no sweep fired: ${[...waited].map(([rowId, ms]) => `row ${rowId} ${ms === null ? "no job" : `job after ${ms} ms`}`).join(", ")}`);
    const deadline = Date.now() + SETTLE_DEADLINE_MS;
    while (Date.now() < deadline) {
        const states = await Promise.all(
            rowIds.map((rowId) =>
                context.job(rowId).then((job) => (job?.state === "parked" && job.parkAlerted !== true ? "parked, not yet alerted" : (job?.state as string | undefined))),
            ),
        );
        if (states.every((state) => state === "done" || state === "rejected" || state === "parked")) break;
        // The safety net, as the timer would come round, for a request the fast path left without a job.
        if (states.includes(undefined)) await stack.host.fire("intakeSweep").catch(() => undefined);
        await sleep(states.includes(undefined) ? 3_000 : 300);
    }
    // At rest once more: duplicated activities and the callbacks of the job's own writes done too.
    await untilQuiet(context, 10_000);
    return [...waited].map(([rowId, jobAfterMs]) => ({ rowId, jobAfterMs }));
}

/**
 * A status a locked row refused at a job's last step (`Done` after the lock) is the sweep's to
 * write again, and to name to ops: in production the timer sweeps after the job came to rest, so
 * the harness sweeps once more then, and waits for Smartsheet and the webhook to be quiet.
 */
async function sweepOwedStatuses(context: ScheduleContext): Promise<void> {
    const { stack } = context;
    // Until the sweep has ended: one waiting on a tight budget is quiet at Smartsheet, not done (seed 26120211, schedule 451).
    const swept = await sweepUntilClean(stack.host).catch((error: Error) => {
        context.note(`locked-row sweep failed to fire: ${error.message}`);
        return undefined;
    });
    if (swept && !swept.clean) context.note(`the locked-row sweep did not end clean in ${swept.fired} tries`);
    await untilQuiet(context, 10_000);
    context.note("swept once more after rest, for statuses locked rows refused");
}

/** Until neither Smartsheet (but for the webhook keeper) nor the alert webhook has heard from the app for a while, or `withinMs` has passed. */
async function untilQuiet(context: ScheduleContext, withinMs: number): Promise<void> {
    const { stack } = context;
    const deadline = Date.now() + withinMs;
    let last = -1;
    let quietSince = Date.now();
    while (Date.now() < deadline) {
        await sleep(300);
        const calls = (await stack.workCalls()) + stack.webhook.attempts;
        if (calls !== last) [last, quietSince] = [calls, Date.now()];
        else if (Date.now() - quietSince >= QUIET_MS) return;
    }
    context.note(`not quiet within ${withinMs} ms`);
}

/**
 * What `sheetwright-jobs list` prints to the ops person's terminal for the schedule's jobs, raw:
 * every list in one child process (`jobsCliLists`), one Node start per schedule rather than four.
 */
async function jobsCliOutputs(stack: ScheduleStack): Promise<AuditedOutput[]> {
    const lists = CLI_LISTS.map((args) => ["list", ...args, "--url", stack.host.url, "--key", FUNCTION_KEY]);
    const { stdout, failure } = await new Promise<{ stdout: string; failure: string }>((resolve) =>
        execFile(process.execPath, [JOBS_CLI_LISTS, JSON.stringify(lists)], { timeout: 30_000, encoding: "utf8" }, (error, stdout, stderr) =>
            resolve({ stdout, failure: error ? `${stderr}\n(the jobs lists failed: ${error.message.split("\n")[0]})` : stderr }),
        ),
    );
    const parts = stdout.split(LIST_MARKER).slice(1);
    return CLI_LISTS.map((args, index) => {
        const part = parts.find((candidate) => candidate.startsWith(`${index}\n`));
        const text = part === undefined ? `(no output for this list)${failure ? `\n${failure}` : ""}` : part.slice(`${index}\n`.length);
        return { source: `sheetwright-jobs list ${args.join(" ")}`.trimEnd(), text: index === CLI_LISTS.length - 1 && failure ? `${text}\n${failure}` : text };
    });
}

/**
 * Whether the sweep owes the request a job. A request that repeats an earlier one's code is
 * invalid, unless that earlier one was withdrawn (unticked, chaos seed 1706380879, or deleted,
 * seed 2625852924) before it had a job: then the code was never taken, and the later request
 * rightly gets it.
 */
export function validAtRest(plan: Plan, schedule: { rowIds: readonly number[]; withdrawnRows: ReadonlySet<number> }, index: number): boolean {
    const product = plan.products[index]!;
    if (product.valid) return true;
    const holder = plan.products.findIndex((other, at) => at < index && other.valid && other.code === product.code);
    if (holder < 0 || !schedule.withdrawnRows.has(schedule.rowIds[holder]!)) return false;
    return plan.products.slice(0, index).every((other, at) => at === holder || other.code !== product.code) && product.line !== "Aerospace";
}
