import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { HistoryEvent } from "../../src/durable/historyEvent";
import { httpPollAfter, locationPollRequest } from "../../src/durable/httpActivity";
import { activeHistory, planRewind } from "../../src/durable/rewind";
import { uniqueName } from "../helpers/names";
import { APP_DIR, call, DURABLE, historyRows, loggedLines, waitFor } from "./support/hostTestClient";
import { useInProcessHost } from "./support/inProcessHost";

const stateDir = mkdtempSync(path.join(tmpdir(), "hm-state-"));
const lines: string[] = [];
const host = useInProcessHost(path.join(APP_DIR, "hostversions"), ({ connectionString, hub }) => ({ AzureWebJobsStorage: connectionString, HV_HUB: hub, HV_STATE_DIR: stateDir }), {
    hubPrefix: "hm",
    log: (line) => lines.push(line),
});
const { api, connectionString, hub } = host;

const instanceUrl = (id: string, op = "", query = "") => `${host.url}${DURABLE}/instances/${encodeURIComponent(id)}${op ? `/${op}` : ""}${query}`;
const runs = (key: string) => loggedLines(path.join(stateDir, `${key}.runs`)).length;
const allow = (key: string) => writeFileSync(path.join(stateDir, `${key}.ok`), "ok");

describe("rewind plans and HTTP polls (pure)", () => {
    const at = "2025-01-01T00:00:00.000Z";
    const ev = (e: Partial<HistoryEvent> & Pick<HistoryEvent, "EventType">): HistoryEvent => ({ EventId: -1, Timestamp: at, ...e });

    it("takes out the last failed attempt of a retried task with its dummy timer, keeps the retried failure, and hides earlier rewinds", () => {
        const history: HistoryEvent[] = [
            ev({ EventType: "ExecutionStarted", Name: "o" }),
            ev({ EventType: "TaskScheduled", EventId: 0, Name: "a", RetryOptions: "{}", Attempt: 1 }),
            ev({ EventType: "TaskFailed", TaskScheduledId: 0, Reason: "1" }),
            ev({ EventType: "TimerCreated", EventId: 1, TimerPurpose: "retry", ChainOf: 0, Attempt: 1 }),
            ev({ EventType: "TimerFired", TimerId: 1 }),
            ev({ EventType: "TaskScheduled", EventId: 2, Name: "a", RetryOptions: "{}", Attempt: 2, ChainOf: 0 }),
            ev({ EventType: "TaskFailed", TaskScheduledId: 2, Reason: "2" }),
            ev({ EventType: "TimerCreated", EventId: 3, TimerPurpose: "retry-final", ChainOf: 0, Attempt: 2 }),
            ev({ EventType: "TimerFired", TimerId: 3 }),
            ev({ EventType: "ExecutionCompleted", OrchestrationStatus: "Failed" }),
        ];
        const plan = planRewind(history);
        expect(plan.removed).toEqual([6, 7, 8, 9]);
        expect(plan.redo.map((op) => op.EventId)).toEqual([2]);
        const marked = [...history, ev({ EventType: "GenericEvent", Name: "Rewind", Input: JSON.stringify(plan.removed) })];
        expect(activeHistory(marked).map((e) => e.EventType)).toEqual(["ExecutionStarted", "TaskScheduled", "TaskFailed", "TimerCreated", "TimerFired", "TaskScheduled"]);
        expect(planRewind(marked).removed).toEqual([]);
    });

    it("polls a 202 with a Location after Retry-After, as a GET without the function key, and without credentials on another origin", () => {
        const request = { method: "POST", uri: "http://127.0.0.1:7071/api/job", content: "{}", headers: { "x-functions-key": "k", Authorization: "Bearer t", "x-test": "1" } };
        const op = ev({ EventType: "TaskScheduled", EventId: 0, Name: "BuiltIn::HttpActivity", Input: JSON.stringify(request) });
        const answer = (statusCode: number, headers: Record<string, string>) => ev({ EventType: "TaskCompleted", TaskScheduledId: 0, Result: JSON.stringify({ statusCode, headers, content: "" }) });
        expect(httpPollAfter(op, answer(202, { Location: "/api/job/1", "Retry-After": "2" }))).toEqual({ delayMs: 2000, location: "http://127.0.0.1:7071/api/job/1" });
        expect(httpPollAfter(op, answer(202, { location: "/x" }))?.delayMs).toBe(30_000);
        expect(httpPollAfter(op, answer(200, { Location: "/x" }))).toBeUndefined();
        expect(httpPollAfter(op, answer(202, {}))).toBeUndefined();
        expect(locationPollRequest(op, "http://127.0.0.1:7071/api/job/1")).toEqual({ method: "GET", uri: "http://127.0.0.1:7071/api/job/1", headers: { Authorization: "Bearer t", "x-test": "1" }, asynchronousPatternEnabled: undefined });
        expect(locationPollRequest(op, "http://elsewhere.example/job/1").headers).toEqual({ "x-test": "1" });
    });
});

