import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { uniqueName } from "../helpers/names";
import { ensureHostBuilt, killAllHosts, SHORT_VISIBILITY_SETTINGS, spawnHost } from "./support/hostProcess";
import { APP_DIR, conformanceSettings, durableApi, loggedLines, waitFor } from "./support/hostTestClient";

const connectionString = inject("azuriteConnectionString");
const counterDir = mkdtempSync(path.join(tmpdir(), "host-crash-"));

const runs = (name: string) => loggedLines(path.join(counterDir, `${name}.log`));

beforeAll(() => {
    ensureHostBuilt();
}, 180_000);

afterAll(async () => {
    await killAllHosts();
});

it("resumes an orchestration after the host is SIGKILLed mid-activity: the lost activity runs again, nothing else does", async () => {
    const env = conformanceSettings(connectionString, {
        HOSTAPP_COUNTER_DIR: counterDir,
        ...SHORT_VISIBILITY_SETTINGS,
    });
    const key = uniqueName("crash");

    const first = await spawnHost(APP_DIR, env);
    expect((await durableApi(first.url).start("crashOrchestration", key, key)).status).toBe(202);
    await waitFor("the blocking activity to start in the first host", () => runs(`blocking-${key}-b`).length === 1, 20_000);
    first.child.kill("SIGKILL");
    await new Promise((resolve) => first.child.once("exit", resolve));

    const second = await spawnHost(APP_DIR, env);
    await waitFor("the lost activity to run again in the second host", () => runs(`blocking-${key}-b`).length === 2, 20_000);
    // Longer than the 2 s work-item visibility: the running activity's item must be kept hidden (renewed), not re-run.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(runs(`blocking-${key}-b`)).toHaveLength(2);
    writeFileSync(path.join(counterDir, `${key}-b.release`), "go");
    const status = await durableApi(second.url).until(key, ["Completed"], 20_000);
    expect(status.output).toEqual([1, `released ${key}-b`, 1]);

    const blockingRuns = runs(`blocking-${key}-b`).map((line) => Number(line.split(" ")[0]));
    expect(blockingRuns).toEqual([first.child.pid, second.child.pid]);
    expect(runs(`counted-${key}-a`)).toHaveLength(1);
    expect(runs(`counted-${key}-a-end`)).toHaveLength(1);
    expect(runs(`counted-${key}-c`)).toHaveLength(1);
    expect(runs(`counted-${key}-c-end`)).toHaveLength(1);

    second.child.kill("SIGTERM");
    const code = await new Promise((resolve) => second.child.once("exit", resolve));
    expect(code).toBe(0);
    expect(second.output()).toContain("Host stopped.");
}, 90_000);
