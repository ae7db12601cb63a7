import * as df from "durable-functions";
import { provisionProduct } from "../orchestrators/provisionProduct";
import { appConfig } from "../shared/composition";
import { OrchestrationNames } from "../shared/orchestration/startAttempt";

const config = appConfig();

df.app.orchestration(
    OrchestrationNames.provisionProduct,
    provisionProduct({
        firstRetryMs: config.STEP_RETRY_FIRST_SECONDS * 1000,
        maxRetryMs: config.STEP_RETRY_MAX_SECONDS * 1000,
        maxAttempts: config.STEP_RETRY_ATTEMPTS,
    }),
);