describe.concurrent("suspend, resume, terminate and purge in states that do not allow them", () => {
    it("refuses to suspend a suspended instance and to resume a running one with the extension's 500 and warning, and to purge it", async () => {
        const id = uniqueName("susp");
        await api.start("waiter", id);
        await api.until(id, ["Running"]);

        const resumeRunning = await api.op(id, "resume");
        expect(resumeRunning.status).toBe(500);
        expect(resumeRunning.json()).toMatchObject({ ExceptionMessage: `Cannot resume the orchestration instance ${id} because instance is in the Running state.`, ExceptionType: "System.InvalidOperationException" });
        expect(lines.some((l) => l.includes("Cannot resume orchestration instance in the Running state.") && l.includes(id))).toBe(true);

        expect((await api.op(id, "suspend")).status).toBe(202);
        await api.until(id, ["Suspended"]);
        const suspendAgain = await api.op(id, "suspend");
        expect(suspendAgain.status).toBe(500);
        expect(suspendAgain.json().ExceptionMessage).toBe(`Cannot suspend the orchestration instance ${id} because instance is in the Suspended state.`);
        expect(lines.some((l) => l.includes("Cannot suspend orchestration instance in the Suspended state.") && l.includes(id))).toBe(true);
        const purgeSuspended = await api.purge(id);
        expect(purgeSuspended.status).toBe(400);
        expect(purgeSuspended.json().message).toContain("because it is in the Suspended state");

        expect((await api.op(id, "resume")).status).toBe(202);
        await api.until(id, ["Running"]);
        expect((await api.raise(id, "go", "done")).status).toBe(202);
        expect((await api.until(id, ["Completed"])).output).toBe("done");

        // Finished: terminate, suspend and resume are "gone".
        for (const op of ["terminate", "suspend", "resume"] as const) expect((await api.op(id, op)).status).toBe(410);
    });

    it("refuses to purge a running instance (400) and purges it once it has finished", async () => {
        const id = uniqueName("purge");
        await api.start("waiter", id);
        await api.until(id, ["Running"]);
        const refused = await api.purge(id);
        expect(refused.status).toBe(400);
        expect(refused.json().message).toContain("because it is in the Running state");
        expect((await api.status(id)).status).toBe(202);

        await api.raise(id, "go", 1);
        await api.until(id, ["Completed"]);
        const purged = await api.purge(id);
        expect(purged.status).toBe(200);
        expect(purged.json()).toEqual({ instancesDeleted: 1 });
        expect((await api.status(id)).status).toBe(404);
        expect((await api.purge(id)).status).toBe(404);
    });
});

