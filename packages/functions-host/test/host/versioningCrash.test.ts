import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { uniqueName } from "../helpers/names";
import { ensureHostBuilt, killAllHosts, SHORT_VISIBILITY_SETTINGS, spawnHost } from "./support/hostProcess";
import { APP_DIR, call, DURABLE, durableApi, loggedLines, waitFor } from "./support/hostTestClient";

const APP = path.join(APP_DIR, "hostversions");
const connectionString = inject("azuriteConnectionString");
const stateDir = mkdtempSync(path.join(tmpdir(), "hv-crash-"));

/** A slow job on loopback, outside the host: POST answers 202 + Location; the third GET answers 200. */
const job = { posts: 0, polls: 0 };
let jobServer: Server;
let jobUrl = "";

const runs = (key: string) => loggedLines(path.join(stateDir, `${key}.runs`)).length;

beforeAll(async () => {
    ensureHostBuilt();
    jobServer = createServer((req, res) => {
        if (req.method === "POST") {
            job.posts++;
            res.writeHead(202, { Location: "/job/status", "Retry-After": "1" }).end();
        } else {
            job.polls++;
            if (job.polls < 3) res.writeHead(202, { Location: "/job/status", "Retry-After": "1" }).end();
            else res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ done: true }));
        }
    });
    await new Promise<void>((resolve) => jobServer.listen(0, "127.0.0.1", resolve));
    jobUrl = `http://127.0.0.1:${(jobServer.address() as AddressInfo).port}/job`;
}, 180_000);

afterAll(async () => {
    await killAllHosts();
    await new Promise((resolve) => jobServer?.close(resolve));
});

it("after a SIGKILL, a restarted host with a newer defaultVersion runs the rejected instance, finishes a rewind and a callHttp poll, and fails a too-new version (Fail); an older host leaves a newer Running instance alone", async () => {
    const env = {
        AzureWebJobsStorage: connectionString,
        HV_HUB: uniqueName("hvc"),
        HV_STATE_DIR: stateDir,
        ...SHORT_VISIBILITY_SETTINGS,
    };
    const tooNew = uniqueName("x-new");
    const rewound = uniqueName("y-rw");
    const poller = uniqueName("h-http");

    // Host A: defaultVersion 1.0 (host.json), CurrentOrOlder, Reject.
    const first = await spawnHost(APP, env);
    const apiA = durableApi(first.url);
    expect((await call("POST", `${first.url}/api/hvstart/versioned/${tooNew}?version=2.0`, JSON.stringify("later"))).status).toBe(200);
    await apiA.start("rewindable", rewound, rewound);
    await apiA.start("httpCaller", poller, { url: jobUrl });
    await apiA.until(rewound, ["Failed"]);
    await waitFor("the first poll of the job", () => job.polls >= 1, 20_000);
    await waitFor("host A to reject the 2.0 instance", () => first.output().includes(`instance '${tooNew}' (versioned) has version '2.0'`));
    expect((await apiA.status(tooNew)).json().runtimeStatus).toBe("Pending");

    writeFileSync(path.join(stateDir, `${rewound}.ok`), "ok");
    expect((await call("POST", `${first.url}${DURABLE}/instances/${rewound}/rewind?reason=fixed`)).status).toBe(202);
    first.child.kill("SIGKILL");
    await new Promise((resolve) => first.child.once("exit", resolve));

    // Host B: defaultVersion 2.0, CurrentOrOlder, Fail.
    const second = await spawnHost(APP, {
        ...env,
        AzureFunctionsJobHost__extensions__durableTask__defaultVersion: "2.0",
        AzureFunctionsJobHost__extensions__durableTask__versionFailureStrategy: "Fail",
    });
    const apiB = durableApi(second.url);
    expect((await apiB.until(tooNew, ["Completed"], 30_000)).output).toEqual({ version: "2.0", echoed: "later" });
    expect((await apiB.until(rewound, ["Completed"], 30_000)).output).toEqual(["first", "allowed on run 2"]);
    expect(runs(rewound)).toBe(2);
    const polled = await apiB.until(poller, ["Completed"], 30_000);
    expect(polled.output).toMatchObject({ statusCode: 200, content: JSON.stringify({ done: true }) });
    expect(job.posts).toBe(1);
    expect(job.polls).toBeGreaterThanOrEqual(3);

    const newest = uniqueName("z-newest");
    expect((await call("POST", `${second.url}/api/hvstart/versioned/${newest}?version=3.0`, JSON.stringify("never"))).status).toBe(200);
    const failed = await apiB.until(newest, ["Failed"], 20_000, "?showHistory=true");
    expect(failed.output).toBe("Orchestration version did not comply with Worker Versioning");
    const completed = (failed.historyEvents as { EventType: string; FailureDetails?: { ErrorType: string; IsNonRetriable: boolean } }[]).find((e) => e.EventType === "ExecutionCompleted");
    expect(completed?.FailureDetails).toMatchObject({ ErrorType: "VersionMismatch", IsNonRetriable: true });
    expect(second.output()).not.toContain("Executing 'Functions.versioned' (Reason='(Orchestration) instance '" + newest);

    // A Running 2.0 instance, then a host that only runs up to 0.1 (Reject): the event is not applied, it stays Running.
    const waiting = uniqueName("w-run");
    await apiB.start("waiter", waiting);
    expect((await apiB.until(waiting, ["Running"])).version).toBe("2.0");
    second.child.kill("SIGTERM");
    expect(await new Promise((resolve) => second.child.once("exit", resolve))).toBe(0);

    const third = await spawnHost(APP, { ...env, AzureFunctionsJobHost__extensions__durableTask__defaultVersion: "0.1" });
    const apiC = durableApi(third.url);
    expect((await apiC.raise(waiting, "go", "late")).status).toBe(202);
    await waitFor("host C to reject the running 2.0 instance", () => third.output().includes(`instance '${waiting}' (waiter) has version '2.0'`) && third.output().includes("its EventRaised message is retried"));
    const still = (await apiC.status(waiting)).json();
    expect(still.runtimeStatus).toBe("Running");
    expect(still.output).toBeNull();
    third.child.kill("SIGKILL");
}, 120_000);
