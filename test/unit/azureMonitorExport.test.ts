import { createHttpHeaders, type HttpClient, type PipelineRequest } from "@azure/core-rest-pipeline";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { startTelemetry, telemetryPlanOf } from "../../src/shared/telemetry/startTelemetry";

/** An Application Insights envelope, as far as the test reads it. */
interface Envelope {
    data: { baseType: string; baseData: { message?: string; properties?: Record<string, string>; metrics?: Array<{ name: string; value: number; count?: number }> } };
}

/** Stands in for the ingestion endpoint: keeps every envelope it is sent and accepts them all. */
function ingestion(): { client: HttpClient; envelopes: Envelope[]; urls: string[] } {
    const envelopes: Envelope[] = [];
    const urls: string[] = [];
    const bodyText = (request: PipelineRequest): string => {
        const body = request.body;
        if (typeof body === "string") return body;
        if (body instanceof Uint8Array) return request.headers.get("content-encoding") === "gzip" ? gunzipSync(body).toString("utf8") : Buffer.from(body).toString("utf8");
        throw new Error(`an exporter body of an unexpected kind: ${typeof body}`);
    };
    const client: HttpClient = {
        sendRequest: async (request) => {
            urls.push(request.url);
            const sent = JSON.parse(bodyText(request)) as Envelope[];
            envelopes.push(...sent);
            return {
                request,
                status: 200,
                headers: createHttpHeaders({ "content-type": "application/json" }),
                bodyAsText: JSON.stringify({ itemsReceived: sent.length, itemsAccepted: sent.length, errors: [] }),
            };
        },
    };
    return { client, envelopes, urls };
}

describe("the Azure Monitor exporter, as TELEMETRY_EXPORTER=azure-monitor starts it", () => {
    it("sends an event as a trace whose customDimensions are its dimensions, and a count as a custom metric, to the connection string's endpoint", async () => {
        const endpoint = ingestion();
        const plan = telemetryPlanOf({
            APPLICATIONINSIGHTS_CONNECTION_STRING: "InstrumentationKey=00000000-0000-0000-0000-000000000000;IngestionEndpoint=https://westeurope-5.in.applicationinsights.azure.com/",
        });
        const running = startTelemetry(plan, { exporterHttpClient: endpoint.client });
        running.telemetry.event("job.parked", { jobKey: "1-2", site: "acme", state: "parked", stage: "copy", attempt: 1, reason: "template gone" });
        running.telemetry.count("sheetwright.products.parked", { site: "acme" });
        await running.shutdown();

        expect(endpoint.urls.length).toBeGreaterThan(0);
        for (const url of endpoint.urls) expect(url.startsWith("https://westeurope-5.in.applicationinsights.azure.com/")).toBe(true);
        const traces = endpoint.envelopes.filter((envelope) => envelope.data.baseType === "MessageData");
        expect(traces.map((envelope) => ({ message: envelope.data.baseData.message, properties: envelope.data.baseData.properties }))).toContainEqual({
            message: "job.parked",
            properties: expect.objectContaining({ event: "job.parked", jobKey: "1-2", site: "acme", state: "parked", stage: "copy", attempt: "1", reason: "template gone" }),
        });
        const metrics = endpoint.envelopes.filter((envelope) => envelope.data.baseType === "MetricData");
        expect(metrics.map((envelope) => ({ metric: envelope.data.baseData.metrics?.[0], properties: envelope.data.baseData.properties }))).toContainEqual({
            metric: expect.objectContaining({ name: "sheetwright.products.parked", value: 1 }),
            properties: { site: "acme" },
        });
    });
});
