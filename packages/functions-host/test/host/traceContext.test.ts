import path from "node:path";
import { describe, expect, it } from "vitest";
import { uniqueName } from "../helpers/names";
import { APP_DIR, base64, call, queue, testLog, waitFor } from "./support/hostTestClient";
import { useInProcessHost } from "./support/inProcessHost";

const queueName = uniqueName("traceq");
const host = useInProcessHost(
    path.join(APP_DIR, "bindings"),
    ({ connectionString }) => ({ AzureWebJobsStorage: connectionString, BindingsStorage: connectionString, BINDINGS_CONTAINER: "unused", BINDINGS_TABLE: "unused", BINDINGS_QUEUE: queueName, BINDINGS_ORDERS_QUEUE: uniqueName("orders") }),
    { pollIntervalMs: 200, log: testLog("traceContext") },
);

const W3C = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

describe("trace context", () => {
    it("continues the caller's W3C trace: same trace id and flags, a new span id, tracestate passed on", async () => {
        const callerTrace = "0af7651916cd43dd8448eb211c80319c";
        const reply = await call("GET", `${host.url}/api/trace`, undefined, { traceparent: `00-${callerTrace}-b7ad6b7169203331-00`, tracestate: "congo=t61rcWkgMzE" });
        const trace = reply.json();
        const [, traceId, spanId, flags] = W3C.exec(trace.traceparent) ?? [];
        expect(traceId).toBe(callerTrace);
        expect(spanId).not.toBe("b7ad6b7169203331");
        expect(flags).toBe("00");
        expect(trace.tracestate).toBe("congo=t61rcWkgMzE");
        expect(trace.attributes.OperationName).toBe("traceEcho");
        expect(trace.spanContext).toEqual({ traceId: callerTrace, spanId, traceFlags: 0, isRemote: true, traceState: "congo=t61rcWkgMzE" });
    });

    it("starts a new sampled trace per request when the caller sends none or an invalid traceparent", async () => {
        const first = (await call("GET", `${host.url}/api/trace`)).json();
        const second = (await call("GET", `${host.url}/api/trace`, undefined, { traceparent: `00-${"0".repeat(32)}-b7ad6b7169203331-01`, tracestate: "dropped=1" })).json();
        for (const trace of [first, second]) {
            expect(trace.traceparent).toMatch(W3C);
            expect(trace.traceparent.endsWith("-01")).toBe(true);
            expect(trace.tracestate).toBe("");
            expect(trace.spanContext).not.toBeNull();
        }
        expect(first.traceparent.split("-")[1]).not.toBe(second.traceparent.split("-")[1]);
    });

    it("gives queue and timer invocations a trace context that propagation can extract", async () => {
        const target = queue(host.connectionString, queueName);
        await target.createIfNotExists();
        await target.sendMessage(base64("hello"));
        await host.fire("traceTimer");
        const traces = await waitFor("the queue and timer invocations", async () => {
            const seen = (await call("GET", `${host.url}/api/seen`)).json().queueTraces as { function: string; traceparent: string; spanContext: unknown; attributes: Record<string, string> }[];
            return seen.length >= 2 ? seen : undefined;
        });
        expect(traces.map((t) => t.function).sort()).toEqual(["traceQueue", "traceTimer"]);
        for (const trace of traces) {
            expect(trace.traceparent).toMatch(W3C);
            expect(trace.spanContext).toBeTruthy();
            expect(trace.attributes.OperationName).toBe(trace.function);
        }
    });
});
