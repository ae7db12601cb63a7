import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const root = path.resolve(__dirname, "..", "..");
const script = path.join(root, "infra", "scripts", "hostForBackend.mjs");
const committed = readFileSync(path.join(root, "host.json"), "utf8");

describe("infra/scripts/hostForBackend.mjs: host.json for the Durable Functions backend", () => {
    const dirs: string[] = [];
    afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));
    const copyOfHostJson = () => {
        const dir = mkdtempSync(path.join(tmpdir(), "host-backend-"));
        dirs.push(dir);
        copyFileSync(path.join(root, "host.json"), path.join(dir, "host.json"));
        return path.join(dir, "host.json");
    };
    const run = (hostJson: string, ...args: string[]) => execFileSync(process.execPath, [script, ...args, "--host", hostJson], { encoding: "utf8", env: { PATH: process.env.PATH } });

    it("switches to the Durable Task Scheduler (azureManaged) and changes nothing else", () => {
        const hostJson = copyOfHostJson();
        run(hostJson, "durableTaskScheduler");
        const switched = JSON.parse(readFileSync(hostJson, "utf8"));
        expect(switched.extensions.durableTask.storageProvider).toEqual({
            type: "azureManaged",
            connectionStringName: "DURABLE_TASK_SCHEDULER_CONNECTION_STRING",
        });
        delete switched.extensions.durableTask.storageProvider;
        expect(switched).toEqual(JSON.parse(committed));
        expect(switched.extensions.durableTask.hubName).toBe("%TASK_HUB_NAME%");
    });

    it("leaves the committed host.json byte for byte as it is for the Azure Storage backend, and switches back", () => {
        const hostJson = copyOfHostJson();
        expect(run(hostJson, "azureStorage")).toMatch(/unchanged/);
        expect(readFileSync(hostJson, "utf8")).toBe(committed);
        run(hostJson, "durableTaskScheduler");
        run(hostJson, "azureStorage");
        expect(JSON.parse(readFileSync(hostJson, "utf8"))).toEqual(JSON.parse(committed));
    });

    it("reads the backend from DURABLE_BACKEND, as azd passes it to the prepackage hook", () => {
        const hostJson = copyOfHostJson();
        execFileSync(process.execPath, [script, "--host", hostJson], { env: { PATH: process.env.PATH, DURABLE_BACKEND: "durableTaskScheduler" } });
        expect(JSON.parse(readFileSync(hostJson, "utf8")).extensions.durableTask.storageProvider.type).toBe("azureManaged");
    });

    it("refuses an unknown backend with the names it takes, and writes nothing", () => {
        const hostJson = copyOfHostJson();
        const result = spawnSync(process.execPath, [script, "mssql", "--host", hostJson], { encoding: "utf8" });
        expect(result.status).toBe(2);
        expect(result.stderr).toContain('unknown Durable Functions backend "mssql"; expected azureStorage or durableTaskScheduler');
        expect(readFileSync(hostJson, "utf8")).toBe(committed);
    });
});
