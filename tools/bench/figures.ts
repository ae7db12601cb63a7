/** What a scenario measured: figures (numbers with a name) and what explains them. */
export interface Measured {
    figures: Partial<Record<FigureName, number>>;
    /** Numbers behind the figures that belong in the JSON line too (breakdowns, per-point lists). */
    details: Record<string, unknown>;
    /** Lines printed under the table. */
    notes: string[];
}

interface Target {
    text: string;
    met(value: number): boolean;
}

const atMost = (limit: number, text = `≤ ${limit}`): Target => ({ text, met: (value) => value <= limit });
const exactly = (value: number, text = `= ${value}`): Target => ({ text, met: (measured) => Math.abs(measured - value) < 1e-9 });
const atLeast = (limit: number, text = `≥ ${limit}`): Target => ({ text, met: (value) => value >= limit });

interface FigureSpec {
    label: string;
    target?: Target;
    /** Digits after the decimal point in the table. */
    digits: number;
}

/** Every figure the bench reports, in table order, with its target. */
export const FIGURES = {
    callsPerProduct: { label: "Smartsheet calls per product (happy path)", target: atMost(23), digits: 0 },
    recoveryExtraWrites: { label: "recovery: repeated writes, all interruption points", target: atMost(0, "0"), digits: 0 },
    recoveryExtraReads: { label: "recovery: extra reads, worst interruption point", target: atMost(3), digits: 0 },
    recoveryNotDone: { label: "recovery: interrupted products not done", target: atMost(0, "0"), digits: 0 },
    fanoutSpeedup: { label: "fan-out: one product, copies one at a time ÷ fanned out", target: atLeast(3, "≥ 3×"), digits: 2 },
    fanoutErrors4004: { label: "fan-out: Smartsheet errors 4004", target: atMost(0, "0"), digits: 0 },
    rateLimitUse: { label: "rate limit, one host: requests per window ÷ limit", target: atLeast(0.9), digits: 2 },
    rateLimit429Share: { label: "rate limit, one host: share of requests answered 429", target: atMost(0.01, "≤ 1 %"), digits: 4 },
    rateLimitJobsNotDone: { label: "rate limit, one host: jobs failed or parked", target: atMost(0, "0"), digits: 0 },
    rateLimitTakeOvers: { label: "rate limit, one host: reaper take-overs", target: atMost(0, "0"), digits: 0 },
    rateLimitParks: { label: "rate limit, one host: parks", target: atMost(0, "0"), digits: 0 },
    scaleOutRateLimitUse: { label: "rate limit, two hosts one token: requests per window ÷ limit", target: atLeast(0.85), digits: 2 },
    scaleOut429Share: { label: "rate limit, two hosts one token: share answered 429", target: atMost(0.01, "≤ 1 %"), digits: 4 },
    scaleOutJobsNotDone: { label: "rate limit, two hosts one token: jobs failed or parked", target: atMost(0, "0"), digits: 0 },
    sweepCalls5000: { label: "routine sweep, 5,000-row intake sheet: Smartsheet calls", target: atMost(6), digits: 0 },
    sweepCalls50: { label: "routine sweep, 50-row intake sheet: Smartsheet calls", target: atMost(6), digits: 0 },
    approvalToDoneP50: { label: "webhooks: approval → done, p50 of 20, s", digits: 1 },
    approvalToDoneP95: { label: "webhooks: approval → done, p95 of 20, s", digits: 1 },
    approvalToDoneP95Margin: { label: "webhooks: p95 ÷ (debounce + 1.5 × one product's own time alone)", target: atMost(1), digits: 2 },
    approvalToDoneSweepsP50: { label: "sweeps alone (every 20 s): approval → done, p50, s", digits: 1 },
    approvalToDoneSweepsP95: { label: "sweeps alone (every 20 s): approval → done, p95, s", digits: 1 },
    webhookSweepCalls: { label: "webhook-driven sweep queuing one approval: Smartsheet calls", target: atMost(4), digits: 0 },
    webhookCallsPerProduct: { label: "Smartsheet calls per product, started by a webhook", target: atMost(23), digits: 0 },
    webhookMaintenanceCalls: { label: "webhook keeper: Smartsheet calls per site per reaper run", target: atMost(2), digits: 1 },
    reaperEntitiesRead: { label: "reaper, 10,000 finished + 20 open jobs: entities read", target: atMost(25, "≈ 20 (≤ 25)"), digits: 0 },
    budgetSkewBusiestWindow: { label: "budget, two instances 0–30 s apart: busiest rolling window ÷ limit", target: atMost(1), digits: 2 },
    budgetSkewLeastShare: { label: "budget, two instances 0–30 s apart: least instance's share", target: atLeast(0.25, "≥ 0.25 (half of even)"), digits: 2 },
    convergeCallsPerAddColumn: { label: "convergence: write calls per planned addColumn", target: atMost(1), digits: 2 },
    convergeCallsPerUpdateColumn: { label: "convergence: write calls per planned updateColumn", target: atMost(1), digits: 2 },
    convergeCallsPerAddSummaryField: { label: "convergence: write calls per planned addSummaryField", target: atMost(1), digits: 2 },
    convergePlannedEqualsMade: { label: "convergence: write calls made ÷ the dry run's total.calls", target: exactly(1, "= 1 (equal)"), digits: 3 },
    convergeReadsPerProduct: { label: "convergence: reads (GET) per product", digits: 1 },
    convergeProductsPerMinute: { label: "convergence at the rate limit, approvals beside it: products per minute (compressed)", digits: 1 },
    convergeProvisioningSlowdown: { label: "convergence: provisioning approval → done, median, during ÷ without", target: atMost(1.1, "≤ 1.10"), digits: 2 },
    historyEventsPerProduct: { label: "orchestration history events per product", digits: 0 },
    episodesPerProduct: { label: "orchestration episodes per product", digits: 0 },
    appLoadMs: { label: "host cold start with the app, ms", digits: 0 },
    packageFiles: { label: "deploy package (npm run package): files", digits: 0 },
    packageMb: { label: "deploy package: MB", digits: 1 },
    bundleLoadSpeedup: { label: "app load CPU, telemetry on: unbundled ÷ bundled", target: atLeast(1, "> 1 (keep the bundle only if it wins)"), digits: 2 },
    rssMbAfter60: { label: "host resident memory after the rate-limit products, MB", digits: 0 },
    benchSeconds: { label: "the whole bench, seconds", target: atMost(300, "< 300 (5 min)"), digits: 0 },
} satisfies Record<string, FigureSpec>;

