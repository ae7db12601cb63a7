import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";

/** The host's command line (the bin `functions-host`): `node <HOST_MAIN> --app <dir> --port <port>`. */
export const HOST_MAIN: string = path.join(__dirname, "main.js");

export interface HostProcessOptions {
    /** The app's folder (its package.json's "main" is what the host loads). */
    appDir: string;
    /** The port the host listens on, the same after every restart (127.0.0.1). */
    port: number;
    /**
     * The app's and the host's settings, given to the process as its environment over this
     * process's. The object is kept, not copied: `start(overrides)` writes the overrides into it.
     */
    settings: Record<string, string>;
    /** More environment over the settings (not app settings: the harness's own switches). */
    env?: Record<string, string>;
    /** Node's arguments before the host's script, e.g. `["--require", preload]`. */
    nodeArgs?: readonly string[];
    /** How long start() waits for the host to report Running. Default 30 s. */
    startTimeoutMs?: number;
    /** How often start() asks for the host's status. Default 100 ms. */
    pollIntervalMs?: number;
    /** How many of the last output lines `logs` keeps (Infinity: every one). Default 400. */
    keptLines?: number;
}

interface LineListener {
    pattern: RegExp;
    heard(line: string): void;
}

/**
 * The local Functions host as a child process (the `functions-host` bin with --app and --port), as
 * tools and tests need it beside the app's in-process `startHost`: started and restarted on the
 * same port, stopped (SIGTERM) or killed (SIGKILL, as a crashed VM) at any moment, its output
 * collected line by line across restarts, its functions fired through the admin API.
 */
export class HostProcess {
    readonly url: string;
    /** The last output lines (stdout and stderr) of every run, oldest first. */
    readonly logs: string[] = [];
    private child: ChildProcess | undefined;
    private listeners: LineListener[] = [];
    private readonly keptLines: number;

    constructor(protected readonly options: HostProcessOptions) {
        this.url = `http://127.0.0.1:${options.port}`;
        this.keptLines = options.keptLines ?? 400;
    }

    get settings(): Record<string, string> {
        return this.options.settings;
    }

    get pid(): number | undefined {
        return this.running() ? this.child?.pid : undefined;
    }

    /**
     * Starts the host (again), with `overrides` written into the settings first, and resolves
     * once it reports Running with the time that took (ms from spawn: the cold start).
     */
    async start(overrides: Record<string, string> = {}): Promise<number> {
        Object.assign(this.options.settings, overrides);
        const spawnedAt = performance.now();
        const child = spawn(process.execPath, [...(this.options.nodeArgs ?? []), HOST_MAIN, "--app", this.options.appDir, "--port", String(this.options.port)], {
            env: { ...process.env, ...this.options.settings, ...this.options.env },
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
        const timeoutMs = this.options.startTimeoutMs ?? 30_000;
        const deadline = Date.now() + timeoutMs;
        for (;;) {
            if (!this.running()) throw this.startFailure(`The host exited while starting:\n${this.logs.slice(-40).join("\n")}`);
            if ((await this.status()) === "Running") return performance.now() - spawnedAt;
            if (Date.now() > deadline) throw this.startFailure(`The host did not start within ${timeoutMs / 1000} s:\n${this.logs.slice(-40).join("\n")}`);
            await new Promise((resolve) => setTimeout(resolve, this.options.pollIntervalMs ?? 100));
        }
    }

    /** Stops the host the way the platform does (SIGTERM; SIGKILL if it has not exited after 10 s). */
    stop(): Promise<void> {
        return this.signal("SIGTERM");
    }

    /** SIGKILL: the process dies mid-whatever, as on a crashed VM. */
    kill(): Promise<void> {
        return this.signal("SIGKILL");
    }

    /** Stops the host and starts it again on the same port. */
    async restart(overrides: Record<string, string> = {}): Promise<number> {
        await this.stop();
        return this.start(overrides);
    }

    running(): boolean {
        return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
    }

    /** Runs a timer, queue or activity function now (`POST /admin/functions/{name}`, 202), as the platform's admin API does. */
    async fire(name: string, input = ""): Promise<void> {
        const response = await this.admin("POST", `functions/${name}`, { input });
        if (response.status !== 202) throw new Error(`Firing ${name} answered ${response.status}: ${await response.text()}`);
    }

    /** A call to the host's admin API (`/admin/<route>`, JSON), answered as it comes. */
    admin(method: string, route: string, body?: unknown): Promise<Response> {
        return fetch(`${this.url}/admin/${route}`, {
            method,
            headers: { "content-type": "application/json" },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
    }

    /** Calls `heard` with every output line matching `pattern` from now on, across restarts. */
    onLine(pattern: RegExp, heard: (line: string) => void): void {
        this.listeners.push({ pattern, heard });
    }

    /**
     * Resolves with the next output line matching `pattern`. Call it before causing the line
     * (e.g. before `fire`), so that a fast line is not missed.
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

    /** The error start() throws when the host exits or does not come up; a harness may give its own kind. */
    protected startFailure(message: string): Error {
        return new Error(message);
    }

    private take(line: string): void {
        this.logs.push(line);
        if (this.logs.length > this.keptLines) this.logs.splice(0, this.logs.length - this.keptLines);
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
