import * as df from "durable-functions";
import { app } from "@azure/functions";
import { appConfig, jobStore } from "../shared/composition";
import { getJob, listJobs } from "../shared/recovery/jobsApi";
import { orchestrationsOver } from "../shared/orchestration/Orchestrations";

app.http("listJobs", {
    route: "jobs",
    methods: ["GET"],
    authLevel: "function",
    handler: async (request) => listJobs(await jobStore(), appConfig().INTAKE_SHEET_ID, request.query.get("state")),
});

df.app.client.http("getJob", {
    route: "jobs/{jobKey}",
    methods: ["GET"],
    authLevel: "function",
    handler: async (request, client) => getJob(await jobStore(), orchestrationsOver(client), request.params.jobKey ?? ""),
});
