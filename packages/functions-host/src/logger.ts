import type { RpcLogLevel } from "./worker/coreTypes";

const LEVEL_NAMES: Record<RpcLogLevel, string> = {
    trace: "Trace",
    debug: "Debug",
    information: "Information",
    warning: "Warning",
    error: "Error",
    critical: "Critical",
    none: "None",
};

const LEVEL_RANK: Record<RpcLogLevel, number> = { trace: 0, debug: 1, information: 2, warning: 3, error: 4, critical: 5, none: 6 };

/** host.json `logging.logLevel.default` ("Information", "Debug", ...) as a worker level. */
export function toRpcLogLevel(text: string | undefined, fallback: RpcLogLevel): RpcLogLevel {
    if (!text) return fallback;
    const lower = text.toLowerCase();
    return (Object.keys(LEVEL_NAMES) as RpcLogLevel[]).find((level) => level === lower || LEVEL_NAMES[level].toLowerCase() === lower) ?? fallback;
}

/**
 * One line per log event, like `func start` prints them:
 * `[2025-01-01T00:00:00.000Z] Information Functions.hello [<invocationId>] message`
 * Host lines use `Host` in place of the function name and have no invocation id.
 */
export class HostLogger {
    readonly #write: (line: string) => void;
    readonly #minimum: RpcLogLevel;

    constructor(write: (line: string) => void, minimum: RpcLogLevel = "information") {
        this.#write = write;
        this.#minimum = minimum;
    }

    enabled(level: RpcLogLevel): boolean {
        return LEVEL_RANK[level] >= LEVEL_RANK[this.#minimum] && level !== "none";
    }

    host(level: RpcLogLevel, message: string): void {
        if (!this.enabled(level)) return;
        this.#emit(`[${new Date().toISOString()}] ${LEVEL_NAMES[level]} Host ${message}`);
    }

    info(message: string): void {
        this.host("information", message);
    }

    warn(message: string): void {
        this.host("warning", message);
    }

    error(message: string): void {
        this.host("error", message);
    }

    function(level: RpcLogLevel, functionName: string, invocationId: string | undefined, message: string): void {
        if (!this.enabled(level)) return;
        const id = invocationId ? ` [${invocationId}]` : "";
        this.#emit(`[${new Date().toISOString()}] ${LEVEL_NAMES[level]} Functions.${functionName}${id} ${message}`);
    }

    #emit(text: string): void {
        this.#write(text);
    }
}
