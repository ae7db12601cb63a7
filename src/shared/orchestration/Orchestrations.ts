import type * as df from "durable-functions";

type RuntimeStatus =
    | "Running"
    | "Pending"
    | "Suspended"
    | "ContinuedAsNew"
    | "Completed"
    | "Failed"
    | "Terminated"
    | "Canceled";

/** States in which the host refuses a new start on the same instance id. */
export const LIVE_STATUSES: readonly RuntimeStatus[] = ["Running", "Pending", "Suspended", "ContinuedAsNew"];

export interface OrchestrationState {
    runtimeStatus: RuntimeStatus;
    customStatus?: unknown;
    output?: unknown;
    lastUpdatedTime?: string;
}

/** What Sheetwright asks of Durable Functions, over the `DurableClient`. */
export interface Orchestrations {
    /** `undefined` when the instance does not exist (never started, or purged). */
    status(instanceId: string): Promise<OrchestrationState | undefined>;
    start(name: string, instanceId: string, input: unknown): Promise<void>;
    raiseEvent(instanceId: string, eventName: string, data: unknown): Promise<void>;
    terminate(instanceId: string, reason: string): Promise<void>;
}

export function orchestrationsOver(client: df.DurableClient): Orchestrations {
    return {
        async status(instanceId) {
            try {
                const status = await client.getStatus(instanceId, { showInput: false });
                return {
                    runtimeStatus: String(status.runtimeStatus) as RuntimeStatus,
                    customStatus: status.customStatus,
                    output: status.output,
                    lastUpdatedTime: status.lastUpdatedTime ? new Date(status.lastUpdatedTime).toISOString() : undefined,
                };
            } catch (error) {
                // The SDK throws on 404 instead of returning nothing.
                if (error instanceof Error && /replied with HTTP 404/.test(error.message)) return undefined;
                throw error;
            }
        },
        async start(name, instanceId, input) {
            await client.startNew(name, { instanceId, input });
        },
        raiseEvent: (instanceId, eventName, data) => client.raiseEvent(instanceId, eventName, data),
        terminate: (instanceId, reason) => client.terminate(instanceId, reason),
    };
}
