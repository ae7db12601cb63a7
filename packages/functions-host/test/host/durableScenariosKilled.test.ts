import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { uniqueName } from "../helpers/names";
import { ensureHostBuilt, killAllHosts, killHost, SHORT_VISIBILITY_SETTINGS, spawnHost, type HostProcess } from "./support/hostProcess";
import { APP_DIR, call, conformanceSettings, DURABLE, durableApi, loggedLines, sleep, waitFor, type Reply } from "./support/hostTestClient";

/**
 * The Durable conformance scenarios, each run twice: once straight through, and once with the
 * host SIGKILLed as soon as the instance's history (as the status API shows it) holds half of the straight run's events
 * (then started again on the same task hub). The killed run must end exactly as the straight one.
 * One host per app serves the scenarios one after another: each kill lands mid-run for one
 * scenario, and the restarted host carries every instance of the earlier ones to its end.
 */

const connectionString = inject("azuriteConnectionString");
const TERMINAL = ["Completed", "Failed", "Terminated"];
/** Eleven kills in a row: control messages come back within 2 s of each. */
const SHORT_VISIBILITY = {
    ...SHORT_VISIBILITY_SETTINGS,
    AzureFunctionsJobHost__extensions__durableTask__storageProvider__controlQueueVisibilityTimeout: "00:00:02",
};

interface Status {
    runtimeStatus: string;
    customStatus?: unknown;
    output?: any;
    historyEvents?: unknown[];
}

type DurableApi = ReturnType<typeof durableApi>;

/** What a scenario may do while its instance runs (raise events, suspend, rewind), against whichever host is up. */
type Driver = (api: DurableApi, id: string, status: Status) => Promise<void>;

/**
 * Holds a driver's actions back until the host has been killed under its instance: an event or
 * operation that would end the run can then never come before the kill. What the driver tried
 * meanwhile is answered as refused (status 0), so it tries again once the gate opens.
 */
class KillGate {
    opened = false;
    /** The driver tried to act: the run has gone as far as it can without the driver. */
    held = false;
    api(api: DurableApi): DurableApi {
        if (this.opened) return api;
        const hold = async (): Promise<Reply> => {
            this.held = true;
            return { status: 0, headers: new Headers(), text: "", json: () => JSON.parse("null") };
        };
        return { ...api, raise: hold, op: hold };
    }
}

interface Scenario {
    name: string;
    orchestrator: string;
    input: (id: string) => unknown;
    /** The status the run must end in. */
    ends: string;
    /** Terminal statuses the instance may pass through on its way (a failure the driver rewinds). */
    passesThrough?: string[];
    driver?: () => Driver;
    check(status: Status, id: string): Promise<void> | void;
}

interface App {
    dir: string;
    env: () => Record<string, string>;
    scenarios: Scenario[];
}

let host: HostProcess | undefined;
/** Every host this file started, killed or not: a failure shows what each logged of its instance. */
const hostsStarted: HostProcess[] = [];
const currentApi = () => durableApi(host!.url);

async function startHost(dir: string, env: Record<string, string>): Promise<HostProcess> {
    const started = await spawnHost(dir, env);
    hostsStarted.push(started);
    return started;
}

async function statusOf(id: string): Promise<Status | undefined> {
    try {
        const reply = await currentApi().status(id, "?showHistory=true");
        return reply.status === 200 || reply.status === 202 ? (reply.json() as Status) : undefined;
    } catch {
        return undefined; // the host is being replaced
    }
}

/** Polls the instance on whichever host is up, driving it, until it is terminal. */
async function follow(scenario: Scenario, id: string, gate?: KillGate, timeoutMs = 60_000): Promise<Status> {
    const drive = scenario.driver?.();
    const deadline = Date.now() + timeoutMs;
    const driven: string[] = [];
    /** The host's API, gated, with what the driver sent and what it was answered kept for a failure's message. */
    const driverApi = (): DurableApi => {
        const api = gate ? gate.api(currentApi()) : currentApi();
        const noted =
            <A extends unknown[]>(what: string, send: (...args: A) => Promise<Reply>) =>
            async (...args: A) => {
                const reply = await send(...args).catch((error: Error) => ({ status: -1, text: error.message }) as Reply);
                driven.push(`${new Date().toISOString()} ${what} ${JSON.stringify(args.slice(1))} → ${reply.status} ${reply.text.slice(0, 120)}`);
                return reply;
            };
        return { ...api, raise: noted("raise", api.raise), op: noted("op", api.op) };
    };
    for (;;) {
        const status = await statusOf(id);
        if (status && TERMINAL.includes(status.runtimeStatus) && status.runtimeStatus === scenario.ends) return status;
        if (status && drive) await drive(driverApi(), id, status).catch(() => undefined);
        const endedElsewhere = status !== undefined && TERMINAL.includes(status.runtimeStatus) && !scenario.passesThrough?.includes(status.runtimeStatus);
        if (Date.now() > deadline || endedElsewhere) {
            const history = (status?.historyEvents as { EventType: string; Name?: string; EventId?: number; TaskScheduledId?: number; Timestamp?: string }[] | undefined) ?? [];
            const lines = history.map((event) => `${event.Timestamp} ${event.EventType} ${event.Name ?? ""} ${event.EventId ?? ""} ${event.TaskScheduledId ?? ""}`);
            const logged = hostsStarted.flatMap((started, n) => started.output().split("\n").filter((line) => line.includes(id)).map((line) => `host ${n}: ${line}`));
            throw new Error(
                `${scenario.name}: instance ${id} did not end ${scenario.ends} but ${status?.runtimeStatus}: ${JSON.stringify(status?.output)?.slice(0, 300)}\n` +
                    `${lines.join("\n")}\nwhat the driver sent:\n${driven.join("\n")}\nwhat the hosts logged of it:\n${logged.join("\n")}`,
            );
        }
        await sleep(40);
    }
}

