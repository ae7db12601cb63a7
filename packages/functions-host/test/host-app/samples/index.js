"use strict";
// Orchestration patterns found in published Durable Functions samples, for the local host's
// conformance tests (test/host/samplePatterns.test.ts).
const { app, output } = require("@azure/functions");
const df = require("durable-functions");

const callsByKey = new Map();

/** Fails on the first call for `key`, succeeds afterwards; returns the call number. */
df.app.activity("spFailFirstCall", {
    handler: (key) => {
        const call = (callsByKey.get(key) ?? 0) + 1;
        callsByKey.set(key, call);
        if (call === 1) throw new Error(`first call for ${key} fails`);
        return call;
    },
});

df.app.orchestration("spChild", function* (context) {
    const call = yield context.df.callActivity("spFailFirstCall", context.df.getInput());
    return { childId: context.df.instanceId, call };
});

/** Gives the child the id `<own id>:0`, which is also what a default id of sequence 0 looks like. */
df.app.orchestration("spRetryChildWithZeroSuffix", function* (context) {
    const id = context.df.instanceId;
    return yield context.df.callSubOrchestratorWithRetry("spChild", new df.RetryOptions(100, 2), id, `${id}:0`);
});

df.app.orchestration("spRetryChildWithDefaultId", function* (context) {
    return yield context.df.callSubOrchestratorWithRetry("spChild", new df.RetryOptions(100, 2), context.df.instanceId);
});

df.app.activity("spSendChallenge", { handler: () => 4242 });

/** Waits for the right code in up to three "Answer" events, with one timeout timer for all of them. */
df.app.orchestration("spChallenge", function* (context) {
    const code = yield context.df.callActivity("spSendChallenge");
    const timeout = context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + 60 * 60_000));
    let attempts = 0;
    let accepted = false;
    while (attempts < 3 && !accepted) {
        const answer = context.df.waitForExternalEvent("Answer");
        const winner = yield context.df.Task.any([answer, timeout]);
        if (winner !== answer) break;
        attempts++;
        accepted = answer.result === code;
    }
    if (!timeout.isCompleted) timeout.cancel();
    return { accepted, attempts };
});

/** backupSiteContent.js's pattern: an output path bound from the activity's input properties. */
const copyOut = output.storageQueue({ queueName: "sp-copies-{batch}" });
df.app.activity("spCopyTo", {
    extraOutputs: [copyOut],
    handler: ({ file }, context) => {
        context.extraOutputs.set(copyOut, `copied ${file}`);
        return file.length;
    },
});

df.app.orchestration("spCopyFiles", function* (context) {
    const { batch, files } = context.df.getInput();
    const sizes = yield context.df.Task.all(files.map((file) => context.df.callActivity("spCopyTo", { batch, file })));
    return sizes.reduce((total, size) => total + size, 0);
});

app.http("spStart", {
    route: "sp/{name}",
    methods: ["POST"],
    extraInputs: [df.input.durableClient()],
    handler: async (request, context) => {
        const client = df.getClient(context);
        const instanceId = await client.startNew(request.params.name, { input: await request.json().catch(() => undefined) });
        return client.createCheckStatusResponse(request, instanceId);
    },
});
