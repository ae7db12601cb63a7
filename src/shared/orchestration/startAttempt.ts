import type { JobKey } from "../jobs/JobRow";
import { instanceIdFor } from "../jobs/instanceIds";
import type { Orchestrations } from "./Orchestrations";

export const OrchestrationNames = { provisionProduct: "provisionProduct" } as const;

/**
 * Starts the orchestration of one attempt at a job, under the instance id derived from the job
 * and the attempt (never random), with the keys as its only input. Returns that id.
 */
export async function startAttempt(orchestrations: Orchestrations, key: JobKey, attempt: number): Promise<string> {
    const instanceId = instanceIdFor(key, attempt);
    await orchestrations.start(OrchestrationNames.provisionProduct, instanceId, { jobKey: key, attempt });
    return instanceId;
}
