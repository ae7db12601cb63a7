"use strict";
const { app } = require("@azure/functions");
const { state, hookFile } = require("../lib/state");

app.hook.appStart(() => {
    state.hooks.push({ name: "appStart", at: Date.now() });
    hookFile("appStart");
});

app.hook.appTerminate(() => {
    state.hooks.push({ name: "appTerminate" });
    hookFile("appTerminate");
});

app.hook.preInvocation((context) => {
    state.preInvocations++;
    context.hookData.startedAt = Date.now();
});

app.hook.postInvocation((context) => {
    if (typeof context.hookData.startedAt === "number") state.postInvocations++;
});

app.hook.log((context) => {
    if (context.category === "user" && context.message.startsWith("hello ")) {
        state.logHook.push({ message: context.message, level: context.level, functionName: context.invocationContext && context.invocationContext.functionName });
    }
});
