"use strict";
const df = require("durable-functions");
const { state, recordRun, waitForRelease } = require("../lib/state");

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- activities ----

df.app.activity("sayHello", { handler: (name) => `Hello ${name}` });

df.app.activity("echo", { handler: (input) => input });

/** Fails its first `failTimes` runs for `key`; returns the run number once it succeeds. */
df.app.activity("flaky", {
    handler: (input) => {
        const run = recordRun(`flaky-${input.key}`, {});
        if (run <= input.failTimes) throw new Error(`deliberate flaky failure ${run}`);
        return run;
    },
});

/** Records its start, waits until released (POST /api/release/{key} or a .release file), records its end. */
df.app.activity("blocking", {
    handler: async (key, context) => {
        recordRun(`blocking-${key}`, { invocationId: context.invocationId });
        state.blocking[key] = { ...(state.blocking[key] || {}), started: true };
        await waitForRelease(key);
        state.blocking[key] = { ...(state.blocking[key] || {}), finished: true };
        return `released ${key}`;
    },
});

/** Counts its runs for `key`; the first run can be slowed down (duplicate-activity tests). */
df.app.activity("counted", {
    handler: async (input) => {
        const key = typeof input === "string" ? input : input.key;
        const run = recordRun(`counted-${key}`, { phase: "start" });
        if (typeof input === "object" && run === 1 && input.firstRunDelayMs) await sleep(input.firstRunDelayMs);
        recordRun(`counted-${key}-end`, { run });
        return run;
    },
});

df.app.activity("sleepy", {
    handler: async (ms) => {
        await sleep(ms);
        return "woke up";
    },
});

// ---- orchestrations ----

df.app.orchestration("helloOrchestration", function* (context) {
    return yield context.df.callActivity("sayHello", context.df.getInput());
});

df.app.orchestration("childOrchestration", function* (context) {
    const echoed = yield context.df.callActivity("echo", context.df.getInput());
    return { echoed, parent: context.df.parentInstanceId };
});

/** Every durable feature in one instance: two generations joined by continueAsNew. */
df.app.orchestration("featureOrchestration", function* (context) {
    const input = context.df.getInput() || {};
    if (!input.generation) {
        context.df.setCustomStatus({ stage: "started" });
        const hello = yield context.df.callActivity("sayHello", "P1");
        const retried = yield context.df.callActivityWithRetry("flaky", new df.RetryOptions(100, 3), { key: `${context.df.instanceId}-feature`, failTimes: 1 });
        const fanOut = yield context.df.Task.all([1, 2, 3].map((n) => context.df.callActivity("echo", n)));
        const before = context.df.currentUtcDateTime.getTime();
        yield context.df.createTimer(new Date(before + 300));
        const timerWaitedMs = context.df.currentUtcDateTime.getTime() - before;
        context.df.setCustomStatus({ stage: "waiting-for-approval" });
        const approval = context.df.waitForExternalEvent("approval");
        const timeout = context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + 60000));
        const winner = yield context.df.Task.any([approval, timeout]);
        let approved = "timed out";
        if (winner === approval) {
            timeout.cancel();
            approved = approval.result;
        }
        const child = yield context.df.callSubOrchestrator("childOrchestration", { from: "parent" });
        context.df.continueAsNew({ generation: 1, summary: { hello, retried, fanOut, timerWaitedMs, approved, child } });
        return undefined;
    }
    context.df.setCustomStatus({ stage: "done" });
    const final = yield context.df.callActivity("echo", "second generation");
    return { ...input.summary, generation: input.generation, final };
});

df.app.orchestration("retryOrchestration", function* (context) {
    const input = context.df.getInput();
    const options = new df.RetryOptions(input.firstRetryMs, input.maxAttempts);
    if (input.backoff) options.backoffCoefficient = input.backoff;
    return yield context.df.callActivityWithRetry("flaky", options, { key: input.key, failTimes: input.failTimes });
});

