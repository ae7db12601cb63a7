import { describe, expect, it } from "vitest";
import { uniqueName } from "../helpers/names";
import { APP_DIR, call, conformanceSettings, historyRows, probe, sleep, testLog, waitFor } from "./support/hostTestClient";
import { useInProcessHost } from "./support/inProcessHost";

const host = useInProcessHost(APP_DIR, ({ connectionString, hub }) => conformanceSettings(connectionString, { HOSTAPP_HUB: hub }), { pollIntervalMs: 200, log: testLog("durable") });
const { api, connectionString, hub } = host;

/** [EventType, id] of the rows that carry sequence-id bookkeeping, in history order. */
async function idTrail(instanceId: string): Promise<[string, number][]> {
    const rows = await historyRows(connectionString, hub, instanceId);
    return rows
        .filter((r) => ["TaskScheduled", "TaskCompleted", "TaskFailed", "TimerCreated", "TimerFired"].includes(r.EventType))
        .map((r) => [r.EventType, r.EventType === "TaskCompleted" || r.EventType === "TaskFailed" ? (r.TaskScheduledId as number) : r.EventType === "TimerFired" ? (r.TimerId as number) : r.EventId]);
}

describe.concurrent("an orchestration using every durable feature", () => {
    it("runs callActivity, retries, Task.all, timers, Task.any with cancel, an external event from DurableClient.raiseEvent, custom status, a sub-orchestration and continueAsNew", async () => {
        const id = uniqueName("feature");
        const started = await call("POST", `${host.url}/api/orchestrators/featureOrchestration/${id}`, {});
        expect(started.status).toBe(202);
        expect(started.json().statusQueryGetUri).toContain(`${host.url}/runtime/webhooks/durabletask/instances/${id}`);
        expect(started.headers.get("location")).toBe(started.json().statusQueryGetUri);

        await waitFor("the approval wait", async () => (await api.status(id)).json().customStatus?.stage === "waiting-for-approval");
        expect((await call("POST", `${host.url}/api/events/${id}/approval`, { ok: true })).status).toBe(202);

        const status = await api.until(id, ["Completed"]);
        expect(status.customStatus).toEqual({ stage: "done" });
        expect(status.output).toMatchObject({
            hello: "Hello P1",
            retried: 2,
            fanOut: [1, 2, 3],
            approved: { ok: true },
            child: { echoed: { from: "parent" }, parent: id },
            generation: 1,
            final: "second generation",
        });
        expect(status.output.timerWaitedMs).toBeGreaterThanOrEqual(300);

        // continueAsNew replaced the first generation's history with the second one's.
        const rows = await historyRows(connectionString, hub, id);
        expect(rows.filter((r) => r.EventType === "ExecutionStarted")).toHaveLength(1);
        expect(rows.map((r) => r.EventType)).not.toContain("EventRaised");

        // The sub-orchestration got the default id <parent>:<sequence id> (ids 0-8 went to the earlier tasks and timers).
        const child = await api.status(`${id}:9`);
        expect(child.status).toBe(200);
        expect(child.json()).toMatchObject({ name: "childOrchestration", runtimeStatus: "Completed" });
    });

    it("serves the history to DurableClient.getStatus (the client reads `history`)", async () => {
        const id = uniqueName("hist");
        await api.start("helloOrchestration", id, "history");
        await api.until(id, ["Completed"]);
        const status = (await call("GET", `${host.url}/api/status/${id}`)).json();
        expect(status.output).toBe("Hello history");
        expect(status.history.map((e: any) => e.EventType)).toEqual(["ExecutionStarted", "TaskCompleted", "ExecutionCompleted"]);
        expect(status.history[1]).toMatchObject({ FunctionName: "sayHello", Result: "Hello history" });
    });
});

