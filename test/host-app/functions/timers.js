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
