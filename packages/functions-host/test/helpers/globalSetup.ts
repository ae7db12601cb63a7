import type { TestProject } from "vitest/node" with { "resolution-mode": "import" };
import { startAzurite, type RunningAzurite } from "../../src/azurite";

let azurite: RunningAzurite | undefined;

/** One Azurite for the host's tests; each isolates itself by table, queue and hub names. */
export async function setup(project: TestProject): Promise<void> {
    azurite = await startAzurite({ tablePort: 0, queuePort: 0 });
    project.provide("azuriteConnectionString", azurite.connectionString);
}

export async function teardown(): Promise<void> {
    await azurite?.stop();
}

declare module "vitest" {
    export interface ProvidedContext {
        azuriteConnectionString: string;
    }
}