describe.concurrent("retries (callActivityWithRetry)", () => {
    it("records TaskScheduled/TaskFailed/TimerCreated/TimerFired with the real host's ids and delays", async () => {
        const id = uniqueName("retry");
        await api.start("retryOrchestration", id, { key: id, failTimes: 2, maxAttempts: 3, firstRetryMs: 200, backoff: 2 });
        const status = await api.until(id, ["Completed"]);
        expect(status.output).toBe(3);
        expect(await idTrail(id)).toEqual([
            ["TaskScheduled", 0],
            ["TaskFailed", 0],
            ["TimerCreated", 1],
            ["TimerFired", 1],
            ["TaskScheduled", 2],
            ["TaskFailed", 2],
            ["TimerCreated", 3],
            ["TimerFired", 3],
            ["TaskScheduled", 4],
            ["TaskCompleted", 4],
        ]);
        const rows = await historyRows(connectionString, hub, id);
        const timers = rows.filter((r) => r.EventType === "TimerCreated");
        expect(timers.map((t) => (t.FireAt as Date).getTime() - t._Timestamp.getTime())).toEqual([200, 400]);
        for (const timer of timers) {
            // The episode that delivered TimerFired started no earlier than the timer's FireAt.
            const fired = rows.findIndex((r) => r.EventType === "TimerFired" && r.TimerId === timer.EventId);
            const episodeStart = rows.slice(0, fired).reverse().find((r) => r.EventType === "OrchestratorStarted");
            expect(episodeStart?._Timestamp.getTime()).toBeGreaterThanOrEqual((timer.FireAt as Date).getTime());
        }
    });

    it("fails after the last attempt, following it with the immediate 'dummy' timer", async () => {
        const id = uniqueName("retryfail");
        await api.start("retryOrchestration", id, { key: id, failTimes: 99, maxAttempts: 3, firstRetryMs: 50 });
        const status = await api.until(id, ["Failed"]);
        expect(status.output).toContain("deliberate flaky failure 3");
        expect(await idTrail(id)).toEqual([
            ["TaskScheduled", 0],
            ["TaskFailed", 0],
            ["TimerCreated", 1],
            ["TimerFired", 1],
            ["TaskScheduled", 2],
            ["TaskFailed", 2],
            ["TimerCreated", 3],
            ["TimerFired", 3],
            ["TaskScheduled", 4],
            ["TaskFailed", 4],
            ["TimerCreated", 5],
            ["TimerFired", 5],
        ]);
        const dummy = (await historyRows(connectionString, hub, id)).find((r) => r.EventType === "TimerCreated" && r.EventId === 5);
        expect((dummy?.FireAt as Date).getTime()).toBe(dummy?._Timestamp.getTime());
        expect((await probe(host.url)).activityRuns[`flaky-${id}`]).toHaveLength(3);
    });
});

describe.concurrent("timers", () => {
    it("splits a timer longer than 6 days into legs of 3 days, with the SDK's sequence ids", async () => {
        const id = uniqueName("long");
        await api.start("longTimerOrchestration", id);
        await waitFor("the first timer leg", async () => (await historyRows(connectionString, hub, id)).some((r) => r.EventType === "TimerCreated"));
        const leg = (await historyRows(connectionString, hub, id)).find((r) => r.EventType === "TimerCreated");
        expect(leg?.EventId).toBe(0);
        expect((leg?.FireAt as Date).getTime() - (leg?._Timestamp as Date).getTime()).toBe(3 * 86_400_000);
        expect((await api.raise(id, "stop", null)).status).toBe(202);
        expect((await api.until(id, ["Completed"])).output).toBe("stopped early");
    });
});

describe.concurrent("large values", () => {
    it("round-trips inputs and outputs larger than a table property or a queue message", async () => {
        const id = uniqueName("large");
        const big = "x".repeat(100_000);
        await api.start("helloOrchestration", id, big);
        const status = await api.until(id, ["Completed"], 20_000, "?showHistory=true&showHistoryOutput=true");
        expect(status.input).toBe(big);
        expect(status.output).toBe(`Hello ${big}`);
        expect(status.historyEvents.find((e: any) => e.EventType === "TaskCompleted").Result).toBe(`Hello ${big}`);
    });
});

describe.concurrent("external events", () => {
    it("buffers an event raised before the orchestrator waits for it", async () => {
        const id = uniqueName("early");
        await api.start("waitOrchestration", id);
        expect((await api.raise(id, "go", { early: true })).status).toBe(202);
        expect((await api.until(id, ["Completed"])).output).toEqual({ early: true });
    });

    it("answers 404 for an unknown instance and 410 once the instance finished", async () => {
        expect((await api.raise(uniqueName("nobody"), "go", 1)).status).toBe(404);
        const id = uniqueName("done");
        await api.start("helloOrchestration", id, "x");
        await api.until(id, ["Completed"]);
        expect((await api.raise(id, "go", 1)).status).toBe(410);
    });
});

