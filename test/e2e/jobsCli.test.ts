import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { builtinModules } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, inject, it } from "vitest";
import { createTableClient } from "../../src/shared/storage";
import { ExitCode, runJobsCli } from "../../tools/jobs-cli/main";
import { FUNCTION_KEY, useE2E, waitFor, type E2E } from "../helpers/e2e";
import { writeDoneJobs } from "../helpers/jobs";
import { intake, job, jobIn, startRecoveryE2E } from "../helpers/recoveryKit";

const ROOT = path.resolve(__dirname, "..", "..");
const CLI = path.join(ROOT, "dist", "tools", "jobs-cli", "main.js");
const PACKAGE = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
    bin: Record<string, string>;
    scripts: Record<string, string>;
    dependencies: Record<string, string>;
};

/**
 * What the built CLI loads at run time, followed from its `require` calls: the compiled files
 * (relative to the package root) and the packages.
 */
function runtimeClosure(): { files: string[]; packages: string[] } {
    const files = new Set<string>();
    const packages = new Set<string>();
    const visit = (file: string) => {
        const relative = path.relative(ROOT, file).split(path.sep).join("/");
        if (files.has(relative)) return;
        files.add(relative);
        for (const [, target] of readFileSync(file, "utf8").matchAll(/\brequire\("([^"]+)"\)/g)) {
            if (target!.startsWith(".")) visit(path.resolve(path.dirname(file), target!.endsWith(".js") ? target! : `${target}.js`));
            else packages.add(target!.startsWith("@") ? target!.split("/").slice(0, 2).join("/") : target!.split("/")[0]!);
        }
    };
    visit(CLI);
    return { files: [...files].sort(), packages: [...packages].sort() };
}

/** The built CLI as a child process: what reaches its standard output and error. */
function bin(file: string, args: string[], env: Record<string, string> = {}) {
    return spawnSync(process.execPath, [file, ...args], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, env: { ...process.env, ...env }, cwd: path.dirname(file) });
}

/** Runs `sheetwright-jobs <args>` in this process against the stack's HTTP API. */
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

