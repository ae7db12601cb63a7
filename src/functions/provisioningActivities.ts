import * as df from "durable-functions";
import { provisioningDeps } from "../shared/composition";
import type { StepOutcome } from "../shared/provisioning/contracts";
import { provisioningSteps, stepInputSchemas, type StepName } from "../shared/provisioning/steps";

function register<N extends StepName>(name: N): void {
    const step = provisioningSteps[name] as (deps: Awaited<ReturnType<typeof provisioningDeps>>, input: unknown) => Promise<StepOutcome>;
    df.app.activity(name, {
        handler: async (raw: unknown, context) => step(await provisioningDeps(context), stepInputSchemas[name].parse(raw)),
    });
}

for (const name of Object.keys(provisioningSteps) as StepName[]) register(name);
