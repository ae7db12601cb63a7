"use strict";
const { app, input, output } = require("@azure/functions");

globalThis.unsupportedAppRuns = 0;

app.http("fine", { methods: ["GET"], handler: async () => ({ body: "fine" }) });

app.storageBlob("onBlob", {
    path: "uploads/{name}",
    connection: "AzureWebJobsStorage",
    handler: async () => {
        globalThis.unsupportedAppRuns++;
    },
});

const cosmosOut = output.cosmosDB({ databaseName: "db", containerName: "c", connection: "CosmosConnection", createIfNotExists: true });
app.http("savesToCosmos", {
    methods: ["POST"],
    extraOutputs: [cosmosOut],
    handler: async (request, context) => {
        globalThis.unsupportedAppRuns++;
        context.extraOutputs.set(cosmosOut, { id: "1" });
        return { status: 201 };
    },
});

app.http("readsSql", {
    methods: ["GET"],
    extraInputs: [input.sql({ commandText: "select 1", commandType: "Text", connectionStringSetting: "SqlConnection" })],
    handler: async () => ({ body: "sql" }),
});
