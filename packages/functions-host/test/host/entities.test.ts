import path from "node:path";
import { TableClient } from "@azure/data-tables";
import { describe, expect, it } from "vitest";
import { uniqueName } from "../helpers/names";
import { APP_DIR, call, DURABLE, historyRows, testLog, waitFor } from "./support/hostTestClient";
import { useInProcessHost } from "./support/inProcessHost";

const host = useInProcessHost(path.join(APP_DIR, "entities"), ({ connectionString, hub }) => ({ AzureWebJobsStorage: connectionString, ENTITIES_HUB: hub }), {
    hubPrefix: "entities",
    pollIntervalMs: 200,
    log: testLog("entities"),
});
const { api, connectionString, hub } = host;

const entityUrl = (name: string, key: string, query = "") => `${host.url}${DURABLE}/entities/${name}/${encodeURIComponent(key)}${query}`;

async function counterState(key: string): Promise<{ value: number; applied: number[] } | undefined> {
    const reply = await call("GET", entityUrl("counter", key));
    if (reply.status === 404) return undefined;
    expect(reply.status).toBe(200);
    return reply.json();
}

/** The entity's scheduler state as the Instances row keeps it (its Input). */
async function schedulerRow(key: string): Promise<{ RuntimeStatus: string; state: { exists: boolean; queue: unknown[]; lockedBy?: string } }> {
    const table = TableClient.fromConnectionString(connectionString, `${hub}Instances`, { allowInsecureConnection: true });
    const row = await table.getEntity<{ RuntimeStatus: string; Input: string }>(`@counter@${key}`, "");
    return { RuntimeStatus: row.RuntimeStatus, state: JSON.parse(row.Input) };
}

describe.concurrent("signals and reads from clients", () => {
    it("applies signals from the durable-functions client in order and reads the state back through it", async () => {
        const key = uniqueName("client");
        for (const amount of [1, 2, 3, 4]) expect((await call("POST", `${host.url}/api/counter/${key}/add`, amount)).status).toBe(202);
        const read = await waitFor("four adds", async () => {
            const reply = await call("GET", `${host.url}/api/counter/${key}`);
            return reply.json().entityState?.applied?.length === 4 ? reply.json() : undefined;
        });
        expect(read).toEqual({ entityExists: true, entityState: { value: 10, applied: [1, 2, 3, 4] } });
        expect((await call("GET", `${host.url}/api/counter/${uniqueName("never")}`)).json()).toEqual({ entityExists: false, entityState: null });
    });

    it("serves the entity webhooks: signal (POST ?op=, DELETE), read (404 when missing), list with state", async () => {
        const key = uniqueName("hook");
        expect((await call("POST", entityUrl("counter", key, "?op=add"), 5)).status).toBe(202);
        await waitFor("the add", async () => (await counterState(key))?.value === 5);
        expect((await call("GET", entityUrl("counter", uniqueName("missing")))).status).toBe(404);

        const listed = await call("GET", `${host.url}${DURABLE}/entities/counter?fetchState=true`);
        expect(listed.status).toBe(200);
        expect(listed.json()).toContainEqual({ entityId: { name: "counter", key }, lastOperationTime: expect.any(String), state: { value: 5, applied: [5] } });

        expect((await call("DELETE", entityUrl("counter", key))).status).toBe(202);
        await waitFor("the delete", async () => (await call("GET", entityUrl("counter", key))).status === 404);
        const afterDelete = await call("GET", `${host.url}${DURABLE}/entities/counter`);
        expect(afterDelete.json().map((e: { entityId: { key: string } }) => e.entityId.key)).not.toContain(key);
        expect((await schedulerRow(key)).RuntimeStatus).toBe("Completed");

        expect((await call("POST", entityUrl("nosuch", "x", "?op=add"), 1)).status).toBe(400);
        expect((await call("POST", entityUrl("counter", key, "?op=add"), "{not json", { "content-type": "application/json" })).status).toBe(400);
    });

    it("reads an entity's status as an instance, refuses to purge a live entity, and purges a deleted one's storage (the clean-up the extension offers)", async () => {
        const key = uniqueName("clean");
        const instance = (op = "") => `${host.url}${DURABLE}/instances/${encodeURIComponent(`@counter@${key}`)}${op}`;
        await call("POST", entityUrl("counter", key, "?op=add"), 2);
        await waitFor("the add", async () => (await counterState(key))?.value === 2);
        const status = await call("GET", instance());
        expect(status.status).toBe(202); // the status API's answer for a Running instance
        expect(status.json()).toMatchObject({ instanceId: `@counter@${key}`, runtimeStatus: "Running" });

        const refused = await call("DELETE", instance());
        expect(refused.status).toBe(400);
        expect(refused.json().message).toMatch(/Cannot purge the entity @counter@.* while it exists; delete it first/);
        expect((await call("POST", instance("/terminate?reason=x"))).status).toBe(400);

        await call("DELETE", entityUrl("counter", key));
        await waitFor("the delete", async () => (await call("GET", entityUrl("counter", key))).status === 404);
        const purged = await call("DELETE", instance());
        expect(purged.status).toBe(200);
        expect(purged.json()).toEqual({ instancesDeleted: 1 });
        expect((await call("GET", instance())).status).toBe(404);
    });

    it("regression CI stop 28 entity read after delete: a read and the list agree, both from the entity's Instances row (its history is written first)", async () => {
        const key = uniqueName("agree");
        await call("POST", entityUrl("counter", key, "?op=add"), 7);
        await waitFor("the add", async () => (await counterState(key))?.value === 7);
        // The moment between a delete's history commit and its Instances row: the row is what both must read.
        const table = TableClient.fromConnectionString(connectionString, `${hub}Instances`, { allowInsecureConnection: true });
        await table.updateEntity({ partitionKey: `@counter@${key}`, rowKey: "", Input: JSON.stringify({ exists: false, queue: [] }) }, "Merge");
        expect((await call("GET", entityUrl("counter", key))).status).toBe(404);
        const listed = await call("GET", `${host.url}${DURABLE}/entities/counter`);
        expect(listed.json().map((e: { entityId: { key: string } }) => e.entityId.key)).not.toContain(key);
    });

    it("keeps entities out of the orchestration instance list", async () => {
        const key = uniqueName("hidden");
        await call("POST", entityUrl("counter", key, "?op=add"), 1);
        await waitFor("the add", async () => (await counterState(key))?.value === 1);
        const listed = await api.list("?top=1000");
        expect(listed.json().map((s: { instanceId: string }) => s.instanceId)).not.toContain(`@counter@${key}`);
    });
});

