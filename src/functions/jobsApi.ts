import * as df from "durable-functions";
import { app } from "@azure/functions";
import { jobsApiDeps } from "../shared/composition";
import { getJob, listJobs, webhookHealthReport } from "../shared/recovery/jobsApi";
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
