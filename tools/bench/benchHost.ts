import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { HOST_MAIN } from "@sheetwright/functions-host";

/** The repository root: the compiled app (package.json "main") and the local host live under it. */
export const APP_DIR = path.resolve(__dirname, "..", "..", "..");
const START_TIMEOUT_MS = 60_000;
const KEPT_LOG_LINES = 2_000;

interface LineListener {
    pattern: RegExp;
    heard(line: string): void;
}

/**
 * The local Functions host running the compiled app as a child process, as in production one
 * process per instance: killable with SIGKILL, its cold start timed, its memory readable, and
 * its output watched for the count lines the app writes.
 */
export class BenchHost {
    readonly url: string;
    /** The last output lines, for an error report. */
    private readonly logs: string[] = [];
    private child: ChildProcess | undefined;
    private listeners: LineListener[] = [];

    constructor(
        private readonly settings: Record<string, string>,
        private readonly port: number,
    ) {
        this.url = `http://127.0.0.1:${port}`;
    }

    /** Starts the process and resolves with its cold start: ms from spawn until the host reports Running. */
    async start(): Promise<number> {
        const spawnedAt = performance.now();
        const child = spawn(process.execPath, [HOST_MAIN, "--app", APP_DIR, "--port", String(this.port)], {
            env: { ...process.env, ...this.settings },
            stdio: ["ignore", "pipe", "pipe"],
        });
        this.child = child;
        let partial = "";
        const collect = (chunk: Buffer) => {
            const lines = (partial + chunk.toString()).split("\n");
            partial = lines.pop() ?? "";
            for (const line of lines) this.take(line);
        };
        child.stdout!.on("data", collect);
        child.stderr!.on("data", collect);
        const deadline = Date.now() + START_TIMEOUT_MS;
        for (;;) {
            if (!this.running()) throw new Error(`The host exited while starting:\n${this.logs.slice(-30).join("\n")}`);
            if ((await this.status()) === "Running") return performance.now() - spawnedAt;
            if (Date.now() > deadline) throw new Error(`The host did not start within ${START_TIMEOUT_MS / 1000} s:\n${this.logs.slice(-30).join("\n")}`);
            await new Promise((resolve) => setTimeout(resolve, 10));
        }
    }

    /** SIGKILL: the process dies mid-whatever, as on a crashed VM. */
    kill(): Promise<void> {
        return this.signal("SIGKILL");
    }

    stop(): Promise<void> {
        return this.signal("SIGTERM");
    }

    running(): boolean {
        return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
    }

    /** Runs a timer or queue function now (`POST /admin/functions/{name}`), as the platform's admin API does. */
    async fire(name: string, input = ""): Promise<void> {
        const response = await fetch(`${this.url}/admin/functions/${name}`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ input }),
        });
        if (response.status !== 202) throw new Error(`Firing ${name} answered ${response.status}: ${await response.text()}`);
    }

    /**
     * Resolves with the next output line matching `pattern`. Call it before causing the line
     * (e.g. before `fire`), so a fast line is not missed.
     */
    nextLine(pattern: RegExp, timeoutMs: number): Promise<string> {
        return new Promise((resolve, reject) => {
            const timer = setTimeout(() => {
                this.listeners = this.listeners.filter((listener) => listener !== once);
                reject(new Error(`No host output matched ${pattern} within ${timeoutMs / 1000} s; last lines:\n${this.logs.slice(-20).join("\n")}`));
            }, timeoutMs);
            const once: LineListener = {
                pattern,
                heard: (line) => {
                    clearTimeout(timer);
                    this.listeners = this.listeners.filter((listener) => listener !== once);
                    resolve(line);
                },
            };
            this.listeners.push(once);
        });
    }

    /** Calls `heard` with every output line matching `pattern` from now on, across restarts. */
    onLine(pattern: RegExp, heard: (line: string) => void): void {
        this.listeners.push({ pattern, heard });
    }

    /** Resident memory of the host process (VmRSS in /proc/<pid>/status), in MB. */
    residentMb(): number {
        const pid = this.child?.pid;
        if (pid === undefined || !this.running()) throw new Error("The host is not running; its memory cannot be read.");
        const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
        if (!match) throw new Error(`/proc/${pid}/status has no VmRSS line (the bench reads memory the Linux way).`);
        return Number(match[1]) / 1024;
    }

    private take(line: string): void {
        this.logs.push(line);
        if (this.logs.length > KEPT_LOG_LINES) this.logs.splice(0, this.logs.length - KEPT_LOG_LINES);
        for (const listener of this.listeners.filter((candidate) => candidate.pattern.test(line))) listener.heard(line);
    }

    private async status(): Promise<string | undefined> {
        try {
            const response = await fetch(`${this.url}/admin/host/status`);
            return response.ok ? ((await response.json()) as { state?: string }).state : undefined;
        } catch {
            return undefined;
        }
    }

    private async signal(signal: NodeJS.Signals): Promise<void> {
        if (!this.running()) return;
        const child = this.child!;
        const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
        child.kill(signal);
        const force = setTimeout(() => child.kill("SIGKILL"), 10_000);
        await exited;
        clearTimeout(force);
    }
}
