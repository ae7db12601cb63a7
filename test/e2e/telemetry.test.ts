import { describe, expect, it } from "vitest";
import { startE2E, useE2E, waitFor } from "../helpers/e2e";

describe("telemetry, the app running under the local Functions host", () => {
    const e2e = useE2E(startE2E);

    it("with TELEMETRY_EXPORTER=console, a sweep's events print with their dimensions, and its metrics when the host stops", { timeout: 120_000 }, async () => {
        const app = await e2e.start({ settings: { TELEMETRY_EXPORTER: "console" } });
        await app.fire("intakeSweep");
        const output = () => app.host.logs.join("\n");
        await waitFor(async () => /body: 'sweep\.completed'/.test(output()), "the sweep's sweep.completed on the console");
        expect(output()).toMatch(/body: 'job\.transition',[\s\S]*?attributes: \{[\s\S]*?event: 'job\.transition',[\s\S]*?site: 'default',[\s\S]*?from: 'new',[\s\S]*?to: 'queued'/);
        expect(output()).toMatch(/attributes: \{[\s\S]*?event: 'sweep\.completed',[\s\S]*?site: 'default',[\s\S]*?kind: 'routine'/);
        expect(output()).not.toContain(app.settings.SMARTSHEET_ACCESS_TOKEN!);

        await app.host.stop();
        // The metrics go out with the rest when the worker stops (appTerminate).
        expect(output()).toMatch(/name: 'sheetwright\.sweep\.found'/);
        expect(output()).toMatch(/name: 'sheetwright\.smartsheet\.calls'/);
    });

    it("refuses to start with TELEMETRY_EXPORTER=azure-monitor and no connection string, saying what to set", { timeout: 60_000 }, async () => {
        const error = await startE2E({ settings: { TELEMETRY_EXPORTER: "azure-monitor" } }).catch((caught: unknown) => caught as Error);
        expect(error).toBeInstanceOf(Error);
        expect((error as Error).message).toMatch(/TELEMETRY_EXPORTER is azure-monitor but APPLICATIONINSIGHTS_CONNECTION_STRING is not set: set it to the Application Insights resource's connection string/);
    });
});
