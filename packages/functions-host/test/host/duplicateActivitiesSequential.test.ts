import { expect, it } from "vitest";
import { uniqueName } from "../helpers/names";
import { APP_DIR, conformanceSettings, durableApi, probe, testLog } from "./support/hostTestClient";
import { useInProcessHost } from "./support/inProcessHost";

const host = useInProcessHost(APP_DIR, ({ connectionString }) => conformanceSettings(connectionString), { duplicateActivities: "sequential", pollIntervalMs: 200, log: testLog("duplicates-sequential") });

it("duplicateActivities=sequential runs every activity twice, one after the other, and reports the second run", async () => {
    const key = uniqueName("seq");
    const api = durableApi(host.url);
    await api.start("countedOrchestration", key, { key, firstRunDelayMs: 300 });
    const status = await api.until(key, ["Completed"]);
    expect(status.output).toBe(2);
    const runs = (await probe(host.url)).activityRuns;
    const starts = runs[`counted-${key}`] as { at: number }[];
    const ends = runs[`counted-${key}-end`] as { at: number; run: number }[];
    expect(starts).toHaveLength(2);
    expect(ends.map((e) => e.run)).toEqual([1, 2]);
    expect((starts[1] as { at: number }).at).toBeGreaterThanOrEqual((ends[0] as { at: number }).at);
});
