import { spawn } from "node:child_process";
import path from "node:path";
import { expect, it } from "vitest";

const APP_DIR = path.resolve(__dirname, "..", "..");
const BENCH_MAIN = path.join(APP_DIR, "dist", "tools", "bench", "main.js");

/**
 * The bench's cheapest scenario with tiny numbers: two products drained at the rate limit. Its
 * last line is the JSON object of figures; the counts must add up. Timings are not asserted.
 */
it("ends with one JSON line of figures for the scenarios asked for", async () => {
    const { code, output } = await runBench(["--only", "rateLimitUse", "--products", "2"]);
    const figures = figuresOf(code, output);
    expect(figures).toMatchObject({
        products: 2,
        rateLimitJobsNotDone: 0,
        rateLimitTakeOvers: 0,
        rateLimitParks: 0,
        errors: [],
    });
    for (const figure of ["rateLimitUse", "rateLimit429Share", "rssMbAfter60", "rateLimitSeconds"]) expect(figures[figure]).toEqual(expect.any(Number));
    // Two products and one sweep: the sweep's handful of calls and 26 or fewer each.
    expect(figures.rateLimitRequests).toBeGreaterThanOrEqual(2 * 10);
    expect(figures.rateLimitRequests).toBeLessThanOrEqual(2 * 26 + 20);
    expect(figures).not.toHaveProperty("callsPerProduct");
    expect(figures).not.toHaveProperty("benchSeconds");
    expect(figures.targetsMissed).toEqual(expect.any(Array));
    expect(output).toMatch(/^rateLimitUse +rate limit, one host: requests per window ÷ limit +\d+\.\d\d +≥ 0\.9 +(pass|FAIL)$/m);
    expect([0, 1]).toContain(code);
}, 180_000);

/**
 * The convergence scenario with two products: provisioned, the template changed, planned and
 * converged while a new approval arrives, then that approval's baseline. Its counts must add up:
 * the plan's three changes a product, each made with one write call. Timings are not asserted.
 */
it("converges a tiny fleet: the plan's calls made, once each", async () => {
    const { code, output } = await runBench(["--only", "convergePlannedEqualsMade", "--converge-products", "2"]);
    const figures = figuresOf(code, output);
    expect(figures).toMatchObject({
        convergeProducts: 2,
        convergeChangesByKind: { addColumn: 2, addSummaryField: 2, updateColumn: 2 },
        convergePlannedCalls: 6,
        convergeMadeWriteCalls: 6,
        convergeMadeByOperation: { addColumn: 2, addSummaryFields: 2, updateColumn: 2 },
        convergeCallsPerAddColumn: 1,
        convergeCallsPerUpdateColumn: 1,
        convergeCallsPerAddSummaryField: 1,
        convergePlannedEqualsMade: 1,
        errors: [],
    });
    for (const figure of ["convergeReadsPerProduct", "convergeProductsPerMinute", "convergeProvisioningSlowdown"]) expect(figures[figure]).toEqual(expect.any(Number));
    expect(figures.convergeApprovalToDoneMs).toEqual([expect.any(Number)]);
    expect(figures).not.toHaveProperty("rateLimitUse");
    expect(output).toMatch(/^convergePlannedEqualsMade +convergence: write calls made ÷ the dry run's total\.calls +1\.000 += 1 \(equal\) +pass$/m);
    expect([0, 1]).toContain(code);
}, 180_000);

it("refuses an unknown figure, naming it", async () => {
    const { code, output } = await runBench(["--only", "callsPerWidget"]);
    expect(code).toBe(2);
    expect(output).toContain('--only takes figure names (unknown: "callsPerWidget")');
});

function runBench(args: string[]): Promise<{ code: number | null; output: string }> {
    return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [BENCH_MAIN, ...args], { cwd: APP_DIR, stdio: ["ignore", "pipe", "pipe"] });
        let output = "";
        child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
        child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
        child.once("error", reject);
        child.once("exit", (code) => resolve({ code, output }));
    });
}

/** The bench's last line, its JSON object of figures; else an error that shows the end of what it printed. */
function figuresOf(code: number | null, output: string): Record<string, unknown> {
    const lastLine = output.trimEnd().split("\n").at(-1) ?? "";
    try {
        return JSON.parse(lastLine) as Record<string, unknown>;
    } catch {
        throw new Error(`npm run bench did not end with its JSON line (exit ${code}):\n${output.slice(-4000)}`);
    }
}
