import * as df from "durable-functions";
import { appConfig, recoveryDeps } from "../shared/composition";
import { reap } from "../shared/recovery/reaper";

df.app.client.timer("reaper", {
    schedule: appConfig().REAPER_SCHEDULE,
    handler: async (_timer, client, context) => {
        await reap(await recoveryDeps(context, client));
    },
});
