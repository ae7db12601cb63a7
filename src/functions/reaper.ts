import * as df from "durable-functions";
import { appConfig, keeperDeps, recoveryDeps } from "../shared/composition";
import { reap } from "../shared/recovery/reaper";
import { keepWebhooks } from "../shared/webhooks/keepWebhooks";

df.app.client.timer("reaper", {
    schedule: appConfig().REAPER_SCHEDULE,
    handler: async (_timer, client, context) => {
        await reap(await recoveryDeps(context, client));
        await keepWebhooks(await keeperDeps(context), "reaper run");
    },
});
