import path from "node:path";
import { HostProcess as LocalHostProcess } from "@sheetwright/functions-host";
import { sweepLineKind, type SweepingHost } from "./owedStatusSweep";

/** The repository root: the compiled app (package.json "main") lives under it. */
export const APP_DIR = path.resolve(__dirname, "..", "..", "..");
const CLOCK_SKEW_PRELOAD = path.join(APP_DIR, "dist", "tools", "chaos", "clockSkew.js");
const KEPT_LOG_LINES = 400;
/** Every line, for the auditor's look for raw customer text; a schedule writes far fewer. */
const KEPT_AUDITED_LINES = 100_000;

/** A harness problem (not a product failure): the schedule cannot be judged. */
export class HarnessError extends Error {
    override name = "HarnessError";
}

/**
 * The local Functions host running the compiled app as a child process, killable at any moment
 * (the package's HostProcess), with what the harness adds: a wall clock set off by
 * `clockOffsetMs` (the clock-skew preload), the sweeps it ran to the end, every line kept for the
 * auditor, and the status-read fault switch.
 */
export class HostProcess extends LocalHostProcess implements SweepingHost {
    /** Every output line of every run of the host, as written (raw), for the auditor. */
    readonly allLines: string[] = [];
    private readonly sweeps = { ended: 0, siteFailures: 0 };

    /** `clockOffsetMs`: the host's wall clock runs this far ahead (behind when negative) of the harness's. */
    constructor(
        settings: Record<string, string>,
        port: number,
        readonly clockOffsetMs = 0,
    ) {
        super({
            appDir: APP_DIR,
            port,
            settings,
            env: { CHAOS_CLOCK_OFFSET_MS: String(clockOffsetMs) },
            nodeArgs: clockOffsetMs === 0 ? [] : ["--require", CLOCK_SKEW_PRELOAD],
            keptLines: KEPT_LOG_LINES,
        });
        this.onLine(/^/, (line) => {
            const kind = sweepLineKind(line);
            if (kind === "ended") this.sweeps.ended += 1;
            else if (kind === "siteFailed") this.sweeps.siteFailures += 1;
            if (this.allLines.length < KEPT_AUDITED_LINES) this.allLines.push(line);
        });
    }

    sweepsEnded(): { ended: number; siteFailures: number } {
        return { ...this.sweeps };
    }

    /** Runs a timer or queue function now (`POST /admin/functions/{name}`). */
    override async fire(name: string): Promise<void> {
        await this.expect("POST", `functions/${name}`, { input: "" }, 202);
    }

    /** Makes the status reads of instances whose id starts with one of `prefixes` fail (500); `[]` clears. */
    async failStatusReads(prefixes: readonly string[]): Promise<void> {
        await this.expect("PUT", "faults/statusReads", { instanceIdPrefixes: prefixes }, 200);
    }

    protected override startFailure(message: string): Error {
        return new HarnessError(message.charAt(0).toLowerCase() + message.slice(1));
    }

    private async expect(method: string, route: string, body: unknown, expected: number): Promise<void> {
        const response = await this.admin(method, route, body);
        if (response.status === 404 && route.startsWith("faults/")) throw new HarnessError(`${method} /admin/${route} answered 404: the local host has no such switch`);
        if (response.status !== expected) throw new Error(`${method} /admin/${route} answered ${response.status}`);
    }
}
