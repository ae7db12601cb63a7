import { readFileSync } from "node:fs";
import path from "node:path";
import { HostProcess } from "@sheetwright/functions-host";

/** The repository root: the compiled app (package.json "main") lives under it. */
export const APP_DIR = path.resolve(__dirname, "..", "..", "..");

/**
 * The local Functions host running the compiled app as a child process, as in production one
 * process per instance (the package's HostProcess): killable with SIGKILL, its cold start timed
 * (start() resolves with it, polling every 10 ms), its memory readable, and its output watched
 * for the count lines the app writes (onLine, nextLine).
 */
export class BenchHost extends HostProcess {
    constructor(settings: Record<string, string>, port: number) {
        super({ appDir: APP_DIR, port, settings, startTimeoutMs: 60_000, pollIntervalMs: 10, keptLines: 2_000 });
    }

    /** Resident memory of the host process (VmRSS in /proc/<pid>/status), in MB. */
    residentMb(): number {
        const pid = this.pid;
        if (pid === undefined) throw new Error("The host is not running; its memory cannot be read.");
        const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
        if (!match) throw new Error(`/proc/${pid}/status has no VmRSS line (the bench reads memory the Linux way).`);
        return Number(match[1]) / 1024;
    }
}
