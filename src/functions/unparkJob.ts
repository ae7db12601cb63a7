import * as df from "durable-functions";
import { recoveryDeps } from "../shared/composition";
import { unparkJob } from "../shared/recovery/unpark";

df.app.client.http("unparkJob", {
    route: "jobs/{jobKey}/unpark",
    methods: ["POST"],
    authLevel: "function",
    handler: async (request, client, context) =>
        unparkJob(await recoveryDeps(context, client), request.params.jobKey ?? "", await request.text()),
});
