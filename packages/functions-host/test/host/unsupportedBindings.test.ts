import path from "node:path";
import { afterAll, expect, inject, it } from "vitest";
import { startHost, type RunningHost } from "../../src/index";
import { APP_DIR, call, testLog } from "./support/hostTestClient";

let host: RunningHost | undefined;

afterAll(async () => {
    await host?.stop();
});

it("refuses at load each function whose bindings the host does not implement, naming it and the binding type, and runs the others", async () => {
    const lines: string[] = [];
    const log = testLog("unsupportedBindings");
    host = await startHost({
        appDir: path.join(APP_DIR, "unsupported"),
        port: 0,
        settings: { AzureWebJobsStorage: inject("azuriteConnectionString") },
        log: (line) => {
            lines.push(line);
            log(line);
        },
    });
    const refused = lines.filter((line) => line.includes("could not be loaded and will not run"));
    expect(refused).toHaveLength(3);
    expect(refused.join("\n")).toMatch(/Function 'onBlob' binding '[^']+': the trigger binding type 'blobTrigger' is not supported/);
    expect(refused.join("\n")).toMatch(/Function 'savesToCosmos' binding '[^']+': the output binding type 'cosmosDB' is not supported/);
    expect(refused.join("\n")).toMatch(/Function 'readsSql' binding '[^']+': the input binding type 'sql' is not supported/);
    expect(refused.join("\n")).not.toContain("'fine'");

    const listed = (await call("GET", `${host.url}/admin/functions`)).json<{ name: string }[]>().map((fn) => fn.name);
    expect(listed).toEqual(["fine"]);
    expect((await call("GET", `${host.url}/api/fine`)).text).toBe("fine");
    expect((await call("POST", `${host.url}/api/savesToCosmos`, {})).status).toBe(404);
    expect((globalThis as { unsupportedAppRuns?: number }).unsupportedAppRuns).toBe(0);
});
