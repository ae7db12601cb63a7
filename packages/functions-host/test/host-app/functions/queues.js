"use strict";
const { app, output } = require("@azure/functions");
const df = require("durable-functions");
const { state } = require("../lib/state");

const echoQueue = output.storageQueue({ queueName: "%HOSTAPP_QUEUE_OUT%", connection: "AzureWebJobsStorage" });

app.storageQueue("queueWorker", {
    queueName: "%HOSTAPP_QUEUE%",
    connection: "AzureWebJobsStorage",
    extraOutputs: [echoQueue],
    handler: (message, context) => {
        state.queueMessages.push({ message, metadata: context.triggerMetadata });
        if (message && typeof message === "object" && message.fail) throw new Error("deliberate queue failure");
        context.extraOutputs.set(echoQueue, [{ echo: message }, "second"]);
    },
});

df.app.client.storageQueue("queueStarter", {
    queueName: "%HOSTAPP_START_QUEUE%",
    handler: async (message, client) => {
        await client.startNew(message.orchestrator, { instanceId: message.instanceId, input: message.input });
    },
});
