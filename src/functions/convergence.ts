import * as df from "durable-functions";
import { appConfig, provisioningDeps } from "../shared/composition";
import { convergeFleet, convergeProduct } from "../orchestrators/convergeProduct";
import { ClaimInput, ConvergenceNames, ConvergeStepInput } from "../shared/convergence/contracts";
import { claimConvergences, convergenceSteps, type ConvergenceStepName } from "../shared/convergence/convergeSteps";
import { z } from "zod";

const config = appConfig();
const policy = {
    firstRetryMs: config.STEP_RETRY_FIRST_SECONDS * 1000,
    maxRetryMs: config.STEP_RETRY_MAX_SECONDS * 1000,
    maxAttempts: config.STEP_RETRY_ATTEMPTS,
};

df.app.orchestration(ConvergenceNames.product, convergeProduct(policy));
df.app.orchestration(ConvergenceNames.fleet, convergeFleet({ ...policy, concurrency: config.CONVERGE_CONCURRENCY }));

df.app.activity("claimConvergences", {
    handler: async (raw: unknown, context) => claimConvergences(await provisioningDeps(context), ClaimInput.parse(raw)),
});

const ParkInput = ConvergeStepInput.extend({ reason: z.string().min(1) });
const inputs: { [N in ConvergenceStepName]: z.ZodType } = {
    beginConvergence: ConvergeStepInput,
    applyConvergence: ConvergeStepInput,
    parkConvergence: ParkInput,
    auditConvergence: ConvergeStepInput,
    completeConvergence: ConvergeStepInput,
};
for (const name of Object.keys(convergenceSteps) as ConvergenceStepName[]) {
    const step = convergenceSteps[name] as (deps: Awaited<ReturnType<typeof provisioningDeps>>, input: unknown) => Promise<unknown>;
    df.app.activity(name, { handler: async (raw: unknown, context) => step(await provisioningDeps(context), inputs[name].parse(raw)) });
}