export type FigureName = keyof typeof FIGURES;

export function isFigureName(name: string): name is FigureName {
    return Object.hasOwn(FIGURES, name);
}

/** The figures whose target the measured value misses. */
export function targetsMissed(figures: Partial<Record<FigureName, number>>): FigureName[] {
    return (Object.keys(FIGURES) as FigureName[]).filter((name) => {
        const target = (FIGURES[name] as FigureSpec).target;
        const value = figures[name];
        return target !== undefined && value !== undefined && !target.met(value);
    });
}

/** The figures as a table: figure, value, target, pass/fail. */
export function renderTable(figures: Partial<Record<FigureName, number>>): string {
    const rows: string[][] = [["figure", "what it measures", "value", "target", "result"]];
    for (const name of Object.keys(FIGURES) as FigureName[]) {
        const value = figures[name];
        if (value === undefined) continue;
        const spec = FIGURES[name] as FigureSpec;
        const result = spec.target ? (spec.target.met(value) ? "pass" : "FAIL") : "—";
        rows.push([name, spec.label, value.toFixed(spec.digits), spec.target?.text ?? "—", result]);
    }
    const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => [...row[column]!].length)));
    const line = (row: string[]) => row.map((cell, column) => (column === 2 ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!))).join("  ").trimEnd();
    return [line(rows[0]!), widths.map((width) => "-".repeat(width)).join("  "), ...rows.slice(1).map(line)].join("\n");
}
