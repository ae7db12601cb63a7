import * as df from "durable-functions";
import { appConfig, sweepDeps, sweepRequestQueueName } from "../shared/composition";
import { sweepRequested } from "../shared/webhooks/sweepRequested";

// A site's sweep, asked for by a webhook callback (coalesced per slot): the same routine sweep as the timer's.
df.app.client.storageQueue("intakeSweepRequested", {
    queueName: sweepRequestQueueName(appConfig()),
    connection: "AzureWebJobsStorage",
    handler: async (message, client, context) => {
        await sweepRequested(await sweepDeps(context, client), message);
    },
});
