"use strict";
// The durable-js samples' HTTP starter (samples-js/functions/httpStart.js), unchanged in substance.
const df = require("durable-functions");
const { app } = require("@azure/functions");

const clientInput = df.input.durableClient();

app.http("httpStart", {
    route: "orchestrators/{orchestratorName}",
    extraInputs: [clientInput],
    handler: async (request, context) => {
        const client = df.getClient(context, clientInput);
        const body = await request.text();
        const instanceId = await client.startNew(request.params.orchestratorName, { input: body });
        context.log(`Started orchestration with ID = '${instanceId}'.`);
        return client.createCheckStatusResponse(request, instanceId);
    },
});

df.app.orchestration("sayHelloOrchestration", function* (context) {
    const name = context.df.getInput();
    return [yield context.df.callActivity("sayHello", `${name} 1`), yield context.df.callActivity("sayHello", `${name} 2`)];
});

df.app.activity("sayHello", { handler: (name) => `Hello ${name}` });
