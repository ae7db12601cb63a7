import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { freePort } from "../../tools/azurite/startAzurite";
import { uniqueName } from "../helpers/names";
import { APP_DIR, conformanceSettings, durableApi, waitFor } from "./support/hostTestClient";

const ROOT = path.resolve(__dirname, "../..");
const MAIN = path.join(ROOT, "dist/tools/functions-host/main.js");
const connectionString = inject("azuriteConnectionString");
const counterDir = mkdtempSync(path.join(tmpdir(), "host-crash-"));
const children: ChildProcess[] = [];

/** The child processes run the compiled host; build it unless dist is newer than every source file. */
function ensureBuilt(): void {
    const sources = path.join(ROOT, "tools/functions-host");
    const stale = (dir: string): boolean =>
        readdirSync(dir).some((entry) => {
            const full = path.join(dir, entry);
            if (statSync(full).isDirectory()) return stale(full);
            if (!entry.endsWith(".ts")) return false;
            const compiled = path.join(ROOT, "dist", path.relative(ROOT, full)).replace(/\.ts$/, ".js");
            return !existsSync(compiled) || statSync(compiled).mtimeMs < statSync(full).mtimeMs;
        });
    if (!stale(sources)) return;
    // Type errors elsewhere in the repo may be reported while others work on it; the JS is emitted anyway.
    const result = spawnSync(process.execPath, [path.join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"], { cwd: ROOT, encoding: "utf8" });
    if (!existsSync(MAIN) || stale(sources)) throw new Error(`Building the host failed:\n${result.stdout}\n${result.stderr}`);
}

interface HostProcess {
    child: ChildProcess;
    url: string;
    output: () => string;
}

async function spawnHost(env: Record<string, string>): Promise<HostProcess> {
    const port = await freePort();
    const child = spawn(process.execPath, [MAIN, "--app", APP_DIR, "--port", String(port)], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    children.push(child);
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    await waitFor("the host process to start", () => {
        if (child.exitCode !== null) throw new Error(`host exited early:\n${output}`);
        return output.includes("Host started:");
    }, 30_000);
    return { child, url: `http://127.0.0.1:${port}`, output: () => output };
}

function runs(name: string): string[] {
    const file = path.join(counterDir, `${name}.log`);
    return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
}

beforeAll(() => {
    ensureBuilt();
}, 180_000);

afterAll(async () => {
    for (const child of children) {
        if (child.exitCode === null && child.signalCode === null) {
            child.kill("SIGKILL");
        }
    }
});

it("resumes an orchestration after the host is SIGKILLed mid-activity: the lost activity runs again, nothing else does", async () => {
    const env = conformanceSettings(connectionString, {
        HOSTAPP_COUNTER_DIR: counterDir,
        AzureFunctionsJobHost__extensions__durableTask__storageProvider__workItemQueueVisibilityTimeout: "00:00:02",
        AzureFunctionsJobHost__extensions__durableTask__storageProvider__controlQueueVisibilityTimeout: "00:00:04",
    });
    const key = uniqueName("crash");

    const first = await spawnHost(env);
    expect((await durableApi(first.url).start("crashOrchestration", key, key)).status).toBe(202);
    await waitFor("the blocking activity to start in the first host", () => runs(`blocking-${key}-b`).length === 1, 20_000);
    first.child.kill("SIGKILL");
    await new Promise((resolve) => first.child.once("exit", resolve));

    const second = await spawnHost(env);
    await waitFor("the lost activity to run again in the second host", () => runs(`blocking-${key}-b`).length === 2, 20_000);
    // Longer than the 2 s work-item visibility: the running activity's item must be kept hidden (renewed), not re-run.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(runs(`blocking-${key}-b`)).toHaveLength(2);
    writeFileSync(path.join(counterDir, `${key}-b.release`), "go");
    const status = await durableApi(second.url).until(key, ["Completed"], 20_000);
    expect(status.output).toEqual([1, `released ${key}-b`, 1]);

    const blockingRuns = runs(`blocking-${key}-b`).map((line) => Number(line.split(" ")[0]));
    expect(blockingRuns).toEqual([first.child.pid, second.child.pid]);
    expect(runs(`counted-${key}-a`)).toHaveLength(1);
    expect(runs(`counted-${key}-a-end`)).toHaveLength(1);
    expect(runs(`counted-${key}-c`)).toHaveLength(1);
    expect(runs(`counted-${key}-c-end`)).toHaveLength(1);

    second.child.kill("SIGTERM");
    const code = await new Promise((resolve) => second.child.once("exit", resolve));
    expect(code).toBe(0);
    expect(second.output()).toContain("Host stopped.");
}, 90_000);
