import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ExitCode, runJobsCli } from "../../tools/jobs-cli/main";
import { FUNCTION_KEY, useE2E, type E2E } from "../helpers/e2e";
import { intake, jobIn, startRecoveryE2E } from "../helpers/recoveryKit";

const CLI = path.resolve(__dirname, "..", "..", "dist", "tools", "jobs-cli", "main.js");

/** Runs `npm run jobs -- <args>` in this process against the stack's HTTP API. */
async function jobs(e2e: E2E, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runJobsCli(args, {
        out: (line) => out.push(line),
        err: (line) => err.push(line),
        env: { SHEETWRIGHT_URL: e2e.host.url, SHEETWRIGHT_KEY: FUNCTION_KEY },
        fetch,
    });
    return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("npm run jobs: the ops CLI over the app's HTTP API", { timeout: 120_000 }, () => {
    const stack = useE2E(startRecoveryE2E);

    it("lists, shows, unparks and reconciles a job, with exit codes scripts can use", async () => {
        const e2e = await stack.start({ only: [] });
        const key = await intake(e2e).add("IND-6001", "Coolant Pump", "Industrial");
        e2e.sim.core.configure({ nameLimit: 40 });
        await e2e.fire("intakeSweep");
        await jobIn(e2e, key, "parked");

        const parked = await jobs(e2e, "list", "--state", "parked");
        expect(parked.code).toBe(ExitCode.ok);
        expect(parked.out).toMatch(/^JOB\s+STATE\s+STAGE\s+CODE/);
        expect(parked.out).toContain(key);
        expect(parked.out).toMatch(/1 parked job$/);

        const shown = await jobs(e2e, "show", key);
        expect(shown.code).toBe(ExitCode.ok);
        expect(shown.out).toMatch(/state:\s+parked \(stage copy\)/);
        expect(shown.out).toMatch(/park reason:\s+.*1041/);
        expect(JSON.parse((await jobs(e2e, "show", key, "--json")).out)).toMatchObject({ jobKey: key, state: "parked" });

        expect((await jobs(e2e, "show", `${e2e.settings.INTAKE_SHEET_ID}-1`)).code).toBe(ExitCode.notFound);
        expect((await jobs(e2e, "frobnicate")).code).toBe(ExitCode.usage);
        expect((await jobs(e2e, "show")).code).toBe(ExitCode.usage);

        e2e.sim.core.configure({ nameLimit: 50 });
        const unparked = await jobs(e2e, "unpark", key, "--by", "Dana", "--note", "name rule relaxed");
        expect(unparked.code).toBe(ExitCode.ok);
        expect(unparked.out).toMatch(/unpark event raised .* resumes at the copy stage/);
        await jobIn(e2e, key, "done");
        const again = await jobs(e2e, "unpark", key);
        expect(again.code).toBe(ExitCode.conflict);
        expect(again.err).toMatch(/is done, not parked/);
        expect((await jobs(e2e, "show", key)).out).toMatch(/unparked:\s+\S+ by Dana: name rule relaxed/);

        const reconciled = await jobs(e2e, "reconcile");
        expect(reconciled.code).toBe(ExitCode.ok);
        expect(reconciled.out).toMatch(/active jobs checked, 0 transitions$/);
    });

    it("says how to fix a wrong key or an unreachable app, with exit code 1", async () => {
        const e2e = await stack.start({ only: [] });
        const refused = await runJobsCli(["list"], {
            out: () => undefined,
            err: (line) => expect(line).toMatch(/refused the function key; pass --key or set SHEETWRIGHT_KEY/),
            env: { SHEETWRIGHT_URL: e2e.host.url, SHEETWRIGHT_KEY: "wrong" },
            fetch,
        });
        expect(refused).toBe(ExitCode.error);
        const child = spawnSync(process.execPath, [CLI, "list", "--url", "http://127.0.0.1:9"], { encoding: "utf8" });
        expect(child.status).toBe(ExitCode.error);
        expect(child.stderr).toMatch(/Cannot reach http:\/\/127.0.0.1:9 .*is the app running \(npm start\)/);
    });
});
