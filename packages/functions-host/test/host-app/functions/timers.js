"use strict";
const { app } = require("@azure/functions");
const df = require("durable-functions");
const { state } = require("../lib/state");

app.timer("tick", {
    schedule: "%HOSTAPP_TICK_SCHEDULE%",
    runOnStartup: true,
    handler: (timer, context) => {
        state.ticks.push({ at: Date.now(), timer, invocationId: context.invocationId });
    },
});

app.timer("manualTimer", {
    schedule: "0 0 0 1 1 *",
    handler: () => {
        state.manualTimer++;
    },
});

app.timer("disabledTimer", {
    schedule: "*/1 * * * * *",
    runOnStartup: true,
    handler: () => {
        state.disabledTimerRan = true;
    },
});

df.app.client.timer("timerStarter", {
    schedule: "0 0 0 1 1 *",
    handler: async (_timer, client) => {
        await client.startNew("helloOrchestration", { instanceId: process.env.HOSTAPP_TIMER_INSTANCE, input: "from-timer" });
    },
});

/** Fails until its run number reaches `state.flakyTimerSucceedsOnRun`; records each run's retryContext. */
app.timer("flakyTimer", {
    schedule: "0 0 0 1 1 *",
    retry: { strategy: "fixedDelay", maxRetryCount: 2, delayInterval: { seconds: 1 } },
    handler: (_timer, context) => {
        state.flakyTimerRuns.push(context.retryContext ?? null);
        if (state.flakyTimerRuns.length < state.flakyTimerSucceedsOnRun) throw new Error(`flaky timer run ${state.flakyTimerRuns.length}`);
    },
});

/** Its retry policy is one the runtime does not apply to HTTP triggers: the host says so at start. */
app.http("flakyTimerSetup", {
    route: "flaky-timer/{succeedsOnRun:int}",
    methods: ["POST"],
    retry: { strategy: "fixedDelay", maxRetryCount: 1, delayInterval: { seconds: 1 } },
    handler: (request) => {
        state.flakyTimerRuns = [];
        state.flakyTimerSucceedsOnRun = Number(request.params.succeedsOnRun);
        return { status: 204 };
    },
});
