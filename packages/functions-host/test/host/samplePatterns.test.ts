import path from "node:path";
import { expect, it } from "vitest";
import { uniqueName } from "../helpers/names";
import { APP_DIR, call, fromBase64, historyRows, queue, testLog } from "./support/hostTestClient";
import { useInProcessHost } from "./support/inProcessHost";

// Patterns of the durable-js samples (callSubOrchestratorWithRetry.js, smsPhoneVerification.js)
// in an app of our own, started through an HTTP starter as the samples are.
const host = useInProcessHost(path.join(APP_DIR, "samples"), ({ connectionString, hub }) => ({ AzureWebJobsStorage: connectionString, SP_HUB: hub }), {
    hubPrefix: "sp",
    log: testLog("samplePatterns"),
});
const { api, connectionString, hub } = host;

async function startThroughStarter(name: string, input?: unknown): Promise<{ id: string; statusQueryGetUri: string; sendEventPostUri: string }> {
    const reply = await call("POST", `${host.url}/api/sp/${name}`, input === undefined ? "" : JSON.stringify(input), { "content-type": "application/json" });
    expect(reply.status).toBe(202);
    return reply.json();
}

const subOrchestrationRows = async (id: string) =>
    (await historyRows(connectionString, hub, id)).filter((row) => row.EventType.startsWith("SubOrchestrationInstance")) as unknown as { EventType: string; EventId: number; InstanceId?: string }[];

it.concurrent("retries a sub-orchestration under the id the orchestrator gave, even when it looks like a default id (<id>:0)", async () => {
    const { id } = await startThroughStarter("spRetryChildWithZeroSuffix");
    const status = await api.until(id, ["Completed", "Failed"]);
    expect(status.runtimeStatus).toBe("Completed");
    expect(status.output).toEqual({ childId: `${id}:0`, call: 2 });

    const attempts = await subOrchestrationRows(id);
    expect(attempts.filter((row) => row.EventType === "SubOrchestrationInstanceCreated").map((row) => row.InstanceId)).toEqual([`${id}:0`, `${id}:0`]);
    expect((await api.status(`${id}:0`)).json().runtimeStatus).toBe("Completed");
    expect((await api.status(`${id}:2`)).status).toBe(404);
});

it.concurrent("gives each attempt of a sub-orchestration without an id a new default id from its sequence id", async () => {
    const { id } = await startThroughStarter("spRetryChildWithDefaultId");
    const status = await api.until(id, ["Completed", "Failed"]);
    expect(status.runtimeStatus).toBe("Completed");
    expect(status.output).toEqual({ childId: `${id}:2`, call: 2 });

    const created = (await subOrchestrationRows(id)).filter((row) => row.EventType === "SubOrchestrationInstanceCreated");
    expect(created.map((row) => [row.EventId, row.InstanceId])).toEqual([
        [0, `${id}:0`],
        [2, `${id}:2`],
    ]);
    expect((await api.status(`${id}:0`)).json().runtimeStatus).toBe("Failed");
});

it.concurrent("waits for events against one timeout timer yielded again in every round of a Task.any loop, and completes once the right one arrives", async () => {
    const started = await startThroughStarter("spChallenge");
    await api.until(started.id, ["Running"]);
    const raise = (code: number) => call("POST", started.sendEventPostUri.replace("{eventName}", "Answer"), JSON.stringify(code), { "content-type": "application/json" });
    expect((await raise(1111)).status).toBe(202);
    expect((await raise(4242)).status).toBe(202);
    const status = await api.until(started.id, ["Completed", "Failed"]);
    expect(status.runtimeStatus).toBe("Completed");
    expect(status.output).toEqual({ accepted: true, attempts: 2 });
});

it.concurrent("binds an activity's output from the properties of its input, as backupSiteContent.js's backups/{backupPath} needs", async () => {
    const batch = uniqueName("b").toLowerCase();
    const { id } = await startThroughStarter("spCopyFiles", { batch, files: ["a.txt", "bb.txt", "ccc.txt"] });
    const status = await api.until(id, ["Completed", "Failed"]);
    expect(status).toMatchObject({ runtimeStatus: "Completed", output: 18 });
    const messages = await queue(connectionString, `sp-copies-${batch}`).receiveMessages({ numberOfMessages: 10 });
    expect(messages.receivedMessageItems.map((message) => fromBase64(message.messageText)).sort()).toEqual(["copied a.txt", "copied bb.txt", "copied ccc.txt"]);
});