async function runStraight(app: App): Promise<Map<Scenario, number>> {
    host = await startHost(app.dir, app.env());
    const lengths = new Map<Scenario, number>();
    await Promise.all(
        app.scenarios.map(async (scenario) => {
            const id = uniqueName(`straight-${scenario.orchestrator}`);
            expect((await currentApi().start(scenario.orchestrator, id, scenario.input(id))).status).toBe(202);
            const status = await follow(scenario, id);
            await scenario.check(status, id);
            lengths.set(scenario, status.historyEvents?.length ?? 0);
        }),
    );
    await killHost(host);
    return lengths;
}

/** Returns the scenarios whose instance was still running when the host was killed under it. */
async function runKilled(app: App, lengths: Map<Scenario, number>): Promise<string[]> {
    const env = app.env();
    host = await startHost(app.dir, env);
    const finishing: Promise<void>[] = [];
    const midRun: string[] = [];
    for (const scenario of app.scenarios) {
        const id = uniqueName(`killed-${scenario.orchestrator}`);
        expect((await currentApi().start(scenario.orchestrator, id, scenario.input(id))).status).toBe(202);
        const half = Math.max(1, Math.floor(lengths.get(scenario)! / 2));
        const gate = new KillGate();
        const followed = follow(scenario, id, gate);
        finishing.push(followed.then((status) => scenario.check(status, id)));
        const seen = await waitFor(`${scenario.name}: the history to pass ${half} events or the driver to be held`, async () => {
            const status = await statusOf(id);
            return (status?.historyEvents?.length ?? 0) >= half || gate.held ? status : undefined;
        }, 30_000, 20);
        await killHost(host);
        if (!TERMINAL.includes(seen!.runtimeStatus) || scenario.passesThrough?.includes(seen!.runtimeStatus)) midRun.push(scenario.name);
        host = await startHost(app.dir, env);
        gate.opened = true;
    }
    await Promise.all(finishing);
    return midRun;
}

function conformance(app: App) {
    let lengths: Map<Scenario, number>;
    it(`runs ${app.scenarios.length} scenarios straight through`, async () => {
        lengths = await runStraight(app);
        for (const scenario of app.scenarios) expect(lengths.get(scenario), scenario.name).toBeGreaterThan(2);
    }, 120_000);
    it("ends every scenario the same way with the host SIGKILLed mid-run in each and started again", async () => {
        const killedMidRun = await runKilled(app, lengths);
        expect(killedMidRun).toEqual(app.scenarios.map((scenario) => scenario.name));
    }, 180_000);
}

beforeAll(() => {
    ensureHostBuilt();
}, 180_000);

afterAll(async () => {
    await killAllHosts();
});

// ---- the conformance app: activities, retries, timers, events, sub-orchestrations, suspend/resume, terminate ----

const counterDir = mkdtempSync(path.join(tmpdir(), "host-killed-"));
const runsOf = (name: string) => loggedLines(path.join(counterDir, `${name}.log`)).length;

/** Raises `event` once the instance shows `whenStatus` as its custom status; once per run. */
const raiseWhen = (whenStatus: (custom: unknown) => boolean, event: string, data: unknown) => (): Driver => {
    let raised = false;
    return async (api, id, status) => {
        if (raised || status.runtimeStatus !== "Running" || !whenStatus(status.customStatus)) return;
        if ((await api.raise(id, event, data)).status === 202) raised = true;
    };
};

