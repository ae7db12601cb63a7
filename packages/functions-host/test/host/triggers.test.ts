import { mkdtempSync, readFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, inject, it } from "vitest";
import { startHost } from "../../src/index";
import { uniqueName } from "../helpers/names";
import { APP_DIR, base64, call, conformanceSettings, durableApi, fromBase64, probe, queue, sleep, waitFor } from "./support/hostTestClient";
import { useInProcessHost } from "./support/inProcessHost";

const connectionString = inject("azuriteConnectionString");
const counterDir = mkdtempSync(path.join(tmpdir(), "host-triggers-"));
const settings = conformanceSettings(connectionString, {
    FUNCTIONS_HOST_KEY: "test-function-key",
    FUNCTIONS_MASTER_KEY: "test-master-key",
    HOSTAPP_COUNTER_DIR: counterDir,
    HOSTAPP_TICK_SCHEDULE: "*/1 * * * * *",
    "AzureWebJobs.tick.Disabled": "false",
    AzureFunctionsJobHost__functionTimeout: "00:00:02",
});
const logs: string[] = [];
const host = useInProcessHost(APP_DIR, () => settings, { pollIntervalMs: 200, log: (line) => logs.push(line) });

describe.concurrent("admin API", () => {
    it("lists every registered function with its trigger type", async () => {
        const reply = await call("GET", `${host.url}/admin/functions`);
        expect(reply.status).toBe(200);
        const functions = reply.json<{ name: string; trigger: string; route?: string; methods?: string[]; authLevel?: string; schedule?: string; queueName?: string; disabled?: boolean }[]>();
        const byName = new Map(functions.map((f) => [f.name, f]));
        expect(byName.get("hello")).toMatchObject({ trigger: "httpTrigger", route: "hello/{name?}", methods: ["GET", "POST"], authLevel: "anonymous" });
        expect(byName.get("secured")).toMatchObject({ trigger: "httpTrigger", authLevel: "function" });
        expect(byName.get("tick")).toMatchObject({ trigger: "timerTrigger", schedule: "*/1 * * * * *" });
        expect(byName.get("queueWorker")).toMatchObject({ trigger: "queueTrigger", queueName: settings.HOSTAPP_QUEUE });
        expect(byName.get("sayHello")).toMatchObject({ trigger: "activityTrigger" });
        expect(byName.get("featureOrchestration")).toMatchObject({ trigger: "orchestrationTrigger" });
        expect(byName.get("disabledTimer")).toMatchObject({ disabled: true });
        expect(host.functions.map((f) => f.name)).toEqual(functions.map((f) => f.name));
    });

    it("reports Running and answers ping", async () => {
        expect((await call("GET", `${host.url}/admin/host/status`)).json()).toMatchObject({ state: "Running" });
        expect((await call("POST", `${host.url}/admin/host/ping`)).status).toBe(200);
    });

    it("refuses a second host in the same process", async () => {
        await expect(startHost({ appDir: APP_DIR, port: 0, settings })).rejects.toThrow(/only one app can be loaded per process/i);
    });
});

