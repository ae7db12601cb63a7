import { FINDING_CATEGORIES, type FindingCategory } from "./auditor";
import { inert } from "./inert";
import { summarisePlan } from "./plan";
import type { ScheduleOutcome } from "./runSchedule";

export type Totals = { schedules: number; products: number; done: number; parked: number; rejected: number } & {
    /** Schedules that converged their products to a changed template, and how those products ended. */
    convergences: number;
    converged: number;
    convergenceParked: number;
    convergenceLost: number;
    convergenceUnparked: number;
} & Record<FindingCategory, number> & {
    harnessErrors: number;
};

export function emptyTotals(): Totals {
    return {
        schedules: 0,
        products: 0,
        done: 0,
        parked: 0,
        rejected: 0,
        convergences: 0,
        converged: 0,
        convergenceParked: 0,
        convergenceLost: 0,
        convergenceUnparked: 0,
        ...(Object.fromEntries(FINDING_CATEGORIES.map((category) => [category, 0])) as Record<FindingCategory, number>),
        harnessErrors: 0,
    };
}

export function addOutcome(totals: Totals, outcome: ScheduleOutcome): void {
    totals.schedules += 1;
    totals.products += outcome.plan.products.length;
    if (outcome.kind === "harnessError") {
        totals.harnessErrors += 1;
        return;
    }
    const { states, findings } = outcome.result;
    totals.done += states.done;
    totals.parked += states.parked;
    totals.rejected += states.rejected;
    if (outcome.result.convergence) {
        totals.convergences += 1;
        totals.converged += outcome.result.convergence.converged;
        totals.convergenceParked += outcome.result.convergence.parked;
        totals.convergenceLost += outcome.result.convergence.lost;
        totals.convergenceUnparked += outcome.result.convergence.unparked;
    }
    for (const finding of findings) totals[finding.category] += 1;
}

export function failed(totals: Totals): boolean {
    return totals.harnessErrors > 0 || FINDING_CATEGORIES.some((category) => totals[category] > 0);
}

/**
 * One readable line per schedule; on failure the plan, what the auditor found, and how to replay it.
 * Every line is inert: host log lines, customer codes and names (in findings, the plan, the journal)
 * print their control, bidi and invisible characters as visible escapes, and one line stays one line.
 */
export function describeOutcome(index: number, outcome: ScheduleOutcome, products: number): string {
    return outcomeLines(index, outcome, products).map(inert).join("\n");
}

function outcomeLines(index: number, outcome: ScheduleOutcome, products: number): string[] {
    const seed = outcome.plan.seed;
    const head = `schedule ${index} seed ${seed} (${outcome.seconds.toFixed(1)} s) ${summarisePlan(outcome.plan)}`;
    const replay = `replay: npm run chaos -- --seed ${seed} --schedules 1 --products ${products}`;
    if (outcome.kind === "harnessError") {
        return [`${head} — HARNESS ERROR: ${outcome.error}`, `  ${replay}`, `  journal:`, ...outcome.journal.map((line) => `    ${line}`)];
    }
    const { states, findings } = outcome.result;
    const converged = outcome.result.convergence;
    const tally =
        `done ${states.done}, parked ${states.parked}, rejected ${states.rejected}` +
        (converged ? `; convergence to ${converged.targets.join("/") || "no version"}: converged ${converged.converged}, parked ${converged.parked}, lost ${converged.lost}, unparked with a decision ${converged.unparked}` : "");
    if (findings.length === 0) return [`${head} — ok (${tally})`];
    return [
        `${head} — FAIL (${tally}; ${findings.length} findings)`,
        ...findings.map((finding) => `  [${finding.category}] ${finding.subject}: ${finding.detail}`),
        `  ${replay}`,
        `  plan: ${JSON.stringify(outcome.plan)}`,
        `  journal:`,
        ...outcome.journal.map((line) => `    ${line}`),
        `  host log (transitions and errors):`,
        ...outcome.hostLog.filter((line) => /→|error|warn|park/i.test(line)).slice(-60).map((line) => `    ${line}`),
    ];
}
