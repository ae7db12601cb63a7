import { spawn } from "node:child_process";
import path from "node:path";
import { describe, it } from "vitest";

const APP_DIR = path.resolve(__dirname, "..", "..");
const CHAOS_MAIN = path.join(APP_DIR, "dist", "tools", "chaos", "main.js");
/**
 * Sized for 2 cores: a schedule takes 25–30 s of wall time (one or two hosts, the jobs CLI, the
 * endgame's sweeps and quiet wait), about 15 s each at two side by side; 8 fit the 300 s timeout
 * with half of it to spare. Thousands run with `npm run chaos`.
 */
const SCHEDULES = 8;

// The CI-sized run and the replays side by side: each schedule waits on compressed timers more than it computes, and
// alone this round left the two cores half idle.
describe.concurrent("chaos", () => {
    /**
     * The CI-sized chaos run: seeded random schedules of faults, crashes and people's edits against
     * the whole local stack, each audited from the outside. Every failure count must be 0; the
     * output names the seed and plan of any schedule that failed, for `npm run chaos` to replay.
     */
    it(`survives ${SCHEDULES} chaos schedules`, async ({ expect }) => {
        const { code, output } = await runChaos(["--schedules", String(SCHEDULES), "--seed", "20261201", "--parallel", "2"]);
        const lastLine = output.trimEnd().split("\n").at(-1) ?? "";
        let totals: Record<string, number>;
        try {
            totals = JSON.parse(lastLine) as Record<string, number>;
        } catch {
            throw new Error(`npm run chaos did not end with its JSON line (exit ${code}):\n${output.slice(-4000)}`);
        }
        const failures = { duplicates: 0, lost: 0, orphans: 0, silent: 0, invariantFailures: 0, harnessErrors: 0 };
        const seen = Object.fromEntries(Object.keys(failures).map((field) => [field, totals[field]]));
        expect(seen, output.split("\n").filter((line) => !/ — ok \(/.test(line)).join("\n")).toEqual(failures);
        expect(totals.schedules).toBe(SCHEDULES);
        expect(code).toBe(0);
    }, 300_000);

    /**
     * Schedules whose one finding was the auditor's mistake, not the app's: a request repeating the
     * code of an earlier one that was withdrawn before it had a job — unticked (seed 1706380879) or
     * its row deleted (seed 2625852924) — rightly gets a job. Replayed, each ends with zeros.
     */
    it("replays the schedules that caught the auditor owing no job to a code's second request", async ({ expect }) => {
        const replays = await Promise.all(["1706380879", "2625852924"].map((seed) => runChaos(["--schedules", "1", "--seed", seed])));
        for (const { code, output } of replays) {
            const totals = JSON.parse(output.trimEnd().split("\n").at(-1) ?? "") as Record<string, number>;
            expect(totals, output).toMatchObject({ duplicates: 0, lost: 0, orphans: 0, silent: 0, invariantFailures: 0, harnessErrors: 0 });
            expect(code).toBe(0);
        }
    }, 300_000);
});

function runChaos(args: string[]): Promise<{ code: number | null; output: string }> {
    return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [CHAOS_MAIN, ...args], { cwd: APP_DIR, stdio: ["ignore", "pipe", "pipe"] });
        let output = "";
        child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
        child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
        child.once("error", reject);
        child.once("exit", (code) => resolve({ code, output }));
    });
}
