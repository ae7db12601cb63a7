import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { uniqueName } from "../helpers/names";
import { ensureHostBuilt, killAllHosts, SHORT_VISIBILITY_SETTINGS, spawnHost } from "./support/hostProcess";
import { APP_DIR, call, DURABLE, durableApi, loggedLines, waitFor } from "./support/hostTestClient";

const ENTITIES_APP = path.join(APP_DIR, "entities");
const connectionString = inject("azuriteConnectionString");
const counterDir = mkdtempSync(path.join(tmpdir(), "host-entities-crash-"));

const runs = (name: string) => loggedLines(path.join(counterDir, `${name}.log`));

async function counter(url: string, key: string): Promise<{ value: number; applied: number[] } | undefined> {
    const reply = await call("GET", `${url}${DURABLE}/entities/counter/${key}`);
    return reply.status === 200 ? reply.json() : undefined;
}

beforeAll(() => {
    ensureHostBuilt();
}, 180_000);

afterAll(async () => {
    await killAllHosts();
});

it("resumes an entity batch and its calling orchestration after the host is SIGKILLed mid-operation: the lost batch runs again, committed operations are not re-applied", async () => {
    const env = {
        AzureWebJobsStorage: connectionString,
        ENTITIES_HUB: uniqueName("entcrash"),
        ENTITIES_COUNTER_DIR: counterDir,
        ...SHORT_VISIBILITY_SETTINGS,
    };
    const key = uniqueName("k");
    const id = uniqueName("blocking");

    const first = await spawnHost(ENTITIES_APP, env);
    for (const amount of [1, 2]) expect((await call("POST", `${first.url}${DURABLE}/entities/counter/${key}?op=add`, amount)).status).toBe(202);
    await waitFor("the first two adds", async () => (await counter(first.url, key))?.value === 3, 20_000);
    expect((await durableApi(first.url).start("callBlocking", id, { key, amount: 5, release: `${key}.release` })).status).toBe(202);
    await waitFor("the blocking operation to start in the first host", () => runs(`blockingAdd-${key}`).length === 1, 20_000);
    first.child.kill("SIGKILL");
    await new Promise((resolve) => first.child.once("exit", resolve));

    const second = await spawnHost(ENTITIES_APP, env);
    await waitFor("the lost batch to run again in the second host", () => runs(`blockingAdd-${key}`).length === 2, 20_000);
    expect((await call("POST", `${second.url}${DURABLE}/entities/counter/${key}?op=add`, 10)).status).toBe(202);
    writeFileSync(path.join(counterDir, `${key}.release`), "go");

    const status = await durableApi(second.url).until(id, ["Completed"], 20_000);
    expect(status.output).toEqual({ first: `activity ${key}`, afterBlocking: 8, value: 18 });
    expect(await counter(second.url, key)).toEqual({ value: 18, applied: [1, 2, 5, 10] });
    expect(runs(`blockingAdd-${key}`).map(Number)).toEqual([first.child.pid, second.child.pid]);

    second.child.kill("SIGTERM");
    expect(await new Promise((resolve) => second.child.once("exit", resolve))).toBe(0);
}, 90_000);