describe.concurrent("restart", () => {
    it("restarts a finished instance under the same id, or a new one with restartWithNewInstanceId", async () => {
        const id = uniqueName("restart");
        await api.start("versioned", id, "again");
        await api.until(id, ["Completed"]);

        const same = await call("POST", instanceUrl(id, "restart", "?restartWithNewInstanceId=false"));
        expect(same.status).toBe(202);
        expect(same.json().id).toBe(id);
        await api.until(id, ["Completed"]);
        expect(lines.filter((l) => l.includes(`started 'versioned' instance '${id}'`))).toHaveLength(2);

        const fresh = await call("POST", instanceUrl(id, "restart"));
        expect(fresh.status).toBe(202);
        const newId = fresh.json().id as string;
        expect(newId).not.toBe(id);
        expect((await api.until(newId, ["Completed"])).output).toEqual({ version: "1.0", echoed: "again" });
    });

    it("refuses to restart a running instance under its own id, and answers 400 for an unknown one", async () => {
        const id = uniqueName("restart-run");
        await api.start("waiter", id);
        await api.until(id, ["Running"]);
        const running = await call("POST", instanceUrl(id, "restart", "?restartWithNewInstanceId=false"));
        expect(running.status).toBe(500);
        expect(running.json().ExceptionMessage).toContain("already exists");
        expect((await call("POST", instanceUrl(uniqueName("nobody"), "restart"))).status).toBe(400);
        await api.op(id, "terminate");
    });
});

describe.concurrent("rewind", () => {
    it("answers 404 for an unknown instance, 410 for a completed one and 500 for a running one", async () => {
        expect((await call("POST", instanceUrl(uniqueName("none"), "rewind", "?reason=x"))).status).toBe(404);
        const done = uniqueName("rw-done");
        await api.start("versioned", done, 1);
        await api.until(done, ["Completed"]);
        expect((await call("POST", instanceUrl(done, "rewind", "?reason=x"))).status).toBe(410);
        const running = uniqueName("rw-run");
        await api.start("waiter", running);
        await api.until(running, ["Running"]);
        const refused = await call("POST", instanceUrl(running, "rewind", "?reason=x"));
        expect(refused.status).toBe(500);
        expect(refused.json().ExceptionMessage).toBe("The rewind operation is only supported on failed orchestration instances.");
        await api.op(running, "terminate");
    });

    it("runs the failed activity again, keeps the completed one, and completes", async () => {
        const id = uniqueName("rw");
        await api.start("rewindable", id, id);
        const failed = await api.until(id, ["Failed"]);
        expect(failed.output).toContain("not allowed yet (run 1)");
        expect(runs(id)).toBe(1);

        allow(id);
        expect((await call("POST", instanceUrl(id, "rewind", "?reason=fixed"))).status).toBe(202);
        const status = await api.until(id, ["Completed"]);
        expect(status.output).toEqual(["first", "allowed on run 2"]);
        expect(runs(id)).toBe(2);
        expect(lines.filter((l) => l.includes("Functions.hvEcho") && l.includes(`instance '${id}'`) && l.includes("Executing"))).toHaveLength(1);

        // The status history shows no trace of the rewound failure; the table keeps the rows and the marker.
        const history = (await api.status(id, "?showHistory=true")).json().historyEvents as { EventType: string }[];
        expect(history.map((e) => e.EventType)).not.toContain("TaskFailed");
        expect(history.filter((e) => e.EventType === "ExecutionCompleted")).toHaveLength(1);
        const rows = await historyRows(connectionString, hub, id);
        expect(rows.filter((r) => r.EventType === "TaskFailed")).toHaveLength(1);
        expect(rows.filter((r) => r.EventType === "GenericEvent" && r.Name === "Rewind")).toHaveLength(1);
        expect((await call("POST", instanceUrl(id, "rewind", "?reason=again"))).status).toBe(410);
    });

    it("rewinds the final attempt of a retried activity only: the retry count goes on from there", async () => {
        const id = uniqueName("rw-retry");
        await api.start("rewindableWithRetry", id, id);
        await api.until(id, ["Failed"]);
        expect(runs(id)).toBe(2);
        allow(id);
        await call("POST", instanceUrl(id, "rewind", "?reason=fixed"));
        expect((await api.until(id, ["Completed"])).output).toBe("allowed on run 3");
        expect(runs(id)).toBe(3);
    });

    it("rewinds a failed sub-orchestration through its parent", async () => {
        const id = uniqueName("rw-parent");
        const child = `${id}-child`;
        await api.start("rewindableParent", id, child);
        await api.until(id, ["Failed"]);
        expect((await api.status(child)).json().runtimeStatus).toBe("Failed");
        allow(child);
        expect((await call("POST", instanceUrl(id, "rewind", "?reason=fixed"))).status).toBe(202);
        expect((await api.until(id, ["Completed"])).output).toEqual(["first", "allowed on run 2"]);
        expect((await api.status(child)).json().runtimeStatus).toBe("Completed");
    });
});

