import * as df from "durable-functions";
import { appConfig, sweepDeps } from "../shared/composition";
import { sweepIntake } from "../shared/intake/intakeSweep";

df.app.client.timer("intakeFullSweep", {
    schedule: appConfig().INTAKE_FULL_SWEEP_SCHEDULE,
    handler: async (_timer, client, context) => {
        await sweepIntake(await sweepDeps(context, client), "full");
    },
});
