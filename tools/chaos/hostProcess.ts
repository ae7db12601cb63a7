import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { HOST_MAIN } from "@sheetwright/functions-host";
import { sweepLineKind, type SweepingHost } from "./owedStatusSweep";

/** The repository root: the compiled app (package.json "main") and the local host live under it. */
export const APP_DIR = path.resolve(__dirname, "..", "..", "..");
const CLOCK_SKEW_PRELOAD = path.join(APP_DIR, "dist", "tools", "chaos", "clockSkew.js");
const START_TIMEOUT_MS = 30_000;
const KEPT_LOG_LINES = 400;
/** Every line, for the auditor's look for raw customer text; a schedule writes far fewer. */
const KEPT_AUDITED_LINES = 100_000;

/** A harness problem (not a product failure): the schedule cannot be judged. */
export class HarnessError extends Error {
    override name = "HarnessError";
}

/** The local Functions host running the compiled app as a child process, killable at any moment. */
export class HostProcess implements SweepingHost {
    readonly url: string;
    /** The host's last output lines, for a failure report. */
    readonly logs: string[] = [];
    /** Every output line of every run of the host, as written (raw), for the auditor. */
    readonly allLines: string[] = [];
    private child: ChildProcess | undefined;
    private readonly sweeps = { ended: 0, siteFailures: 0 };

    /** `clockOffsetMs`: the host's wall clock runs this far ahead (behind when negative) of the harness's. */
    constructor(
        private readonly settings: Record<string, string>,
        private readonly port: number,
        readonly clockOffsetMs = 0,
    ) {
        this.url = `http://127.0.0.1:${port}`;
    }

    async start(): Promise<void> {
        const preload = this.clockOffsetMs === 0 ? [] : ["--require", CLOCK_SKEW_PRELOAD];
        const child = spawn(process.execPath, [...preload, HOST_MAIN, "--app", APP_DIR, "--port", String(this.port)], {
            env: { ...process.env, ...this.settings, CHAOS_CLOCK_OFFSET_MS: String(this.clockOffsetMs) },
            stdio: ["ignore", "pipe", "pipe"],
        });
        this.child = child;
        let partial = "";
        const collect = (chunk: Buffer) => {
            const lines = (partial + chunk.toString()).split("\n");
            partial = lines.pop() ?? "";
            this.logs.push(...lines);
            for (const line of lines) {
                const kind = sweepLineKind(line);
                if (kind === "ended") this.sweeps.ended += 1;
                else if (kind === "siteFailed") this.sweeps.siteFailures += 1;
            }
            if (this.allLines.length < KEPT_AUDITED_LINES) this.allLines.push(...lines);
            if (this.logs.length > KEPT_LOG_LINES) this.logs.splice(0, this.logs.length - KEPT_LOG_LINES);
        };
        child.stdout!.on("data", collect);
        child.stderr!.on("data", collect);
        const deadline = Date.now() + START_TIMEOUT_MS;
        for (;;) {
            if (this.exited()) throw new HarnessError(`the host exited while starting:\n${this.logs.slice(-30).join("\n")}`);
            if ((await this.status()) === "Running") return;
            if (Date.now() > deadline) throw new HarnessError(`the host did not start within ${START_TIMEOUT_MS} ms`);
            await new Promise((resolve) => setTimeout(resolve, 100));
        }
    }

    /** SIGKILL: the process dies mid-whatever, as on a crashed VM. */
    kill(): Promise<void> {
        return this.signal("SIGKILL");
    }

    stop(): Promise<void> {
        return this.signal("SIGTERM");
    }

    sweepsEnded(): { ended: number; siteFailures: number } {
        return { ...this.sweeps };
    }

    /** Runs a timer or queue function now (`POST /admin/functions/{name}`). */
    async fire(name: string): Promise<void> {
        await this.admin("POST", `functions/${name}`, { input: "" }, 202);
    }

    /** Makes the status reads of instances whose id starts with one of `prefixes` fail (500); `[]` clears. */
    async failStatusReads(prefixes: readonly string[]): Promise<void> {
        await this.admin("PUT", "faults/statusReads", { instanceIdPrefixes: prefixes }, 200);
    }

    private async admin(method: string, route: string, body: unknown, expected: number): Promise<void> {
        const response = await fetch(`${this.url}/admin/${route}`, {
            method,
            headers: { "content-type": "application/json" },
            body: JSON.stringify(body),
        });
        if (response.status === 404 && route.startsWith("faults/")) throw new HarnessError(`${method} /admin/${route} answered 404: the local host has no such switch`);
        if (response.status !== expected) throw new Error(`${method} /admin/${route} answered ${response.status}`);
    }

    running(): boolean {
        return !this.exited();
    }

    private exited(): boolean {
        return !this.child || this.child.exitCode !== null || this.child.signalCode !== null;
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
        if (this.exited()) return;
        const child = this.child!;
        const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
        child.kill(signal);
        const force = setTimeout(() => child.kill("SIGKILL"), 10_000);
        await exited;
        clearTimeout(force);
    }
}
