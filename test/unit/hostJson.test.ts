import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const hostJson = JSON.parse(readFileSync(path.resolve(__dirname, "..", "..", "host.json"), "utf8")) as {
    logging: { applicationInsights: { samplingSettings: { isEnabled: boolean; excludedTypes: string } } };
    extensions: { durableTask: { hubName: string; maxConcurrentActivityFunctions: number }; queues: { maxPollingInterval?: string } };
};

describe("host.json for production", () => {
    it("takes the task hub's name from the TASK_HUB_NAME setting, so two apps or slots on one storage account never share a hub", () => {
        expect(hostJson.extensions.durableTask.hubName).toBe("%TASK_HUB_NAME%");
    });

    it("never samples away traces: the transition and count lines ops counts must all reach Application Insights", () => {
        const excluded = hostJson.logging.applicationInsights.samplingSettings.excludedTypes.split(";");
        expect(excluded).toEqual(expect.arrayContaining(["Trace", "Exception", "Request"]));
    });

    it("polls its idle queues every 2 s at most, so a webhook's sweep request is picked up in seconds, not after the queue trigger's default back-off of up to a minute", () => {
        const [hours, minutes, seconds] = (hostJson.extensions.queues.maxPollingInterval ?? "00:01:00").split(":").map(Number);
        expect(hours! * 3600 + minutes! * 60 + seconds!).toBeLessThanOrEqual(2);
    });

    // Each activity has at most one Smartsheet call in flight, and the pacer holds the rest back.
    const perSecond = 300 / 60;
    it("runs enough activities at once to keep a token's 300 requests a minute busy while copies take up to 3 s each", () => {
        expect(hostJson.extensions.durableTask.maxConcurrentActivityFunctions).toBeGreaterThanOrEqual(perSecond * 3);
    });

    it("runs few enough that a request queued behind all of them waits well inside the shortest rate-limit deadline start-up allows at Smartsheet's minute (6 s)", () => {
        expect(hostJson.extensions.durableTask.maxConcurrentActivityFunctions / perSecond).toBeLessThanOrEqual(6 / 2);
    });
});
