import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ExitCode, runJobsCli } from "../../tools/jobs-cli/main";
import { FUNCTION_KEY, useE2E, waitFor, type E2E } from "../helpers/e2e";
import { intake, job, jobIn, startRecoveryE2E } from "../helpers/recoveryKit";

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

    it("regression #18.6 hostile text reaches a terminal raw: customer text prints inert, as typed, one line per job", async () => {
        const e2e = await stack.start({ only: [] });
        const typed = {
            titleCode: "BAD\u001b]0;owned\u0007",
            forgedName: "Pump\u202egnp.exe\n1-1  done  copy  FORGED\u009b2J",
            emojiName: "Set 👩‍🔬 \u2066x\u2069\u200b",
            clearingLine: "Ind\u001b[2J\u0085\ufeff\u001b[Hustrial",
        };
        const rows = intake(e2e);
        const forged = await rows.add(typed.titleCode, typed.forgedName, "Industrial");
        const quoting = await rows.add("IND-6101", typed.emojiName, typed.clearingLine);
        // A sweep that the shared machine slows past the test host's function timeout is simply run again.
        let polls = 0;
        await waitFor(
            async () => {
                if (polls++ % 50 === 0) await e2e.fire("intakeSweep");
                return (await job(e2e, forged))?.state === "rejected" && (await job(e2e, quoting))?.state === "rejected";
            },
            "both hostile rows to be rejected",
            90_000,
        );
        // Raw, a terminal acts on these (or shows them as nothing); the joiner inside 👩‍🔬 is the one that stays.
        const raw = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200b\u200c\u200e\u200f\u202a-\u202e\u2028\u2029\u2066-\u2069\ufeff]/;

        const listed = await jobs(e2e, "list", "--state", "rejected");
        expect(listed.code).toBe(ExitCode.ok);
        expect(listed.out).not.toMatch(raw);
        const lines = listed.out.split("\n");
        expect(lines).toHaveLength(4);
        expect(lines.filter((line) => line.startsWith(`${forged} `))).toHaveLength(1);
        expect(lines.filter((line) => line.startsWith(`${quoting} `))).toHaveLength(1);
        expect(lines[3]).toBe("2 rejected jobs");
        expect(listed.out).toContain("BAD\\u001b]0;owned\\u0007");
        expect(listed.out).toContain("Set 👩‍🔬 \\u2066x\\u2069\\u200b");

        for (const key of [forged, quoting]) {
            const shown = await jobs(e2e, "show", key);
            expect(shown.code).toBe(ExitCode.ok);
            expect(shown.out).not.toMatch(raw);
            expect(shown.out.split("\n").every((line) => /^[a-z ]+:\s+\S/.test(line))).toBe(true);
        }
        expect((await jobs(e2e, "show", forged)).out).toMatch(/^product:\s+BAD\\u001b\]0;owned\\u0007 Pump\\u202egnp\.exe\\u000a1-1  done  copy  FORGED\\u009b2J$/m);
        expect((await jobs(e2e, "show", quoting)).out).toMatch(/^reject reason:\s+Product Line "Ind\\u001b\[2J\\u0085\\ufeff\\u001b\[Hustrial" has no folder/m);

        // Kept as typed: the JSON view parses back to the very text, and is itself inert.
        const json = await jobs(e2e, "show", quoting, "--json");
        expect(json.out).not.toMatch(raw);
        expect(JSON.parse(json.out)).toMatchObject({ productCode: "IND-6101", productName: typed.emojiName, productLine: typed.clearingLine, state: "rejected" });

        const refused = await jobs(e2e, "list", "--state", "done\u001b[2J\u202e");
        expect(refused.code).toBe(ExitCode.usage);
        expect(refused.err).not.toMatch(raw);
        expect(refused.err).toContain('Unknown state "done\\u001b[2J\\u202e"');

        const logged = e2e.host.logs.filter((line) => line.includes("Ind\\u001b[2J\\u0085\\ufeff\\u001b[Hustrial"));
        expect(logged.length).toBeGreaterThan(0);
        expect(e2e.host.logs.filter((line) => /\u001b\]0;|\u001b\[2J|\u202e|\u2066|\u009b|\u0085|\ufeff/.test(line))).toEqual([]);
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
