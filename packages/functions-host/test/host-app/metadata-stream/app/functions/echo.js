"use strict";
const { app, output } = require("@azure/functions");

app.http("echoParams", {
    methods: ["GET", "POST"],
    route: "echo/{id}/{opt?}",
    handler: async (request, context) => {
        const text = await request.text();
        return {
            jsonBody: {
                params: request.params,
                header: request.headers.get("x-test"),
                query: Object.fromEntries(request.query.entries()),
                bodyLength: text.length,
                triggerMetadata: context.triggerMetadata ?? null,
            },
        };
    },
});

const row = output.table({ tableName: "%STREAM_TABLE%", partitionKey: "{Query.pk}", rowKey: "{id}-{headers.x-row}-{customer}", connection: "AzureWebJobsStorage" });
app.http("streamTableRow", {
    methods: ["POST"],
    route: "rows/{id}",
    extraOutputs: [row],
    handler: async (request, context) => {
        context.extraOutputs.set(row, { body: await request.text() });
        return { status: 201 };
    },
});
