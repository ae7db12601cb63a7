import { expect, it } from "vitest";
import { uniqueName } from "../helpers/names";
import { APP_DIR, conformanceSettings, durableApi, probe, testLog, waitFor } from "./support/hostTestClient";
import { useInProcessHost } from "./support/inProcessHost";

// Set through the app setting this time, not HostOptions.duplicateActivities.
const host = useInProcessHost(APP_DIR, ({ connectionString }) => conformanceSettings(connectionString, { LOCALHOST_DUPLICATE_ACTIVITIES: "concurrent" }), {
    pollIntervalMs: 200,
    log: testLog("duplicates-concurrent"),
});

it("duplicateActivities=concurrent starts every activity twice at once and reports the first to finish", async () => {
    const key = uniqueName("conc");
    const api = durableApi(host.url);
    await api.start("countedOrchestration", key, { key, firstRunDelayMs: 400 });
    const status = await api.until(key, ["Completed"]);
    // Run 1 sleeps 400 ms, so run 2 finishes first and its result is the one reported.
    expect(status.output).toBe(2);
    // Wait for run 1 to end as well (rather than sleeping past its delay).
    const runs = await waitFor("both runs to end", async () => {
        const { activityRuns } = await probe(host.url);
        return activityRuns[`counted-${key}-end`]?.length === 2 ? activityRuns : undefined;
    });
    const starts = runs[`counted-${key}`] as { at: number }[];
    const ends = runs[`counted-${key}-end`] as { at: number; run: number }[];
    expect(starts).toHaveLength(2);
    expect(ends.map((e) => e.run)).toEqual([2, 1]);
    const firstEnd = ends.find((e) => e.run === 1) as { at: number };
    expect((starts[1] as { at: number }).at).toBeLessThan(firstEnd.at);
});
