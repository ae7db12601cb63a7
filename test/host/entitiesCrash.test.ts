import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { freePort } from "../../tools/azurite/startAzurite";
import { uniqueName } from "../helpers/names";
import { APP_DIR, call, DURABLE, durableApi, waitFor } from "./support/hostTestClient";

const ROOT = path.resolve(__dirname, "../..");
const MAIN = path.join(ROOT, "dist/tools/functions-host/main.js");
const ENTITIES_APP = path.join(APP_DIR, "entities");
const connectionString = inject("azuriteConnectionString");
const counterDir = mkdtempSync(path.join(tmpdir(), "host-entities-crash-"));
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
    const result = spawnSync(process.execPath, [path.join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"], { cwd: ROOT, encoding: "utf8" });
    if (!existsSync(MAIN) || stale(sources)) throw new Error(`Building the host failed:\n${result.stdout}\n${result.stderr}`);
}

async function spawnHost(env: Record<string, string>): Promise<{ child: ChildProcess; url: string; output: () => string }> {
    const port = await freePort();
    const child = spawn(process.execPath, [MAIN, "--app", ENTITIES_APP, "--port", String(port)], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
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

async function counter(url: string, key: string): Promise<{ value: number; applied: number[] } | undefined> {
    const reply = await call("GET", `${url}${DURABLE}/entities/counter/${key}`);
    return reply.status === 200 ? reply.json() : undefined;
}

beforeAll(() => {
    ensureBuilt();
}, 180_000);

afterAll(() => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

it("resumes an entity batch and its calling orchestration after the host is SIGKILLed mid-operation: the lost batch runs again, committed operations are not re-applied", async () => {
    const env = {
        AzureWebJobsStorage: connectionString,
        ENTITIES_HUB: uniqueName("entcrash"),
        ENTITIES_COUNTER_DIR: counterDir,
        AzureFunctionsJobHost__extensions__durableTask__storageProvider__workItemQueueVisibilityTimeout: "00:00:02",
        AzureFunctionsJobHost__extensions__durableTask__storageProvider__controlQueueVisibilityTimeout: "00:00:04",
    };
    const key = uniqueName("k");
    const id = uniqueName("blocking");

    const first = await spawnHost(env);
    for (const amount of [1, 2]) expect((await call("POST", `${first.url}${DURABLE}/entities/counter/${key}?op=add`, amount)).status).toBe(202);
    await waitFor("the first two adds", async () => (await counter(first.url, key))?.value === 3, 20_000);
    expect((await durableApi(first.url).start("callBlocking", id, { key, amount: 5, release: `${key}.release` })).status).toBe(202);
    await waitFor("the blocking operation to start in the first host", () => runs(`blockingAdd-${key}`).length === 1, 20_000);
    first.child.kill("SIGKILL");
    await new Promise((resolve) => first.child.once("exit", resolve));

    const second = await spawnHost(env);
    await waitFor("the lost batch to run again in the second host", () => runs(`blockingAdd-${key}`).length === 2, 20_000);
    expect((await call("POST", `${second.url}${DURABLE}/entities/counter/${key}?op=add`, 10)).status).toBe(202);
    writeFileSync(path.join(counterDir, `${key}.release`), "go");

    const status = await durableApi(second.url).until(id, ["Completed"], 20_000);
    expect(status.output).toEqual({ first: `activity ${key}`, afterBlocking: 8, value: 18 });
    expect(await counter(second.url, key)).toEqual({ value: 18, applied: [1, 2, 5, 10] });
    expect(runs(`blockingAdd-${key}`).map(Number)).toEqual([first.child.pid, second.child.pid]);

    second.child.kill("SIGTERM");
    expect(await new Promise((resolve) => second.child.once("exit", resolve))).toBe(0);
}, 90_000);
