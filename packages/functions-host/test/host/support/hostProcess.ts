import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";

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

/**
 * Starts `node dist/main.js --app <appDir> --port 0` (the bin `functions-host`; 0 = a port the
 * host's own listen picks, so hosts started side by side cannot race for one) and resolves with
 * its URL as soon as it prints "Host started: <url>"; rejects at once if it exits first.
 */
export async function spawnHost(appDir: string, env: Record<string, string>, timeoutMs = 30_000): Promise<HostProcess> {
    const child = spawn(process.execPath, [MAIN, "--app", appDir, "--port", "0"], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    children.push(child);
    let output = "";
    const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`Timed out after ${timeoutMs} ms waiting for the host process to start:\n${output}`)), timeoutMs);
        const onData = (chunk: Buffer) => {
            output += chunk.toString();
            const started = /Host started: (http:\/\/\S+)\r?\n/.exec(output); // the whole line, not a chunk cut mid-URL
            if (started) {
                clearTimeout(timer);
                resolve(started[1] as string);
            }
        };
        child.stdout?.on("data", onData);
        child.stderr?.on("data", onData);
        child.once("exit", (code, signal) => {
            clearTimeout(timer);
            reject(new Error(`host exited early (${signal ?? code}):\n${output}`));
        });
    });
    return { child, url, output: () => output };
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
