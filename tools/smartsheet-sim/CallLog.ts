import type { FaultKind } from "./FaultInjector";
import type { SimOperation } from "./SimOperation";

export interface CallLogEntry {
    /** "unknown" for a path the simulator does not serve. */
    op: SimOperation | "unknown";
    method: string;
    /** The request path without its query string. */
    path: string;
    query?: string;
    /** null when the response was withheld (`commitThenHang`). */
    status: number | null;
    /** Smartsheet's errorCode of an error answer (4003 rate limited, 4004 retry later, …). */
    errorCode?: number;
    /** When the request arrived, ISO-8601 with milliseconds. */
    at: string;
    fault?: FaultKind;
    /** The bearer token the call came with ("(none)", "(unknown)"): each token's rate limit counted apart. */
    token?: string;
}

export interface CallsSnapshot {
    total: number;
    byOperation: Partial<Record<SimOperation | "unknown", number>>;
    /** Calls by the bearer token they came with ("(none)" without one): each site's token counted apart. */
    byToken: Record<string, number>;
    log: CallLogEntry[];
}

/** Every REST call the simulator answered (or refused), rejected ones included. */
export class CallLog {
    private entries: CallLogEntry[] = [];
    private total = 0;
    private byOperation: Partial<Record<SimOperation | "unknown", number>> = {};
    private byToken: Record<string, number> = {};

    constructor(private readonly maxEntries = 50_000) {}

    record(entry: CallLogEntry, token = "(none)"): void {
        this.total += 1;
        this.byOperation[entry.op] = (this.byOperation[entry.op] ?? 0) + 1;
        this.byToken[token] = (this.byToken[token] ?? 0) + 1;
        this.entries.push({ ...entry, token });
        if (this.entries.length > this.maxEntries) this.entries.splice(0, this.entries.length - this.maxEntries);
    }

    snapshot(): CallsSnapshot {
        return { total: this.total, byOperation: { ...this.byOperation }, byToken: { ...this.byToken }, log: this.entries.map((entry) => ({ ...entry })) };
    }

    reset(): void {
        this.entries = [];
        this.total = 0;
        this.byOperation = {};
        this.byToken = {};
    }
}
