import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { freePort } from "../../../src/azurite";
import { waitFor } from "./hostTestClient";

const ROOT = path.resolve(__dirname, "../../..");
const MAIN = path.join(ROOT, "dist/main.js");

/** A local host running an app in a child process, as crash tests need it: killable with SIGKILL. */
export interface HostProcess {
    child: ChildProcess;
    url: string;
    output: () => string;
}

/**
 * Queue visibility timeouts short enough that, after a SIGKILL, the messages the killed host had
 * taken are visible again within seconds for the restarted host (the defaults are 5 minutes).
 */
export const SHORT_VISIBILITY_SETTINGS = {
    AzureFunctionsJobHost__extensions__durableTask__storageProvider__workItemQueueVisibilityTimeout: "00:00:02",
    AzureFunctionsJobHost__extensions__durableTask__storageProvider__controlQueueVisibilityTimeout: "00:00:04",
};

const children: ChildProcess[] = [];

/** The child processes run the compiled host; build it unless dist is newer than every source file. */
export function ensureHostBuilt(): void {
    const sources = path.join(ROOT, "src");
    const stale = (dir: string): boolean =>
        readdirSync(dir).some((entry) => {
            const full = path.join(dir, entry);
            if (statSync(full).isDirectory()) return stale(full);
            if (!entry.endsWith(".ts")) return false;
            const compiled = path.join(ROOT, "dist", path.relative(sources, full)).replace(/\.ts$/, ".js");
            return !existsSync(compiled) || statSync(compiled).mtimeMs < statSync(full).mtimeMs;
        });
    if (!stale(sources)) return;
    // Type errors may be reported while someone works on the host; the JS is emitted anyway.
    const result = spawnSync(process.execPath, [require.resolve("typescript/bin/tsc"), "-p", "tsconfig.build.json"], { cwd: ROOT, encoding: "utf8" });
    if (!existsSync(MAIN) || stale(sources)) throw new Error(`Building the host failed:\n${result.stdout}\n${result.stderr}`);
}

/** Starts `node dist/main.js --app <appDir>` (the bin `functions-host`) on a free port and waits for "Host started:". */
export async function spawnHost(appDir: string, env: Record<string, string>): Promise<HostProcess> {
    const port = await freePort();
    const child = spawn(process.execPath, [MAIN, "--app", appDir, "--port", String(port)], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
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

/** SIGKILL, as a crashed instance: no shutdown, no flush. Resolves once the process is gone. */
export async function killHost(host: HostProcess): Promise<void> {
    if (host.child.exitCode !== null || host.child.signalCode !== null) return;
    const exited = new Promise((resolve) => host.child.once("exit", resolve));
    host.child.kill("SIGKILL");
    await exited;
}

/** Kills every host this test file started and left running. */
export async function killAllHosts(): Promise<void> {
    for (const child of children) {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
}