df.app.orchestration("blockingOrchestration", function* (context) {
    return yield context.df.callActivity("blocking", context.df.getInput());
});

df.app.orchestration("waitOrchestration", function* (context) {
    context.df.setCustomStatus("waiting");
    const value = yield context.df.waitForExternalEvent("go");
    return yield context.df.callActivity("echo", value);
});

const replays = new Map();
/** Deliberately non-deterministic: the first replay schedules a different activity than the first run. */
df.app.orchestration("nonDeterministicOrchestration", function* (context) {
    const seen = replays.get(context.df.instanceId) || 0;
    replays.set(context.df.instanceId, seen + 1);
    yield context.df.callActivity(seen === 0 ? "sayHello" : "echo", "x");
    return "unreachable";
});

df.app.orchestration("countedOrchestration", function* (context) {
    return yield context.df.callActivity("counted", context.df.getInput());
});

df.app.orchestration("timeoutOrchestration", function* (context) {
    return yield context.df.callActivity("sleepy", context.df.getInput());
});

/** A durable timer longer than maximumShortTimerDuration (6 days), raced against an event. */
df.app.orchestration("longTimerOrchestration", function* (context) {
    const timer = context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + 10 * 86400000));
    const stop = context.df.waitForExternalEvent("stop");
    const winner = yield context.df.Task.any([timer, stop]);
    if (winner === stop) {
        timer.cancel();
        return "stopped early";
    }
    return "timer fired";
});

/** The crash test's orchestration: counted → blocking (killed here) → counted. */
df.app.orchestration("crashOrchestration", function* (context) {
    const key = context.df.getInput();
    const a = yield context.df.callActivity("counted", `${key}-a`);
    const b = yield context.df.callActivity("blocking", `${key}-b`);
    const c = yield context.df.callActivity("counted", `${key}-c`);
    return [a, b, c];
});

// ---- client functions ----

df.app.client.http("startOrchestration", {
    route: "orchestrators/{name}/{id?}",
    methods: ["POST"],
    handler: async (request, client) => {
        const body = await request.text();
        const instanceId = await client.startNew(request.params.name, { instanceId: request.params.id, input: body ? JSON.parse(body) : undefined });
        return client.createCheckStatusResponse(request, instanceId);
    },
});

df.app.client.http("raiseEventHttp", {
    route: "events/{id}/{event}",
    methods: ["POST"],
    handler: async (request, client) => {
        await client.raiseEvent(request.params.id, request.params.event, await request.json());
        return { status: 202 };
    },
});

df.app.client.http("statusHttp", {
    route: "status/{id}",
    methods: ["GET"],
    handler: async (request, client) => {
        try {
            const status = await client.getStatus(request.params.id, { showHistory: true, showHistoryOutput: true, showInput: true });
            return { jsonBody: status };
        } catch (error) {
            return { status: 404, jsonBody: { error: String(error && error.message) } };
        }
    },
});

/** DurableClient operations for the tests: terminate, suspend, resume, purge, list, startAgain. */
df.app.client.http("clientOps", {
    route: "client/{op}/{id?}",
    methods: ["POST"],
    handler: async (request, client) => {
        const id = request.params.id;
        try {
            switch (request.params.op) {
                case "terminate":
                    await client.terminate(id, "terminated by client");
                    return { status: 202 };
                case "suspend":
                    await client.suspend(id, "suspended by client");
                    return { status: 202 };
                case "resume":
                    await client.resume(id, "resumed by client");
                    return { status: 202 };
                case "purge":
                    return { jsonBody: await client.purgeInstanceHistory(id) };
                case "list":
                    return { jsonBody: await client.getStatusBy({ runtimeStatus: [df.OrchestrationRuntimeStatus.Completed] }) };
                case "start":
                    return { jsonBody: { id: await client.startNew("helloOrchestration", { instanceId: id, input: "again" }) } };
                default:
                    return { status: 400 };
            }
        } catch (error) {
            return { status: 500, jsonBody: { error: String(error && error.message) } };
        }
    },
});
