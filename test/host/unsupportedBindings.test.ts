import path from "node:path";
import { expect, inject, it } from "vitest";
import { startHost } from "../../tools/functions-host/index";
import { APP_DIR, testLog } from "./support/hostTestClient";

it("refuses at load an app with bindings the host does not implement, naming every function and binding type", async () => {
    const lines: string[] = [];
    const log = testLog("unsupportedBindings");
    const start = startHost({
        appDir: path.join(APP_DIR, "unsupported"),
        port: 0,
        settings: { AzureWebJobsStorage: inject("azuriteConnectionString") },
        log: (line) => {
            lines.push(line);
            log(line);
        },
    });
    const error = await start.then(
        () => undefined,
        (reason: unknown) => reason as Error,
    );
    expect(error).toBeInstanceOf(Error);
    expect(error?.message).toMatch(/Function 'onBlob' binding '[^']+': the trigger binding type 'blobTrigger' is not supported/);
    expect(error?.message).toMatch(/Function 'savesToCosmos' binding '[^']+': the output binding type 'cosmosDB' is not supported/);
    expect(error?.message).toMatch(/Function 'readsSql' binding '[^']+': the input binding type 'sql' is not supported/);
    expect(error?.message).not.toContain("'fine'");
    expect(lines.some((line) => line.includes("Host started"))).toBe(false);
    expect((globalThis as { unsupportedAppRuns?: number }).unsupportedAppRuns).toBe(0);
});
