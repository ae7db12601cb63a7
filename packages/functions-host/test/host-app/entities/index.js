"use strict";
const { appendFileSync, existsSync } = require("node:fs");
const path = require("node:path");
const { app } = require("@azure/functions");
const df = require("durable-functions");

/** Appends a line to `<ENTITIES_COUNTER_DIR>/<name>.log`, so tests can count runs across host processes. */
function recordRun(name) {
    const dir = process.env.ENTITIES_COUNTER_DIR;
    if (dir) appendFileSync(path.join(dir, `${name}.log`), `${process.pid}\n`);
}

async function waitForFile(file) {
    while (!existsSync(file)) await new Promise((resolve) => setTimeout(resolve, 50));
}

// A counter that keeps the order of what it applied: { value, applied: [amount, ...] }.
df.app.entity("counter", async (context) => {
    const state = context.df.getState(() => ({ value: 0, applied: [] }));
    switch (context.df.operationName) {
        case "add": {
            const amount = context.df.getInput();
            state.value += amount;
            state.applied.push(amount);
            context.df.setState(state);
            context.df.return(state.value);
            break;
        }
        case "blockingAdd": {
            const { amount, release } = context.df.getInput();
            recordRun(`blockingAdd-${context.df.entityKey}`);
            await waitForFile(path.join(process.env.ENTITIES_COUNTER_DIR ?? "", release));
            state.value += amount;
            state.applied.push(amount);
            context.df.setState(state);
            context.df.return(state.value);
            break;
        }
        case "get":
            context.df.return(state.value);
            break;
        case "fail":
            throw new Error("counter refuses");
        case "forward": {
            // Signals another counter: entity-to-entity messages.
            const { key, amount } = context.df.getInput();
            context.df.signalEntity(new df.EntityId("counter", key), "add", amount);
            context.df.setState(state);
            break;
        }
        case "delete":
            context.df.destructOnExit();
            break;
        default:
            throw new Error(`unknown operation ${context.df.operationName}`);
    }
});

// Calls `add` for each amount, reads the value, and signals one more add on the way out.
df.app.orchestration("callCounter", function* (context) {
    const { key, amounts, finalSignal } = context.df.getInput();
    const id = new df.EntityId("counter", key);
    const returned = [];
    for (const amount of amounts) returned.push(yield context.df.callEntity(id, "add", amount));
    const value = yield context.df.callEntity(id, "get");
    if (finalSignal !== undefined) context.df.signalEntity(id, "add", finalSignal);
    return { returned, value };
});

df.app.orchestration("callBlocking", function* (context) {
    const { key, amount, release } = context.df.getInput();
    const id = new df.EntityId("counter", key);
    const first = yield context.df.callActivity("plainActivity", key);
    const afterBlocking = yield context.df.callEntity(id, "blockingAdd", { amount, release });
    const value = yield context.df.callEntity(id, "get");
    return { first, afterBlocking, value };
});

app.generic("plainActivity", { trigger: df.trigger.activity(), handler: (input) => `activity ${input}` });

df.app.orchestration("callFailing", function* (context) {
    const id = new df.EntityId("counter", context.df.getInput());
    try {
        yield context.df.callEntity(id, "fail");
        return "no error";
    } catch (error) {
        return `caught: ${error instanceof Error ? "Error" : typeof error}`;
    }
});

df.app.orchestration("callMissing", function* (context) {
    return yield context.df.callEntity(new df.EntityId("nosuch", "x"), "get");
});

// Locks two counters, moves `amount` from one to the other while holding both, and waits for
// the event "go" inside the critical section so that tests can see others being held back.
df.app.orchestration("lockedTransfer", function* (context) {
    const { from, to, amount, wait } = context.df.getInput();
    const fromId = new df.EntityId("counter", from);
    const toId = new df.EntityId("counter", to);
    const lock = yield context.df.lock([toId, fromId]);
    const locked = context.df.isLocked().ownedLocks.map((e) => `${e.name}/${e.key}`);
    const before = yield context.df.callEntity(fromId, "get");
    if (wait) {
        context.df.setCustomStatus("holding");
        yield context.df.waitForExternalEvent("go");
    }
    yield context.df.callEntity(fromId, "add", -amount);
    yield context.df.callEntity(toId, "add", amount);
    lock.release();
    const releasedState = context.df.isLocked().isLocked;
    return { before, locked, releasedState };
});

// Ends while holding its lock: the host releases it, as the extension does.
df.app.orchestration("lockAndReturn", function* (context) {
    yield context.df.lock([new df.EntityId("counter", context.df.getInput())]);
    return "done";
});

// Client: signal and read through the durable-functions client.
app.http("entityClient", {
    route: "counter/{key}/{op?}",
    methods: ["GET", "POST"],
    extraInputs: [df.input.durableClient()],
    handler: async (request, context) => {
        const client = df.getClient(context);
        const id = new df.EntityId("counter", request.params.key);
        if (request.method === "POST") {
            const body = await request.text();
            await client.signalEntity(id, request.params.op, body === "" ? undefined : JSON.parse(body));
            return { status: 202 };
        }
        const response = await client.readEntityState(id);
        return { jsonBody: { entityExists: response.entityExists, entityState: response.entityState ?? null } };
    },
});