describe.concurrent("terminate", () => {
    it("terminates while an activity runs: the activity still finishes, the instance stays Terminated", async () => {
        const id = uniqueName("term");
        const key = uniqueName("block");
        await api.start("blockingOrchestration", id, key);
        await waitFor("the blocking activity to start", async () => (await probe(host.url)).blocking[key]?.started === true);
        expect((await api.op(id, "terminate", "stop now")).status).toBe(202);
        const terminated = await api.until(id, ["Terminated"]);
        expect(terminated.output).toBe("stop now");
        expect((await probe(host.url)).blocking[key].finished).toBeUndefined();

        await call("POST", `${host.url}/api/release/${key}`);
        await waitFor("the activity to finish", async () => (await probe(host.url)).blocking[key]?.finished === true);
        await sleep(400);
        const after = (await api.status(id)).json();
        expect(after).toMatchObject({ runtimeStatus: "Terminated", output: "stop now" });
        const types = (await historyRows(connectionString, hub, id)).map((r) => r.EventType);
        expect(types).toContain("ExecutionTerminated");
        expect(types).not.toContain("TaskCompleted");
        expect((await api.op(id, "terminate")).status).toBe(410);
    });
});

describe.concurrent("suspend and resume", () => {
    it("delivers no events while Suspended and continues after resume", async () => {
        const id = uniqueName("susp");
        await api.start("waitOrchestration", id);
        await waitFor("the wait", async () => (await api.status(id)).json().customStatus === "waiting");
        expect((await api.op(id, "suspend", "hold on")).status).toBe(202);
        const suspended = await api.until(id, ["Suspended"]);
        expect((await api.status(id)).status).toBe(202);
        expect(suspended.runtimeStatus).toBe("Suspended");
        expect((await api.raise(id, "go", "resumed value")).status).toBe(202);
        await sleep(600);
        expect((await api.status(id)).json().runtimeStatus).toBe("Suspended");
        expect((await historyRows(connectionString, hub, id)).map((r) => r.EventType)).not.toContain("EventRaised");
        expect((await api.op(id, "resume", "go on")).status).toBe(202);
        const done = await api.until(id, ["Completed"], 20_000, "?showHistory=true");
        expect(done.output).toBe("resumed value");
        expect(done.historyEvents.map((e: any) => e.EventType)).toEqual(expect.arrayContaining(["ExecutionSuspended", "ExecutionResumed", "EventRaised"]));
    });
});

describe.concurrent("determinism check", () => {
    it("fails an instance whose replay diverges from its history, saying what differed", async () => {
        const id = uniqueName("nondet");
        await api.start("nonDeterministicOrchestration", id);
        const status = await api.until(id, ["Failed"]);
        expect(status.output).toContain("Non-Deterministic workflow detected");
        expect(status.output).toContain("an activity task named 'sayHello' with sequence ID 0");
        expect(status.output).toContain("scheduled an activity task named 'echo' instead");
    });
});

describe.concurrent("instance ids and startNew", () => {
    it("refuses startNew on a running id (500, as the host) and overwrites a completed one with a new execution", async () => {
        const id = uniqueName("reuse");
        const key = uniqueName("block");
        await api.start("blockingOrchestration", id, key);
        await waitFor("the blocking activity to start", async () => (await probe(host.url)).blocking[key]?.started === true);
        const refused = await api.start("helloOrchestration", id, "again");
        expect(refused.status).toBe(500);
        expect(refused.text).toContain("already exists");
        const viaClient = await call("POST", `${host.url}/api/client/start/${id}`);
        expect(viaClient.status).toBe(500);
        expect(viaClient.json().error).toContain("already exists");

        await call("POST", `${host.url}/api/release/${key}`);
        expect((await api.until(id, ["Completed"])).output).toBe(`released ${key}`);
        expect((await api.start("helloOrchestration", id, "again")).status).toBe(202);
        const second = await api.until(id, ["Completed"]);
        expect(second).toMatchObject({ name: "helloOrchestration", output: "Hello again", input: "again" });
        const rows = await historyRows(connectionString, hub, id);
        expect(rows.filter((r) => r.EventType === "ExecutionStarted").map((r) => r.Name)).toEqual(["helloOrchestration"]);
    });

    it("validates instance ids and orchestrator names with 400", async () => {
        expect((await api.start("helloOrchestration", "bad#id", "x")).status).toBe(400);
        expect((await api.start("helloOrchestration", "@entity", "x")).status).toBe(400);
        expect((await api.start("helloOrchestration", "x".repeat(257), "x")).status).toBe(400);
        const unknown = await api.start("noSuchOrchestration", uniqueName("x"));
        expect(unknown.status).toBe(400);
        expect(unknown.text).toContain("doesn't exist");
    });
});

