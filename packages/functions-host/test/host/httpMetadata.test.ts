import { TableClient } from "@azure/data-tables";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { BindingData, resolveBindingExpressions } from "../../src/bindings/bindingExpressions";
import { httpTriggerMetadata } from "../../src/http/httpBindingData";
import { uniqueName } from "../helpers/names";
import { APP_DIR, call, waitFor, testLog } from "./support/hostTestClient";
import { useInProcessHost } from "./support/inProcessHost";

// An app with HTTP streaming on (app.setup({ enableHttpStream: true })): request.params and the
// headers come from the trigger metadata the host sends, as they do on Azure.
const tableName = uniqueName("stream");
const host = useInProcessHost(path.join(APP_DIR, "metadata-stream"), ({ connectionString, hub }) => ({ AzureWebJobsStorage: connectionString, STREAM_HUB: hub, STREAM_TABLE: tableName }), {
    log: testLog("httpMetadata"),
});

describe("HTTP streaming mode", () => {
    it("runs the durable-js samples' HTTP starter, which reads request.params.orchestratorName, to a completed orchestration", async () => {
        const reply = await call("POST", `${host.url}/api/orchestrators/sayHelloOrchestration`, "Ada", { "content-type": "text/plain" });
        expect(reply.status).toBe(202);
        const status = await waitFor("the orchestration to complete", async () => {
            const body = (await call("GET", reply.json().statusQueryGetUri)).json();
            return body.runtimeStatus === "Completed" ? body : undefined;
        });
        expect(status.output).toEqual(["Hello Ada 1", "Hello Ada 2"]);
    });

    it("gives request.params the route parameters, every query parameter but code, and the JSON body's scalar properties", async () => {
        const reply = await call("POST", `${host.url}/api/echo/7?page=2&id=fromQuery&code=secret&tag=a&tag=b`, { customer: "acme", count: 3, ok: false, nested: { a: 1 } }, { "x-test": "yes" });
        expect(reply.status).toBe(200);
        const body = reply.json();
        expect(body.params).toEqual({ id: "7", page: "2", tag: "a,b", customer: "acme", count: "3", ok: "False" });
        expect(body.header).toBe("yes");
        expect(body.query).toEqual({ page: "2", id: "fromQuery", code: "secret", tag: "b" });
        expect(body.triggerMetadata).toBeNull();
    });

    it("streams a chunked body (no Content-Length) through untouched, without body properties", async () => {
        const text = JSON.stringify({ customer: "never-bound" });
        const stream = new ReadableStream({
            start(controller) {
                controller.enqueue(new TextEncoder().encode(text));
                controller.close();
            },
        });
        const response = await fetch(`${host.url}/api/echo/9`, { method: "POST", body: stream, duplex: "half", headers: { "content-type": "application/json" } } as RequestInit);
        const body = (await response.json()) as { params: Record<string, string>; bodyLength: number };
        expect(body.params).toEqual({ id: "9" });
        expect(body.bodyLength).toBe(text.length);
    });

    it("resolves output binding expressions from the query, the headers, the route and the body", async () => {
        const reply = await call("POST", `${host.url}/api/rows/5?pk=part`, { customer: "zed" }, { "x-row": "h" });
        expect(reply.status).toBe(201);
        // In streaming mode the response leaves through the worker's proxy before the host writes the outputs.
        const table = TableClient.fromConnectionString(host.connectionString, tableName, { allowInsecureConnection: true });
        const entity = await waitFor("the row the output binding writes", () => table.getEntity<{ body: string }>("part", "5-h-zed"));
        expect(JSON.parse(entity.body)).toEqual({ customer: "zed" });
    });
});

describe("HTTP trigger metadata", () => {
    const metadata = (url: string, body?: string, params: Record<string, string> = {}) =>
        httpTriggerMetadata({ functionName: "f", url: new URL(url), headers: { "x-a": "1" }, params, body: body === undefined ? undefined : Buffer.from(body) });

    it("lets query parameters replace body properties and route parameters replace both, case-insensitively, keeping the first spelling", () => {
        const data = metadata("http://h/api/x?NAME=query&Id=q", JSON.stringify({ name: "body", other: 1 }), { id: "route" });
        expect(data.name).toEqual({ string: "query" });
        expect(data.Id).toEqual({ string: "route" });
        expect(data.other).toEqual({ string: "1" });
        expect(JSON.parse(data.Query?.json ?? "")).toEqual({ NAME: "query", Id: "q" });
        expect(JSON.parse(data.Headers?.json ?? "")).toEqual({ "x-a": "1" });
        expect(JSON.parse(data.sys?.json ?? "").MethodName).toBe("f");
    });

    it("adds nothing for a body that is not a JSON object, and lets a body property named Query shadow the query dictionary", () => {
        expect(Object.keys(metadata("http://h/api/x", "[1,2]")).sort()).toEqual(["Headers", "Query", "sys"]);
        expect(Object.keys(metadata("http://h/api/x", "plain text")).sort()).toEqual(["Headers", "Query", "sys"]);
        expect(metadata("http://h/api/x?a=1", JSON.stringify({ query: "mine" })).query).toEqual({ string: "mine" });
    });
});

describe("binding expressions", () => {
    const data = BindingData.fromTriggerMetadata(
        httpTriggerMetadata({ functionName: "f", url: new URL("http://h/api/x?Name=ann"), headers: { "x-part": "p1" }, params: { id: "42" }, body: Buffer.from(JSON.stringify({ order: { id: 7 } })) }),
    );

    it("resolves names and dotted paths case-insensitively, and {{ }} as literal braces", () => {
        expect(resolveBindingExpressions("c/{ID}/{query.name}-{Query.NAME}/{headers.X-Part}/{order.id}/{{x}}", data)).toBe("c/42/ann-ann/p1/7/{x}");
        expect(resolveBindingExpressions("{sys.methodname}", data)).toBe("f");
    });

    it("makes a new guid per {rand-guid} and formats {datetime}, and refuses a name the trigger data lacks with the host's message", () => {
        const [first, second] = resolveBindingExpressions("{rand-guid}/{rand-guid:N}", data).split("/");
        expect(first).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
        expect(second).toMatch(/^[0-9a-f]{32}$/);
        expect(resolveBindingExpressions("{datetime}", data)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}Z$/);
        expect(() => resolveBindingExpressions("c/{missing}", data)).toThrow("No value for named parameter 'missing'.");
        expect(() => resolveBindingExpressions("c/{order.nope}", data)).toThrow("No value for named parameter 'order.nope'.");
        expect(() => resolveBindingExpressions("{datetime:yyyy}", data)).toThrow(/date format/);
    });
});
