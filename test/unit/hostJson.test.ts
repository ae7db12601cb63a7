import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const hostJson = JSON.parse(readFileSync(path.resolve(__dirname, "..", "..", "host.json"), "utf8")) as {
    logging: { applicationInsights: { samplingSettings: { isEnabled: boolean; excludedTypes: string } } };
    extensions: { durableTask: { hubName: string; maxConcurrentActivityFunctions: number } };
};

describe("host.json for production", () => {
    it("takes the task hub's name from the TASK_HUB_NAME setting, so two apps or slots on one storage account never share a hub", () => {
        expect(hostJson.extensions.durableTask.hubName).toBe("%TASK_HUB_NAME%");
    });

    it("never samples away traces: the transition and count lines ops counts must all reach Application Insights", () => {
        const excluded = hostJson.logging.applicationInsights.samplingSettings.excludedTypes.split(";");
        expect(excluded).toEqual(expect.arrayContaining(["Trace", "Exception", "Request"]));
    });

    it("runs few enough activities at once per instance to stay inside one token's request budget (300 a minute)", () => {
        // Each activity has at most one Smartsheet call in flight; 8 at once cannot outrun 5 requests a second for long.
        expect(hostJson.extensions.durableTask.maxConcurrentActivityFunctions).toBeLessThanOrEqual(8);
    });
});