describe("durable features under a killed host", () => {
    const hub = uniqueName("killedhub");
    conformance({
        dir: APP_DIR,
        env: () => ({ ...conformanceSettings(connectionString, { HOSTAPP_COUNTER_DIR: counterDir, HOSTAPP_HUB: hub }), ...SHORT_VISIBILITY }),
        scenarios: [
            {
                name: "activities, a retry, fan-out, a timer, an external event, a sub-orchestration and continueAsNew",
                orchestrator: "featureOrchestration",
                input: () => undefined,
                ends: "Completed",
                driver: raiseWhen((custom) => (custom as { stage?: string } | undefined)?.stage === "waiting-for-approval", "approval", "approved"),
                check: (status, id) => {
                    expect(status.output).toMatchObject({
                        hello: "Hello P1",
                        fanOut: [1, 2, 3],
                        approved: "approved",
                        child: { echoed: { from: "parent" }, parent: id },
                        generation: 1,
                        final: "second generation",
                    });
                    expect(status.output.timerWaitedMs).toBeGreaterThanOrEqual(300);
                },
            },
            {
                name: "an activity retried until it succeeds",
                orchestrator: "retryOrchestration",
                input: (id) => ({ key: id, failTimes: 2, maxAttempts: 6, firstRetryMs: 200 }),
                ends: "Completed",
                check: (status) => expect(status.output).toBeGreaterThanOrEqual(3),
            },
            {
                name: "suspended and resumed while it waits for an event",
                orchestrator: "waitOrchestration",
                input: () => undefined,
                ends: "Completed",
                driver: () => {
                    // The steps advance on what the status shows: a request whose answer was lost (its host was
                    // killed under it) may still have landed, and a second suspend could land after the resume.
                    let step: "suspend" | "resume" | "raise" | "done" = "suspend";
                    let sentAt = 0;
                    const send = async (request: () => Promise<Reply>) => {
                        if (Date.now() - sentAt < 10_000) return;
                        const reply = await request().catch((error: Error) => ({ status: -1, text: error.message }) as Reply);
                        if (reply.status === 202 || reply.status === -1) sentAt = Date.now();
                    };
                    return async (api, id, status) => {
                        if (step === "suspend" && status.runtimeStatus === "Suspended") [step, sentAt] = ["resume", 0];
                        if (step === "resume" && status.runtimeStatus === "Running") [step, sentAt] = ["raise", 0];
                        if (step === "suspend" && status.runtimeStatus === "Running" && status.customStatus === "waiting") {
                            await send(() => api.op(id, "suspend"));
                        } else if (step === "resume" && status.runtimeStatus === "Suspended") {
                            await send(() => api.op(id, "resume"));
                        } else if (step === "raise" && status.runtimeStatus === "Running") {
                            if ((await api.raise(id, "go", "after resume")).status === 202) step = "done";
                        }
                    };
                },
                check: (status) => {
                    expect(status.output).toBe("after resume");
                    const types = (status.historyEvents as { EventType: string }[]).map((event) => event.EventType);
                    expect(types).toContain("ExecutionSuspended");
                    expect(types).toContain("ExecutionResumed");
                },
            },
            {
                name: "terminated while its activity runs",
                orchestrator: "blockingOrchestration",
                input: (id) => id,
                ends: "Terminated",
                driver: () => {
                    let terminated = false;
                    return async (api, id) => {
                        if (terminated || runsOf(`blocking-${id}`) === 0) return;
                        if ((await api.op(id, "terminate")).status === 202) terminated = true;
                    };
                },
                check: (status) => expect(status.output).toBe("test"),
            },
            {
                name: "a ten-day timer raced against an event that wins",
                orchestrator: "longTimerOrchestration",
                input: () => undefined,
                ends: "Completed",
                driver: () => {
                    let raised = false;
                    return async (api, id, status) => {
                        const timerCreated = (status.historyEvents as { EventType: string }[] | undefined)?.some((event) => event.EventType === "TimerCreated");
                        if (raised || !timerCreated) return;
                        if ((await api.raise(id, "stop", null)).status === 202) raised = true;
                    };
                },
                check: (status) => expect(status.output).toBe("stopped early"),
            },
        ],
    });
});

// ---- durable entities: calls, a signal on the way out, a critical section ----

const entityDir = mkdtempSync(path.join(tmpdir(), "host-killed-entities-"));

async function entityState(key: string): Promise<{ value: number; applied: number[] } | undefined> {
    try {
        const reply = await call("GET", `${host!.url}${DURABLE}/entities/counter/${key}`);
        return reply.status === 200 ? reply.json() : undefined;
    } catch {
        return undefined;
    }
}