describe("sheetwright-jobs: the ops CLI over the app's HTTP API", { timeout: 120_000 }, () => {
    const stack = useE2E(startRecoveryE2E);

    it("lists, shows, unparks and reconciles a job, then plans its convergence read-only and counts it on its version, with exit codes scripts can use", async () => {
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
        // The parking's last writes (telling ops) may land after the row reads parked: the unpark reads the row again itself.
        const unparked = await jobs(e2e, "unpark", key, "--by", "Dana", "--note", "name rule relaxed");
        expect(unparked.code, unparked.err).toBe(ExitCode.ok);
        expect(unparked.out).toMatch(/unpark event raised .* resumes at the copy stage/);
        await jobIn(e2e, key, "done");
        const again = await jobs(e2e, "unpark", key);
        expect(again.code).toBe(ExitCode.conflict);
        expect(again.err).toMatch(/is done, not parked/);
        expect((await jobs(e2e, "show", key)).out).toMatch(/unparked:\s+\S+ by Dana: name rule relaxed/);

        const reconciled = await jobs(e2e, "reconcile");
        expect(reconciled.code).toBe(ExitCode.ok);
        expect(reconciled.out).toMatch(/active jobs checked, 0 transitions$/);

        // The done product against the unchanged template: its plan is empty, and nothing is written to Smartsheet.
        e2e.sim.core.resetCalls();
        const planned = await jobs(e2e, "converge", "--dry-run");
        expect(planned.code).toBe(ExitCode.ok);
        expect(planned.out).toMatch(/^site \S+: to template version [0-9a-f]{20} \(the template folder as it is now\)$/m);
        expect(planned.out).toContain(`product IND-6001 (site `);
        expect(planned.out).toMatch(/IND-6001 .*: from version [0-9a-f]{20}, 0 changes, 0 conflicts, up to date$/m);
        expect(planned.out.split("\n").at(-1)).toBe("total: 1 product, 0 changes, 0 conflicts (0 products to park); calls: none");
        expect(e2e.sim.core.calls().log.filter((call) => call.method !== "GET")).toEqual([]);
        const unknown = await jobs(e2e, "converge", "--dry-run", "--product", "IND-9999");
        expect(unknown).toMatchObject({ code: ExitCode.usage, err: expect.stringMatching(/^There is no product IND-9999 in site \S+; its done products are IND-6001\.$/) });
        const versions = await jobs(e2e, "versions");
        expect(versions.code).toBe(ExitCode.ok);
        expect(versions.out.split("\n")).toEqual([expect.stringMatching(/^VERSION\s+BUILT\s+SITES\s+PRODUCTS\s+IN PROGRESS\s+CONVERGING\s+PARKED\s+SHAPE$/), expect.stringMatching(/^[0-9a-f]{20}\s+\S+ \S+\s+\S+\s+1\s+0\s+0\s+0\s+recorded$/)]);
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

    it("the sheetwright-jobs bin, built once, lists more than 1,000 done jobs completely; --json is one document on stdout, for jq", async () => {
        const e2e = await stack.start({ only: [] });
        await e2e.jobs.ensureTable();
        const pk = e2e.settings.INTAKE_SHEET_ID!;
        const written = await writeDoneJobs(createTableClient(inject("azuriteConnectionString"), e2e.settings.JOBS_TABLE!), pk, 1_150);
        const env = { SHEETWRIGHT_URL: e2e.host.url, SHEETWRIGHT_KEY: FUNCTION_KEY };

        const json = bin(CLI, ["list", "--state", "done", "--json"], env);
        expect(json.status).toBe(ExitCode.ok);
        expect(json.stderr).toBe("");
        const listed = JSON.parse(json.stdout) as { state: string; jobs: Array<{ jobKey: string }>; continuation?: string };
        expect(listed.state).toBe("done");
        expect(listed.jobs.map((listedJob) => listedJob.jobKey)).toEqual(written.map((rowKey) => `${pk}-${rowKey}`));
        expect(listed).not.toHaveProperty("continuation");

        const table = await jobs(e2e, "list", "--state", "done", "--page-size", "400");
        expect(table.code).toBe(ExitCode.ok);
        const lines = table.out.split("\n");
        expect(lines).toHaveLength(1 + 1_150 + 1);
        expect(lines.at(-1)).toBe("1150 done jobs");
        expect(new Set(lines.slice(1, -1).map((line) => line.split(" ")[0])).size).toBe(1_150);

        const refused = await jobs(e2e, "list", "--state", "done", "--page-size", "5000");
        expect(refused.code).toBe(ExitCode.usage);
        expect(refused.err).toMatch(/pageSize "5000": expected at most 1000 jobs/);

        // Only production dependencies and the compiled app beside it, as after `npm prune --omit=dev` or in the published package.
        const { files, packages } = runtimeClosure();
        expect(files.every((file) => file.startsWith("dist/src/") || file.startsWith("dist/tools/jobs-cli/"))).toBe(true);
        const external = packages.filter((name) => !builtinModules.includes(name.replace(/^node:/, "")));
        expect(external.filter((name) => !(name in PACKAGE.dependencies))).toEqual([]);
        const alone = mkdtempSync(path.join(tmpdir(), "sheetwright-jobs-cli-"));
        try {
            for (const file of [...files, "package.json"]) {
                mkdirSync(path.dirname(path.join(alone, file)), { recursive: true });
                cpSync(path.join(ROOT, file), path.join(alone, file));
            }
            mkdirSync(path.join(alone, "node_modules", "@azure"), { recursive: true });
            for (const name of external) symlinkSync(path.join(ROOT, "node_modules", name), path.join(alone, "node_modules", name), "dir");
            const shipped = bin(path.join(alone, PACKAGE.bin["sheetwright-jobs"]!), ["list", "--state", "done", "--json"], env);
            expect(shipped.stderr).toBe("");
            expect(shipped.status).toBe(ExitCode.ok);
            expect((JSON.parse(shipped.stdout) as { jobs: unknown[] }).jobs).toHaveLength(1_150);
        } finally {
            rmSync(alone, { recursive: true, force: true });
        }
    });
});

describe("the sheetwright-jobs bin as ops runs it", () => {
    it("is the package's bin, the built file starts with a shebang, and npm run -s jobs prints the CLI's output and nothing else", () => {
        expect(PACKAGE.bin).toEqual({ "sheetwright-jobs": "dist/tools/jobs-cli/main.js" });
        expect(readFileSync(CLI, "utf8").split("\n")[0]).toBe("#!/usr/bin/env node");
        expect(PACKAGE.scripts.jobs).toBe("node dist/tools/jobs-cli/main.js");

        const direct = bin(CLI, ["--help"]);
        expect(direct.status).toBe(ExitCode.ok);
        expect(direct.stdout).toMatch(/^Usage: sheetwright-jobs <command>/);
        const viaNpm = spawnSync("npm", ["run", "-s", "jobs", "--", "--help"], { cwd: ROOT, encoding: "utf8" });
        expect(viaNpm.status).toBe(ExitCode.ok);
        expect(viaNpm.stdout).toBe(direct.stdout);
    });
});