describe.concurrent("entities from orchestrations", () => {
    it("returns callEntity results in order, records EventSent rows, and still sends a signal issued on the way out", async () => {
        const key = uniqueName("calls");
        const id = uniqueName("caller");
        expect((await api.start("callCounter", id, { key, amounts: [2, 3, 5], finalSignal: 100 })).status).toBe(202);
        const status = await api.until(id, ["Completed"]);
        expect(status.output).toEqual({ returned: [2, 5, 10], value: 10 });
        await waitFor("the final signal", async () => (await counterState(key))?.value === 110);
        expect((await counterState(key))?.applied).toEqual([2, 3, 5, 100]);

        const rows = await historyRows(connectionString, hub, id);
        const sent = rows.filter((r) => r.EventType === "EventSent").map((r) => r.EventId);
        expect(sent).toEqual([0, 1, 2, 3, 4]);
    });

    it("surfaces an operation's exception to the calling orchestration as a failed task", async () => {
        const id = uniqueName("failing");
        expect((await api.start("callFailing", id, uniqueName("f"))).status).toBe(202);
        expect((await api.until(id, ["Completed"])).output).toBe("caught: Error");
    });

    it("fails an orchestration that calls an entity function that does not exist", async () => {
        const id = uniqueName("missing");
        expect((await api.start("callMissing", id)).status).toBe(202);
        const status = await api.until(id, ["Failed"]);
        expect(status.output).toContain("The function 'nosuch' doesn't exist, is disabled, or is not an entity function");
    });

    it("delivers signals an entity sends to another entity", async () => {
        const from = uniqueName("from");
        const to = uniqueName("to");
        await call("POST", entityUrl("counter", from, "?op=forward"), { key: to, amount: 7 });
        await waitFor("the forwarded add", async () => (await counterState(to))?.value === 7);
        expect(await counterState(from)).toEqual({ value: 0, applied: [] });
    });
});

