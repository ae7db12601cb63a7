import { TableClient } from "@azure/data-tables";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { compareVersions, versionAllowed } from "../../src/durable/versioning";
import { uniqueName } from "../helpers/names";
import { APP_DIR, call, sleep, waitFor } from "./support/hostTestClient";
import { useInProcessHost } from "./support/inProcessHost";

const lines: string[] = [];
// host.json: defaultVersion "1.0"; versionMatchStrategy and versionFailureStrategy keep their defaults (CurrentOrOlder, Reject).
const host = useInProcessHost(
    path.join(APP_DIR, "hostversions"),
    ({ connectionString, hub }) => ({ AzureWebJobsStorage: connectionString, HV_HUB: hub, HV_STATE_DIR: mkdtempSync(path.join(tmpdir(), "hv-state-")) }),
    { hubPrefix: "hv", log: (line) => lines.push(line) },
);
const { api, connectionString, hub } = host;

describe("version comparison (DTFx VersioningSettings.CompareVersions)", () => {
    it("orders empty before defined, dotted versions numerically, anything else as case-insensitive text", () => {
        expect(compareVersions("", "")).toBe(0);
        expect(compareVersions(undefined, "1.0")).toBe(-1);
        expect(compareVersions("1.0", "")).toBe(1);
        expect(compareVersions("1.10", "1.9")).toBe(1);
        expect(compareVersions("1.0", "1.0.0")).toBe(-1);
        expect(compareVersions("V2", "v2")).toBe(0);
        expect(compareVersions("10", "9")).toBe(-1);
    });

    it("applies the match strategy", () => {
        const base = { defaultVersion: "2.0", failureStrategy: "Reject" as const };
        expect(versionAllowed({ ...base, matchStrategy: "CurrentOrOlder" }, "1.5")).toBe(true);
        expect(versionAllowed({ ...base, matchStrategy: "CurrentOrOlder" }, "2.1")).toBe(false);
        expect(versionAllowed({ ...base, matchStrategy: "Strict" }, "1.5")).toBe(false);
        expect(versionAllowed({ ...base, matchStrategy: "Strict" }, "2.0")).toBe(true);
        expect(versionAllowed({ ...base, matchStrategy: "None" }, "9.9")).toBe(true);
    });
});

it.concurrent("gives an instance started without a version the defaultVersion, shown by the status API, the Instances table and context.df.version", async () => {
    const id = uniqueName("v-default");
    expect((await api.start("versioned", id, "hi")).status).toBe(202);
    const status = await api.until(id, ["Completed"]);
    expect(status.version).toBe("1.0");
    expect(status.output).toEqual({ version: "1.0", echoed: "hi" });
    const instances = TableClient.fromConnectionString(connectionString, `${hub}Instances`, { allowInsecureConnection: true });
    const row = await instances.getEntity<{ Version: string }>(id, "");
    expect(row.Version).toBe("1.0");
    const history = (await api.status(id, "?showHistory=true")).json();
    expect(history.version).toBe("1.0");
});

it.concurrent("runs an older explicit version (CurrentOrOlder), passed through the durable client's startNew version option", async () => {
    const id = uniqueName("v-old");
    const reply = await call("POST", `${host.url}/api/hvstart/versioned/${id}?version=0.9`, JSON.stringify("older"));
    expect(reply.status).toBe(200);
    const status = await api.until(id, ["Completed"]);
    expect(status.version).toBe("0.9");
    expect(status.output).toEqual({ version: "0.9", echoed: "older" });
});

it.concurrent("gives sub-orchestrations the defaultVersion unless the call names one", async () => {
    const id = uniqueName("v-parent");
    await api.start("versionedParent", id);
    const status = await api.until(id, ["Completed"]);
    expect(status.output).toEqual({ version: "1.0", child: { version: "1.0", echoed: "from parent" }, pinned: { version: "0.5", echoed: "pinned" } });
    expect((await api.status(`${id}-child`)).json().version).toBe("1.0");
    expect((await api.status(`${id}-pinned`)).json().version).toBe("0.5");
});

it.concurrent("leaves a newer-version instance Pending and unprocessed (versionFailureStrategy Reject), and logs why", async () => {
    const id = uniqueName("v-new");
    expect((await call("POST", `${host.url}/api/hvstart/versioned/${id}?version=2.0`, JSON.stringify("too new"))).status).toBe(200);
    await waitFor("the rejection to be logged", () => lines.some((l) => l.includes(`instance '${id}'`) && l.includes("versionFailureStrategy Reject leaves it waiting")));
    await sleep(1500);
    const status = (await api.status(id, "?showHistory=true")).json();
    expect(status.runtimeStatus).toBe("Pending");
    expect(status.version).toBe("2.0");
    expect(status.output).toBeNull();
    expect(status.historyEvents ?? []).toHaveLength(0);
    expect(lines.some((l) => l.includes("Functions.versioned") && l.includes(id))).toBe(false);
    // Like DTFx, the version check comes before the work item's messages are looked at: a terminate waits too.
    expect((await api.op(id, "terminate", "cleanup")).status).toBe(202);
    await sleep(1000);
    expect((await api.status(id)).json().runtimeStatus).toBe("Pending");
});