describe("durable entities under a killed host", () => {
    const hub = uniqueName("killedent");
    conformance({
        dir: path.join(APP_DIR, "entities"),
        env: () => ({ AzureWebJobsStorage: connectionString, ENTITIES_HUB: hub, ENTITIES_COUNTER_DIR: entityDir, ...SHORT_VISIBILITY }),
        scenarios: [
            {
                name: "entity calls in order and a signal sent as the orchestration ends",
                orchestrator: "callCounter",
                input: (id) => ({ key: id, amounts: [1, 2, 3, 4], finalSignal: 10 }),
                ends: "Completed",
                check: async (status, id) => {
                    expect(status.output).toEqual({ returned: [1, 3, 6, 10], value: 10 });
                    // Each operation applied exactly once, the final signal included.
                    const state = await waitFor(`counter ${id} to take the final signal`, async () => {
                        const state = await entityState(id);
                        return state && state.value === 20 ? state : undefined;
                    }, 30_000);
                    expect(state.applied).toEqual([1, 2, 3, 4, 10]);
                },
            },
            {
                name: "a transfer between two locked entities",
                orchestrator: "lockedTransfer",
                input: (id) => ({ from: `${id}-from`, to: `${id}-to`, amount: 5 }),
                ends: "Completed",
                check: async (status, id) => {
                    expect(status.output).toMatchObject({ before: 0, releasedState: false });
                    expect(await entityState(`${id}-from`)).toEqual({ value: -5, applied: [-5] });
                    expect(await entityState(`${id}-to`)).toEqual({ value: 5, applied: [5] });
                },
            },
        ],
    });
});

// ---- management and versioning: rewind, callHttp polling, sub-orchestration retries, default version ----

const stateDir = mkdtempSync(path.join(tmpdir(), "host-killed-hv-"));
let jobServer: Server;
let jobUrl = "";
const jobPolls = new Map<string, number>();

beforeAll(async () => {
    // A slow job on loopback: POST answers 202 + Location; the job's second poll answers 200.
    jobServer = createServer((request, response) => {
        const job = new URL(request.url ?? "/", "http://x").pathname.split("/")[2] ?? "";
        if (request.method === "POST") {
            response.writeHead(202, { Location: `/job/${job}/status`, "Retry-After": "1" }).end();
            return;
        }
        const polls = (jobPolls.get(job) ?? 0) + 1;
        jobPolls.set(job, polls);
        if (polls < 2) response.writeHead(202, { Location: `/job/${job}/status`, "Retry-After": "1" }).end();
        else response.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ job, done: true }));
    });
    await new Promise<void>((resolve) => jobServer.listen(0, "127.0.0.1", resolve));
    jobUrl = `http://127.0.0.1:${(jobServer.address() as AddressInfo).port}/job`;
});

afterAll(async () => {
    await new Promise((resolve) => jobServer?.close(resolve));
});

describe("rewind, callHttp and versions under a killed host", () => {
    const hub = uniqueName("killedhv");
    conformance({
        dir: path.join(APP_DIR, "hostversions"),
        env: () => ({ AzureWebJobsStorage: connectionString, HV_HUB: hub, HV_STATE_DIR: stateDir, ...SHORT_VISIBILITY }),
        scenarios: [
            {
                name: "a failed orchestration rewound once its activity may succeed",
                orchestrator: "rewindable",
                input: (id) => id,
                ends: "Completed",
                passesThrough: ["Failed"],
                driver: () => {
                    let rewound = false;
                    return async (api, id, status) => {
                        if (rewound || status.runtimeStatus !== "Failed") return;
                        writeFileSync(path.join(stateDir, `${id}.ok`), "");
                        if ((await api.op(id, "rewind")).status === 202) rewound = true;
                    };
                },
                check: (status) => {
                    expect(status.output[0]).toBe("first");
                    expect(status.output[1]).toMatch(/^allowed on run \d+$/);
                },
            },
            {
                name: "a durable HTTP call that polls a 202's Location on loopback",
                orchestrator: "httpCaller",
                input: (id) => ({ url: `${jobUrl}/${id}` }),
                ends: "Completed",
                check: (status, id) => expect(status.output).toMatchObject({ statusCode: 200, content: JSON.stringify({ job: id, done: true }) }),
            },
            {
                name: "a sub-orchestration retried under its explicit id",
                orchestrator: "subRetryParent",
                input: (id) => id,
                ends: "Completed",
                check: (status, id) => expect(status.output).toBe(`${id}-explicit-child`),
            },
            {
                name: "sub-orchestrations started without a version run as the default version, a pinned one as its own",
                orchestrator: "versionedParent",
                input: () => undefined,
                ends: "Completed",
                check: (status) =>
                    expect(status.output).toEqual({ version: "1.0", child: { version: "1.0", echoed: "from parent" }, pinned: { version: "0.5", echoed: "pinned" } }),
            },
        ],
    });
});