describe.concurrent("critical sections", () => {
    it("holds back other operations on a locked entity until the orchestration releases it, then applies them in order", async () => {
        const from = uniqueName("acct");
        const to = uniqueName("acct");
        await call("POST", entityUrl("counter", from, "?op=add"), 50);
        await waitFor("the deposit", async () => (await counterState(from))?.value === 50);

        const id = uniqueName("transfer");
        expect((await api.start("lockedTransfer", id, { from, to, amount: 20, wait: true })).status).toBe(202);
        await waitFor("the critical section", async () => (await api.status(id)).json().customStatus === "holding");
        expect((await schedulerRow(from)).state.lockedBy).toBe(id);
        expect((await schedulerRow(to)).state.lockedBy).toBe(id);

        await call("POST", entityUrl("counter", from, "?op=add"), 1);
        await waitFor("the signal to be queued behind the lock", async () => (await schedulerRow(from)).state.queue.length === 1);
        expect(await counterState(from)).toEqual({ value: 50, applied: [50] });

        expect((await api.raise(id, "go", null)).status).toBe(202);
        const status = await api.until(id, ["Completed"]);
        expect(status.output).toEqual({ before: 50, locked: [`counter/${from}`, `counter/${to}`].sort(), releasedState: false });
        // lock, get, add, add, then one release per locked entity: the SDK's sequence ids.
        const sent = (await historyRows(connectionString, hub, id)).filter((r) => r.EventType === "EventSent");
        expect(sent.map((r) => [r.EventId, r.Name])).toEqual([[0, "op"], [1, "op"], [2, "op"], [3, "op"], [4, "release"], [5, "release"]]);
        await waitFor("the held-back signal", async () => (await counterState(from))?.value === 31);
        expect((await counterState(from))?.applied).toEqual([50, -20, 1]);
        expect(await counterState(to)).toEqual({ value: 20, applied: [20] });
        expect((await schedulerRow(from)).state.lockedBy).toBeUndefined();
        // Each entity takes its release on its own: `to` may come a poll after `from`.
        await waitFor("the release of the second lock", async () => (await schedulerRow(to)).state.lockedBy === undefined);
    });

    it("makes a second lock on the same entity wait for the first", async () => {
        const a = uniqueName("shared");
        const b = uniqueName("other");
        const c = uniqueName("third");
        const first = uniqueName("first");
        const second = uniqueName("second");
        await api.start("lockedTransfer", first, { from: a, to: b, amount: 1, wait: true });
        await waitFor("the first critical section", async () => (await api.status(first)).json().customStatus === "holding");
        await api.start("lockedTransfer", second, { from: a, to: c, amount: 2, wait: false });
        await waitFor("the second lock request to queue", async () => (await schedulerRow(a)).state.queue.length === 1);
        expect((await api.status(second)).json().runtimeStatus).toBe("Running");

        await api.raise(first, "go", null);
        await api.until(first, ["Completed"]);
        expect((await api.until(second, ["Completed"])).output.before).toBe(-1);
        expect((await counterState(a))?.applied).toEqual([-1, -2]);
    });

    it("drops the lock request of an orchestration terminated while it waited for the lock", async () => {
        const a = uniqueName("contested");
        const b = uniqueName("side");
        const holder = uniqueName("holder");
        const waiter = uniqueName("waiter");
        await api.start("lockedTransfer", holder, { from: a, to: b, amount: 1, wait: true });
        await waitFor("the holder's critical section", async () => (await api.status(holder)).json().customStatus === "holding");
        await api.start("lockedTransfer", waiter, { from: a, to: uniqueName("c"), amount: 2, wait: false });
        await waitFor("the waiter's lock request to queue", async () => (await schedulerRow(a)).state.queue.length === 1);
        expect((await api.op(waiter, "terminate")).status).toBe(202);
        await api.until(waiter, ["Terminated"]);
        await waitFor("the waiter's request to be dropped", async () => (await schedulerRow(a)).state.queue.length === 0);

        await api.raise(holder, "go", null);
        await api.until(holder, ["Completed"]);
        await call("POST", entityUrl("counter", a, "?op=add"), 7);
        await waitFor("the add after both", async () => (await counterState(a))?.applied.length === 2);
        expect((await counterState(a))?.applied).toEqual([-1, 7]);
        expect((await schedulerRow(a)).state.lockedBy).toBeUndefined();
    });

    it("releases the locks of an orchestration that ends while holding them", async () => {
        const key = uniqueName("orphan");
        const id = uniqueName("holder");
        await api.start("lockAndReturn", id, key);
        await api.until(id, ["Completed"]);
        await call("POST", entityUrl("counter", key, "?op=add"), 3);
        await waitFor("the add after the release", async () => (await counterState(key))?.value === 3);
        expect((await schedulerRow(key)).state.lockedBy).toBeUndefined();
    });
});

describe.concurrent("redelivery", () => {
    it("recognises an entity message it already applied (as after a crash between commit and delete) and does not apply it twice", async () => {
        const { QueueClient } = await import("@azure/storage-queue");
        const key = uniqueName("dup");
        const control = new QueueClient(connectionString, `${hub.toLowerCase()}-control-00`);
        const message = JSON.stringify({
            kind: "control",
            id: `dup-${key}`,
            instanceId: `@counter@${key}`,
            sentAt: new Date().toISOString(),
            event: { EventType: "EventRaised", EventId: -1, Timestamp: new Date().toISOString(), Name: "op", Input: JSON.stringify({ id: `req-${key}`, op: "add", signal: true, input: "4" }) },
        });
        await control.sendMessage(message);
        await waitFor("the first delivery", async () => (await counterState(key))?.value === 4);
        await control.sendMessage(message);
        await call("POST", entityUrl("counter", key, "?op=add"), 1);
        await waitFor("the add after the duplicate", async () => (await counterState(key))?.applied.length === 2);
        expect(await counterState(key)).toEqual({ value: 5, applied: [4, 1] });
    });
});
