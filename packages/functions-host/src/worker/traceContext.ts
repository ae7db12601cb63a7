import { randomBytes, randomUUID } from "node:crypto";

export interface RpcTraceContext {
    traceParent: string;
    traceState: string;
    attributes: Record<string, string>;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const HOST_INSTANCE_ID = randomUUID();

/**
 * The trace context of one invocation, as the host hands it to the worker (the invocation
 * Activity's W3C id): a caller's valid `traceparent` (HTTP) keeps its trace id and flags and
 * gets a new span id, its `tracestate` is passed on; anything else starts a new sampled trace.
 * Attributes carry what the host's Activity tags carry for the worker's telemetry.
 */
export function invocationTraceContext(functionName: string, incoming?: { traceparent?: string; tracestate?: string }): RpcTraceContext {
    const parent = parseTraceparent(incoming?.traceparent);
    const traceId = parent?.traceId ?? randomHex(16);
    const flags = parent?.flags ?? "01";
    return {
        traceParent: `00-${traceId}-${randomHex(8)}-${flags}`,
        traceState: parent ? (incoming?.tracestate ?? "") : "",
        attributes: { OperationName: functionName, ProcessId: String(process.pid), HostInstanceId: HOST_INSTANCE_ID },
    };
}

/** W3C trace-context rules: version ff is invalid, all-zero trace or span ids are invalid; a future version may carry more fields. */
export function parseTraceparent(header: string | undefined): { traceId: string; spanId: string; flags: string } | undefined {
    const match = header ? TRACEPARENT.exec(header.trim().toLowerCase()) : null;
    if (!match) return undefined;
    const [, version, traceId, spanId, flags, rest] = match as unknown as [string, string, string, string, string, string | undefined];
    if (version === "ff" || (version === "00" && rest !== undefined)) return undefined;
    if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
    return { traceId, spanId, flags };
}

function randomHex(bytes: number): string {
    let hex = randomBytes(bytes).toString("hex");
    while (/^0+$/.test(hex)) hex = randomBytes(bytes).toString("hex");
    return hex;
}
