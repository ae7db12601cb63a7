import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildDeployPackage } from "../../tools/package/deployPackage";
import { APP_FUNCTIONS } from "../helpers/appFunctions";
import { FUNCTION_KEY, startE2E, useE2E, waitFor } from "../helpers/e2e";
import { inspectProduct, intakeRow } from "../helpers/inspectProduct";

const ROOT = path.resolve(__dirname, "..", "..");
const CODES = ["IND-1042", "IND-1043", "CON-2201"];

describe("the deploy package: the app and the jobs CLI bundled by esbuild (npm run package)", { timeout: 180_000 }, () => {
    // Outside the checkout, so that no node_modules above it can lend the bundle a dependency.
    const parent = mkdtempSync(path.join(tmpdir(), "sheetwright-package-"));
    const azureStorage = path.join(parent, "azureStorage");
    const scheduler = path.join(parent, "durableTaskScheduler");
    // The package for the other backend is needed only for its host.json: it is built while the
    // bundle for azureStorage runs its products end to end (mostly waiting on the host), and
    // awaited by the test that reads it.
    let schedulerBuilt: Promise<unknown> = Promise.resolve();
    beforeAll(async () => {
        await buildDeployPackage({ outDir: azureStorage, backend: "azureStorage" });
        schedulerBuilt = buildDeployPackage({ outDir: scheduler, backend: "durableTaskScheduler" });
        // Never an unhandled rejection: a failed build fails the test that awaits it.
        schedulerBuilt.catch(() => undefined);
    }, 120_000);
    afterAll(async () => {
        await schedulerBuilt.catch(() => undefined);
        rmSync(parent, { recursive: true, force: true });
    });
    const stack = useE2E(startE2E);

    it("registers every function and provisions products end to end from the bundle; its own jobs CLI lists them", async () => {
        const e2e = await stack.start({ appDir: azureStorage });
        const functions = (await (await fetch(`${e2e.host.url}/admin/functions`)).json()) as Array<{ name: string }>;
        expect(functions.map((fn) => fn.name).sort()).toEqual(APP_FUNCTIONS);

        await e2e.fire("intakeSweep");
        const done = await waitFor(async () => {
            const response = await e2e.api("jobs?state=done");
            const { jobs } = (await response.json()) as { jobs: Array<{ productCode: string; folderLink?: string }> };
            return jobs.length >= CODES.length ? jobs : undefined;
        }, `${CODES.length} jobs done`);
        expect(done.map((job) => job.productCode).sort()).toEqual([...CODES].sort());
        const state = e2e.sim.core.state();
        for (const job of done) {
            const product = inspectProduct(state, job.productCode);
            expect(product.folders).toHaveLength(1);
            expect(product.sheets).toHaveLength(7);
            expect(product.foreignFormulas).toEqual([]);
            expect(product.brokenFormulas).toEqual([]);
            expect(product.productCodeValues).toEqual([job.productCode]);
            expect(product.filingRows).toHaveLength(1);
            expect(intakeRow(state, job.productCode)).toMatchObject({ Status: "Done", Folder: job.folderLink });
        }
        expect(e2e.sim.core.calls().byOperation.copySheet).toBe(7 * CODES.length);

        const cli = spawnSync(process.execPath, [path.join(azureStorage, "sheetwright-jobs.js"), "list", "--state", "done"], {
            encoding: "utf8",
            cwd: azureStorage,
            env: { ...process.env, SHEETWRIGHT_URL: e2e.host.url, SHEETWRIGHT_KEY: FUNCTION_KEY },
        });
        expect(cli.stderr).toBe("");
        expect(cli.status).toBe(0);
        for (const code of CODES) expect(cli.stdout).toContain(code);
    });

    it("holds four files, no dependency to install, and host.json for the backend it was built for", async () => {
        await schedulerBuilt;
        expect(readdirSync(azureStorage).sort()).toEqual(["host.json", "index.js", "package.json", "sheetwright-jobs.js"]);
        const manifest = JSON.parse(readFileSync(path.join(azureStorage, "package.json"), "utf8")) as Record<string, unknown>;
        expect(manifest).toMatchObject({ main: "index.js", bin: { "sheetwright-jobs": "sheetwright-jobs.js" } });
        expect(manifest).not.toHaveProperty("dependencies");
        expect(manifest).not.toHaveProperty("scripts");

        const committed = JSON.parse(readFileSync(path.join(ROOT, "host.json"), "utf8")) as { extensions: { durableTask: Record<string, unknown> } };
        expect(JSON.parse(readFileSync(path.join(azureStorage, "host.json"), "utf8"))).toEqual(committed);
        const forScheduler = JSON.parse(readFileSync(path.join(scheduler, "host.json"), "utf8")) as typeof committed;
        expect(forScheduler.extensions.durableTask.storageProvider).toMatchObject({ type: "azureManaged" });
        expect({ ...forScheduler.extensions.durableTask, storageProvider: undefined }).toEqual({ ...committed.extensions.durableTask, storageProvider: undefined });
    });
});