describe.concurrent("callHttp (BuiltIn::HttpActivity)", () => {
    it("follows the 202 Location polling pattern against a loopback URL", async () => {
        const id = uniqueName("http");
        await api.start("httpCaller", id, { url: `${host.url}/api/hvjob` });
        const status = await api.until(id, ["Completed"], 30_000);
        expect(status.output).toEqual({ statusCode: 200, content: JSON.stringify({ done: true, polls: 3 }), location: null });
        const jobId = id.replace(/[^A-Za-z0-9-]/g, "_");
        expect(readFileSync(path.join(stateDir, `job-${jobId}.posts`), "utf8").split("\n").filter(Boolean)).toEqual(["hv"]);
        // Every poll is a GET of the Location with the original headers.
        expect(readFileSync(path.join(stateDir, `job-${jobId}.polls`), "utf8").split("\n").filter(Boolean)).toEqual(["hv", "hv", "hv"]);
        const history = (await api.status(id, "?showHistory=true")).json().historyEvents as { EventType: string; FunctionName?: string }[];
        expect(history.filter((e) => e.EventType === "TaskCompleted").map((e) => e.FunctionName)).toEqual(Array(4).fill("BuiltIn::HttpActivity"));
        expect(history.filter((e) => e.EventType === "TimerFired")).toHaveLength(3);
    });

    it("returns the 202 as it is when polling is disabled", async () => {
        const id = uniqueName("http-nopoll");
        await api.start("httpCaller", id, { url: `${host.url}/api/hvjob`, polling: false });
        const status = await api.until(id, ["Completed"]);
        expect(status.output).toMatchObject({ statusCode: 202, location: `/api/hvjob/${id.replace(/[^A-Za-z0-9-]/g, "_")}` });
    });

    it("fails the orchestration loudly for a managed-identity tokenSource, and a refused connection fails the task", async () => {
        const token = uniqueName("http-token");
        await api.start("httpCaller", token, { url: `${host.url}/api/hvjob`, tokenSource: true });
        expect((await api.until(token, ["Failed"])).output).toContain("does not emulate callHttp with a tokenSource");

        const refused = uniqueName("http-refused");
        await api.start("httpCaller", refused, { url: "http://127.0.0.1:9/nothing" });
        expect((await api.until(refused, ["Failed"])).output).toContain("Activity function 'BuiltIn::HttpActivity' failed");
    });
});

it.concurrent("keeps an explicit sub-orchestration id across callSubOrchestratorWithRetry attempts", async () => {
    const id = uniqueName("subretry");
    await api.start("subRetryParent", id, id);
    const status = await api.until(id, ["Completed"]);
    expect(status.output).toBe(`${id}-explicit-child`);
    expect(runs(id)).toBe(2);
    const history = (await api.status(id, "?showHistory=true")).json().historyEvents as { EventType: string; InstanceId?: string }[];
    const attempts = history.filter((e) => e.EventType.startsWith("SubOrchestrationInstance"));
    expect(attempts.map((e) => [e.EventType, e.InstanceId])).toEqual([
        ["SubOrchestrationInstanceFailed", `${id}-explicit-child`],
        ["SubOrchestrationInstanceCompleted", `${id}-explicit-child`],
    ]);
    await waitFor("no other child instance", async () => (await api.status(`${id}:0`)).status === 404);
});