describe.concurrent("status, purge and list", () => {
    it("answers 404 for an unknown instance (DurableClient.getStatus throws)", async () => {
        expect((await api.status(uniqueName("ghost"))).status).toBe(404);
        const viaClient = await call("GET", `${host.url}/api/status/${uniqueName("ghost")}`);
        expect(viaClient.status).toBe(404);
        expect(viaClient.json().error).toContain("404");
    });

    it("purges a finished instance (200 {instancesDeleted:1}), then it is gone (404)", async () => {
        const id = uniqueName("purge");
        await api.start("helloOrchestration", id, "bye");
        await api.until(id, ["Completed"]);
        const purged = await api.purge(id);
        expect(purged.status).toBe(200);
        expect(purged.json()).toEqual({ instancesDeleted: 1 });
        expect((await api.status(id)).status).toBe(404);
        expect(await historyRows(connectionString, hub, id)).toEqual([]);
        expect((await api.purge(id)).status).toBe(404);
        const viaClient = (await call("POST", `${host.url}/api/client/purge/${id}`)).json();
        expect(viaClient).toEqual({ instancesDeleted: 0 });
    });

    it("lists instances with filters and pages with x-ms-continuation-token", async () => {
        const prefix = uniqueName("list");
        const ids = [1, 2, 3, 4, 5].map((n) => `${prefix}-${n}`);
        for (const id of ids) await api.start("helloOrchestration", id, id);
        for (const id of ids) await api.until(id, ["Completed"]);

        const seen: string[] = [];
        const pageSizes: number[] = [];
        let token: string | undefined;
        do {
            const page = await api.list(`?instanceIdPrefix=${prefix}&top=2`, token);
            expect(page.status, page.text).toBe(200);
            pageSizes.push(page.json().length);
            seen.push(...page.json().map((s: any) => s.instanceId));
            token = page.headers.get("x-ms-continuation-token") ?? undefined;
        } while (token);
        expect(pageSizes).toEqual([2, 2, 1]);
        expect(seen.sort()).toEqual([...ids].sort());

        expect((await api.list(`?instanceIdPrefix=${prefix}&runtimeStatus=Running,Pending`)).json()).toEqual([]);
        expect((await api.list(`?instanceIdPrefix=${prefix}&runtimeStatus=Completed`)).json()).toHaveLength(5);
        const future = new Date(Date.now() + 3_600_000).toISOString();
        expect((await api.list(`?instanceIdPrefix=${prefix}&createdTimeFrom=${future}`)).json()).toEqual([]);
        expect((await api.list(`?runtimeStatus=Bogus`)).status).toBe(400);

        const viaClient = (await call("POST", `${host.url}/api/client/list`)).json();
        expect(viaClient.map((s: any) => s.instanceId)).toEqual(expect.arrayContaining(ids));
    });

    it("lets DurableClient terminate, suspend and resume through the API", async () => {
        const id = uniqueName("clientops");
        await api.start("waitOrchestration", id);
        await waitFor("the wait", async () => (await api.status(id)).json().customStatus === "waiting");
        expect((await call("POST", `${host.url}/api/client/suspend/${id}`)).status).toBe(202);
        await api.until(id, ["Suspended"]);
        expect((await call("POST", `${host.url}/api/client/resume/${id}`)).status).toBe(202);
        await api.until(id, ["Running"]);
        expect((await call("POST", `${host.url}/api/client/terminate/${id}`)).status).toBe(202);
        expect((await api.until(id, ["Terminated"])).output).toBe("terminated by client");
    });
});