describe.concurrent("HTTP triggers", () => {
    it("passes route parameters, query, headers and body, and returns headers and cookies", async () => {
        const reply = await call("POST", `${host.url}/api/hello/ada?x=1&x=2&y=3`, "the body", { "x-echo": "echoed", "content-type": "text/plain" });
        expect(reply.status).toBe(200);
        expect(reply.headers.get("x-powered-by")).toBe("conformance-app");
        expect(reply.headers.get("set-cookie")).toMatch(/visited=yes.*HttpOnly/);
        expect(reply.json()).toMatchObject({ name: "ada", method: "POST", query: { x: "1,2", y: "3" }, body: "the body", echoHeader: "echoed" });
        expect(reply.json().url).toBe(`${host.url}/api/hello/ada?x=1&x=2&y=3`);
    });

    it("treats an optional route parameter as optional", async () => {
        expect((await call("GET", `${host.url}/api/hello`)).json()).toMatchObject({ name: "world" });
    });

    it("honours route constraints and answers 404 for unknown routes and methods", async () => {
        expect((await call("GET", `${host.url}/api/items/42`)).json()).toEqual({ id: 42 });
        expect((await call("GET", `${host.url}/api/items/abc`)).status).toBe(404);
        expect((await call("GET", `${host.url}/api/nothing-here`)).status).toBe(404);
        expect((await call("PUT", `${host.url}/api/hello`)).status).toBe(404);
        expect((await call("GET", `${host.url}/hello`)).status).toBe(404);
    });

    it("answers 204 when the function returns nothing and 500 when it throws", async () => {
        expect((await call("DELETE", `${host.url}/api/items/7`)).status).toBe(204);
        expect((await call("GET", `${host.url}/api/throws`)).status).toBe(500);
    });

    it("requires the function key for authLevel function: 401 without it, 200 with header or code", async () => {
        expect((await call("GET", `${host.url}/api/secured`)).status).toBe(401);
        expect((await call("GET", `${host.url}/api/secured`, undefined, { "x-functions-key": "wrong" })).status).toBe(401);
        const withHeader = await call("GET", `${host.url}/api/secured`, undefined, { "x-functions-key": host.functionKey });
        expect(withHeader.status).toBe(200);
        expect(withHeader.text).toBe("secret");
        expect((await call("GET", `${host.url}/api/secured?code=${host.functionKey}`)).status).toBe(200);
        expect(host.functionKey).toBe("test-function-key");
    });

    it("requires the master key for authLevel admin", async () => {
        expect((await call("GET", `${host.url}/api/admin-only`, undefined, { "x-functions-key": host.functionKey })).status).toBe(401);
        expect((await call("GET", `${host.url}/api/admin-only?code=${host.masterKey}`)).status).toBe(200);
    });

    it("logs context.log lines with timestamp, level, function name and invocation id", async () => {
        const reply = await call("GET", `${host.url}/api/hello/logger`);
        const invocationId = reply.json().invocationId as string;
        const line = await waitFor("the hello log line", () => logs.find((l) => l.includes(`Functions.hello [${invocationId}] hello logger`)));
        expect(line).toMatch(/^\[\d{4}-\d{2}-\d{2}T[\d:.]+Z\] Information Functions\.hello \[/);
        expect(logs.some((l) => / Warning Functions\.hello \[.*\] warning for logger/.test(l))).toBe(true);
        expect((await probe(host.url)).logHook).toContainEqual({ message: "hello logger", level: "information", functionName: "hello" });
    });
});

describe.concurrent("timer triggers", () => {
    it("runs on startup (runOnStartup) and then on the NCRONTAB schedule with the host's TimerInfo", async () => {
        const state = await waitFor("three tick invocations", async () => {
            const s = await probe(host.url);
            return s.ticks.length >= 3 ? s : undefined;
        });
        const [first, second] = state.ticks;
        expect(first.timer).toMatchObject({ schedule: { adjustForDST: true }, isPastDue: false });
        expect(Object.keys(second.timer.scheduleStatus).sort()).toEqual(["last", "lastUpdated", "next"]);
        expect(new Date(second.timer.scheduleStatus.next).getUTCMilliseconds()).toBe(0);
    });

    it("does not run a function disabled with AzureWebJobs.<name>.Disabled", async () => {
        await sleep(1200);
        expect((await probe(host.url)).disabledTimerRan).toBeUndefined();
    });

    it("fires a non-HTTP function now with POST /admin/functions/{name} (202) and with fire()", async () => {
        const reply = await call("POST", `${host.url}/admin/functions/manualTimer`, { input: "" });
        expect(reply.status).toBe(202);
        await waitFor("manualTimer to run", async () => (await probe(host.url)).manualTimer === 1);
        await host.fire("manualTimer");
        await waitFor("manualTimer to run again", async () => (await probe(host.url)).manualTimer === 2);
        expect((await call("POST", `${host.url}/admin/functions/hello`, { input: "" })).status).toBe(400);
        expect((await call("POST", `${host.url}/admin/functions/noSuchFunction`, { input: "" })).status).toBe(404);
    });
});

// The describes above and below run side by side; these tests share flakyTimer's state, one after the other.
describe.concurrent("function-level retry policies", () => {
    it.sequential("retries a failed timer run under its fixedDelay policy, telling each run its retryContext, until it succeeds", async () => {
        expect((await call("POST", `${host.url}/api/flaky-timer/3`)).status).toBe(204);
        await host.fire("flakyTimer");
        const runs = await waitFor("the third run of flakyTimer", async () => {
            const { flakyTimerRuns } = await probe(host.url);
            return flakyTimerRuns.length >= 3 ? flakyTimerRuns : undefined;
        }, 10_000);
        await sleep(1_500);
        expect((await probe(host.url)).flakyTimerRuns).toHaveLength(3);
        expect(runs.map((run: { retryCount: number; maxRetryCount: number }) => [run.retryCount, run.maxRetryCount])).toEqual([[0, 2], [1, 2], [2, 2]]);
        expect(runs[0].exception).toBeUndefined();
        expect(runs[1].exception.message).toContain("flaky timer run 1");
        expect(runs[2].exception.message).toContain("flaky timer run 2");
    });

    it.sequential("gives up after maxRetryCount retries, and the timer keeps its schedule", async () => {
        expect((await call("POST", `${host.url}/api/flaky-timer/99`)).status).toBe(204);
        await host.fire("flakyTimer");
        await waitFor("three runs of flakyTimer", async () => (await probe(host.url)).flakyTimerRuns.length === 3, 10_000);
        await sleep(1_500);
        expect((await probe(host.url)).flakyTimerRuns).toHaveLength(3);
        expect(logs.filter((line) => line.includes("Timer 'flakyTimer': retry "))).toHaveLength(4);
    });

    it.sequential("says at start that the runtime applies no retry policy to an HTTP trigger", () => {
        expect(logs.some((line) => line.includes("Function 'flakyTimerSetup' has a retry policy") && line.includes("httpTrigger"))).toBe(true);
    });
});

describe.concurrent("queue triggers", () => {
    it("decodes base64 JSON into an object, passes dequeueCount, and writes the output binding", async () => {
        const input = queue(connectionString, settings.HOSTAPP_QUEUE as string);
        await input.createIfNotExists();
        const id = uniqueName("msg");
        await input.sendMessage(base64(JSON.stringify({ id })));
        const seen = await waitFor("the queue message", async () => (await probe(host.url)).queueMessages.find((m: any) => m.message?.id === id));
        expect(seen.metadata).toMatchObject({ dequeueCount: 1 });
        expect(typeof seen.metadata.id).toBe("string");
        expect(typeof seen.metadata.insertionTime).toBe("string");
        const output = queue(connectionString, settings.HOSTAPP_QUEUE_OUT as string);
        const messages = await waitFor("two output messages", async () => {
            const peeked = await output.peekMessages({ numberOfMessages: 32 });
            const texts = peeked.peekedMessageItems.map((m) => fromBase64(m.messageText));
            return texts.some((t) => t.includes(id)) && texts.includes("second") ? texts : undefined;
        });
        expect(messages).toContain(JSON.stringify({ echo: { id } }));
        expect(messages).toContain("second");
    });

    it("moves a message that fails 5 times to <queue>-poison, after exactly 5 attempts", async () => {
        const input = queue(connectionString, settings.HOSTAPP_QUEUE as string);
        const id = uniqueName("poison");
        const text = base64(JSON.stringify({ id, fail: true }));
        await input.sendMessage(text);
        const poison = queue(connectionString, `${settings.HOSTAPP_QUEUE}-poison`);
        const poisoned = await waitFor("the poison message", async () => {
            if (!(await poison.exists())) return undefined;
            const peeked = await poison.peekMessages({ numberOfMessages: 32 });
            return peeked.peekedMessageItems.find((m) => m.messageText === text);
        });
        expect(poisoned).toBeDefined();
        const attempts = (await probe(host.url)).queueMessages.filter((m: any) => m.message?.id === id);
        expect(attempts.map((a: any) => a.metadata.dequeueCount)).toEqual([1, 2, 3, 4, 5]);
        const left = await input.peekMessages({ numberOfMessages: 32 });
        expect(left.peekedMessageItems.some((m) => m.messageText === text)).toBe(false);
    });

    it("fires a queue function from the admin API with the input as the message text", async () => {
        expect((await call("POST", `${host.url}/admin/functions/queueWorker`, { input: JSON.stringify({ id: "from-admin" }) })).status).toBe(202);
        await waitFor("the admin-fired message", async () => (await probe(host.url)).queueMessages.some((m: any) => m.message?.id === "from-admin"));
    });
});

describe.concurrent("durable client inputs", () => {
    it("lets a timer function start an orchestration through its DurableClient", async () => {
        expect((await call("POST", `${host.url}/admin/functions/timerStarter`, { input: "" })).status).toBe(202);
        const status = await durableApi(host.url).until(settings.HOSTAPP_TIMER_INSTANCE as string, ["Completed"]);
        expect(status.output).toBe("Hello from-timer");
    });

    it("lets a queue function start an orchestration through its DurableClient", async () => {
        const start = queue(connectionString, settings.HOSTAPP_START_QUEUE as string);
        await start.createIfNotExists();
        const instanceId = uniqueName("fromqueue");
        await start.sendMessage(base64(JSON.stringify({ orchestrator: "helloOrchestration", instanceId, input: "from-queue" })));
        const status = await durableApi(host.url).until(instanceId, ["Completed"]);
        expect(status.output).toBe("Hello from-queue");
    });
});

describe.concurrent("functionTimeout (AzureFunctionsJobHost__functionTimeout=00:00:02)", () => {
    it("fails an HTTP invocation that runs too long with the host's timeout message", async () => {
        const started = Date.now();
        const reply = await call("GET", `${host.url}/api/slow?ms=4000`);
        expect(reply.status).toBe(500);
        expect(Date.now() - started).toBeLessThan(3500);
        expect(logs.some((l) => l.includes("Timeout value of 00:00:02 was exceeded by function: Functions.slow"))).toBe(true);
    });

    it("turns an activity timeout into TaskFailed, failing the orchestration", async () => {
        const api = durableApi(host.url);
        const id = uniqueName("timeout");
        expect((await api.start("timeoutOrchestration", id, 4000)).status).toBe(202);
        const status = await api.until(id, ["Failed"]);
        expect(status.output).toContain("Timeout value of 00:00:02 was exceeded by function: Functions.sleepy");
    });
});

// After every test above: it counts their invocations, then stops the host.
describe("hooks and shutdown", () => {
    it("ran appStart once before triggers, and pre/post invocation hooks around every invocation", async () => {
        // Invocations abandoned by the timeout tests run their post hooks when they finish; the probe's own
        // post hook runs before its JSON body is made, as under the Node library.
        const state = await waitFor("every invocation begun to have run its post hook", async () => {
            const seen = await probe(host.url);
            return seen.postInvocations === seen.preInvocations ? seen : undefined;
        });
        const appStarts = state.hooks.filter((h: any) => h.name === "appStart");
        expect(appStarts).toHaveLength(1);
        expect(appStarts[0].at).toBeLessThanOrEqual(state.ticks[0].at);
        expect(state.preInvocations).toBeGreaterThan(5);
    });

    it("stop() waits, calls appTerminate and closes the server", async () => {
        await host.stop();
        const hookLog = path.join(counterDir, "hooks.log");
        expect(existsSync(hookLog) && readFileSync(hookLog, "utf8").split("\n").filter(Boolean)).toEqual(["appStart", "appTerminate"]);
        await expect(fetch(`${host.url}/admin/host/status`)).rejects.toThrow();
    });
});
