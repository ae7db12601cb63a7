import * as df from "durable-functions";
import { app } from "@azure/functions";
import { convergeApiDeps, jobsApiDeps } from "../shared/composition";
import { convergenceApply, convergencePlan, convergenceTrial, convergenceVersions, getJob, listJobs, webhookHealthReport } from "../shared/recovery/jobsApi";
import { orchestrationsOver } from "../shared/orchestration/Orchestrations";

app.http("listJobs", {
    route: "jobs",
    methods: ["GET"],
    authLevel: "function",
    handler: async (request) =>
        listJobs(await jobsApiDeps(), {
            state: request.query.get("state"),
            site: request.query.get("site"),
            pageSize: request.query.get("pageSize"),
            continuation: request.query.get("continuation"),
        }),
});

df.app.client.http("getJob", {
    route: "jobs/{jobKey}",
    methods: ["GET"],
    authLevel: "function",
    handler: async (request, client) => getJob(await jobsApiDeps(), orchestrationsOver(client), request.params.jobKey ?? ""),
});

// The webhook receiver's health figure: what the timer sweeps found, per site and week, that no webhook announced.
app.http("webhookHealth", {
    route: "webhooks/health",
    methods: ["GET"],
    authLevel: "function",
    handler: async () => webhookHealthReport(await jobsApiDeps(), new Date()),
});

// Convergence, read-only: each product's plan to a template version (nothing is written to Smartsheet), and the products per version.
app.http("convergencePlan", {
    route: "converge/plan",
    methods: ["GET"],
    authLevel: "function",
    handler: async (request, context) =>
        convergencePlan(await convergeApiDeps(context), { to: request.query.get("to"), site: request.query.get("site"), product: request.query.get("product") }),
});

app.http("convergenceVersions", {
    route: "converge/versions",
    methods: ["GET"],
    authLevel: "function",
    handler: async (request, context) => convergenceVersions(await convergeApiDeps(context), { site: request.query.get("site") }),
});

// Convergence applied: one fleet instance per site brings its products to the version, a few at a time.
df.app.client.http("convergenceApply", {
    route: "converge",
    methods: ["POST"],
    authLevel: "function",
    handler: async (request, client, context) => {
        const body = await jsonBody(request, '{"to","site","product","by"}');
        if ("problem" in body) return body.problem;
        return convergenceApply({ ...(await convergeApiDeps(context)), orchestrations: orchestrationsOver(client) }, body.json);
    },
});

// Convergence tried on scratch copies of one product, audited and removed: the product is not touched.
app.http("convergenceTrial", {
    route: "converge/trial",
    methods: ["POST"],
    authLevel: "function",
    handler: async (request, context) => {
        const body = await jsonBody(request, '{"to","site","product"}');
        if ("problem" in body) return body.problem;
        return convergenceTrial(await convergeApiDeps(context), body.json);
    },
});

/** The request's JSON body (none: `{}`), or the 400 that says what to send. */
async function jsonBody(request: { text(): Promise<string> }, shape: string): Promise<{ json: unknown } | { problem: { status: number; jsonBody: { error: string } } }> {
    const text = await request.text();
    if (text.trim() === "") return { json: {} };
    try {
        return { json: JSON.parse(text) as unknown };
    } catch {
        return { problem: { status: 400, jsonBody: { error: `The body is not JSON; send ${shape} (each optional) or nothing.` } } };
    }
}
