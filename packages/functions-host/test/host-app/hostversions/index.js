"use strict";
// Orchestrations for the versioning and management-API tests. Cross-run state (how often an
// activity ran, whether it may succeed now) lives in files under HV_STATE_DIR, so tests that kill
// and restart the host can read it.
const fs = require("node:fs");
const path = require("node:path");
const { app } = require("@azure/functions");
const df = require("durable-functions");

function stateFile(name) {
    return path.join(process.env.HV_STATE_DIR, name);
}

/** Appends one run for `key`; returns the run number (1, 2, ...). */
function recordRun(key) {
    fs.appendFileSync(stateFile(`${key}.runs`), `${process.pid}\n`);
    return fs.readFileSync(stateFile(`${key}.runs`), "utf8").split("\n").filter(Boolean).length;
}

// ---- activities ----

df.app.activity("hvEcho", { handler: (input) => input });

/** Fails until the test creates `<key>.ok`; counts its runs. */
df.app.activity("hvFailUntilAllowed", {
    handler: (key) => {
        const run = recordRun(key);
        if (!fs.existsSync(stateFile(`${key}.ok`))) throw new Error(`not allowed yet (run ${run})`);
        return `allowed on run ${run}`;
    },
});

/** Fails on its first run for `key` only. */
df.app.activity("hvFailFirstRun", {
    handler: (key) => {
        const run = recordRun(key);
        if (run === 1) throw new Error("first run fails");
        return run;
    },
});

// ---- orchestrations ----

df.app.orchestration("versioned", function* (context) {
    const echoed = yield context.df.callActivity("hvEcho", context.df.getInput());
    return { version: context.df.version ?? null, echoed };
});

df.app.orchestration("versionedParent", function* (context) {
    const child = yield context.df.callSubOrchestrator("versioned", "from parent", `${context.df.instanceId}-child`);
    const pinned = yield context.df.callSubOrchestrator("versioned", "pinned", `${context.df.instanceId}-pinned`, "0.5");
    return { version: context.df.version ?? null, child, pinned };
});

df.app.orchestration("waiter", function* (context) {
    return yield context.df.waitForExternalEvent("go");
});

df.app.orchestration("rewindable", function* (context) {
    const first = yield context.df.callActivity("hvEcho", "first");
    const second = yield context.df.callActivity("hvFailUntilAllowed", context.df.getInput());
    return [first, second];
});

df.app.orchestration("rewindableWithRetry", function* (context) {
    const retry = new df.RetryOptions(100, 2);
    return yield context.df.callActivityWithRetry("hvFailUntilAllowed", retry, context.df.getInput());
});

df.app.orchestration("rewindableParent", function* (context) {
    return yield context.df.callSubOrchestrator("rewindable", context.df.getInput(), `${context.df.instanceId}-child`);
});

/** A child that fails on its first run for `key` and returns its own instance id after that. */
df.app.orchestration("flakyChild", function* (context) {
    const key = context.df.getInput();
    yield context.df.callActivity("hvFailFirstRun", key);
    return context.df.instanceId;
});

df.app.orchestration("subRetryParent", function* (context) {
    const retry = new df.RetryOptions(100, 3);
    const key = context.df.getInput();
    return yield context.df.callSubOrchestratorWithRetry("flakyChild", retry, key, `${context.df.instanceId}-explicit-child`);
});

/** input: {url, polling?, tokenSource?} */
df.app.orchestration("httpCaller", function* (context) {
    const input = context.df.getInput();
    const options = { method: "POST", url: input.url, body: { from: context.df.instanceId }, headers: { "x-test": "hv" } };
    if (input.polling === false) options.enablePolling = false;
    if (input.tokenSource) options.tokenSource = new df.ManagedIdentityTokenSource("https://management.core.windows.net/.default");
    const response = yield context.df.callHttp(options);
    return { statusCode: response.statusCode, content: response.content, location: response.headers?.Location ?? null };
});

// ---- HTTP ----

/** Starts an orchestration through the durable client, with ?version= passed on to startNew. */
app.http("hvStart", {
    route: "hvstart/{name}/{id}",
    methods: ["POST"],
    authLevel: "anonymous",
    extraInputs: [df.input.durableClient()],
    handler: async (request, context) => {
        const client = df.getClient(context);
        const version = request.query.get("version") || undefined;
        const id = await client.startNew(request.params.name, { instanceId: request.params.id, input: await request.json(), version });
        return { jsonBody: { id } };
    },
});

/** An asynchronous job: POST answers 202 with a Location; the job is done on its third poll. */
app.http("hvJobStart", {
    route: "hvjob",
    methods: ["POST"],
    authLevel: "anonymous",
    handler: async (request) => {
        const body = await request.json();
        const id = String(body.from).replace(/[^A-Za-z0-9-]/g, "_");
        fs.appendFileSync(stateFile(`job-${id}.posts`), `${request.headers.get("x-test")}\n`);
        return { status: 202, headers: { Location: `/api/hvjob/${id}`, "Retry-After": "1" } };
    },
});

app.http("hvJobStatus", {
    route: "hvjob/{id}",
    methods: ["GET"],
    authLevel: "anonymous",
    handler: async (request) => {
        const id = request.params.id;
        fs.appendFileSync(stateFile(`job-${id}.polls`), `${request.headers.get("x-test")}\n`);
        const polls = fs.readFileSync(stateFile(`job-${id}.polls`), "utf8").split("\n").filter(Boolean).length;
        if (polls < 3) return { status: 202, headers: { Location: `/api/hvjob/${id}`, "Retry-After": "1" } };
        return { status: 200, jsonBody: { done: true, polls } };
    },
});
