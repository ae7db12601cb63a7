import * as df from "durable-functions";
import { appConfig, starterDeps } from "../shared/composition";
import { startJob } from "../shared/orchestration/startJob";

df.app.client.storageQueue("provisionStarter", {
    queueName: appConfig().PROVISION_QUEUE,
    connection: "AzureWebJobsStorage",
    handler: async (message, client, context) => {
        await startJob(await starterDeps(context, client), message);
    },
});
