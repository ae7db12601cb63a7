import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import { startHost } from "@sheetwright/functions-host";
import { APP_FUNCTIONS } from "../helpers/appFunctions";
import { publishedFiles } from "../helpers/coreToolsFuncIgnore";
import { ownAppSettings } from "../../tools/stack/appSettings";

const ROOT = path.resolve(__dirname, "..", "..");

/** Every file of the app folder but node_modules (the test installs the production ones itself). */
function appFolderFiles(relative = ""): string[] {
    return readdirSync(path.join(ROOT, relative), { withFileTypes: true }).flatMap((entry) => {
        const child = relative ? `${relative}/${entry.name}` : entry.name;
        if (child === "node_modules") return [];
        return entry.isDirectory() ? appFolderFiles(child) : entry.isFile() ? [child] : [];
    });
}

describe("the package func azure functionapp publish deploys", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "sheetwright-publish-"));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it("holds production dependencies only, and the app loads from it with every function registered", { timeout: 180_000 }, async () => {
        // As Core Tools reads .funcignore (its own parser, not git's): test/helpers/coreToolsFuncIgnore.ts.
        const copied = publishedFiles(appFolderFiles(), readFileSync(path.join(ROOT, ".funcignore"), "utf8"));
        for (const file of copied) {
            mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
            cpSync(path.join(ROOT, file), path.join(dir, file));
        }
        expect(copied).toContain("dist/src/index.js");
        expect(copied.filter((file) => !file.startsWith("dist/src/") && !file.startsWith("dist/tools/jobs-cli/")).sort()).toEqual([
            "host.json",
            "package-lock.json",
            "package.json",
        ]);
        expect(copied.filter((file) => file.startsWith("dist/src/") && !file.endsWith(".js"))).toEqual([]);

        execFileSync("npm", ["ci", "--omit=dev", "--no-audit", "--no-fund", "--ignore-scripts"], { cwd: dir, stdio: "pipe" });
        const installed = readdirSync(path.join(dir, "node_modules"));
        for (const dev of ["vitest", "typescript", "azurite", "fast-check", "vite"]) expect(installed).not.toContain(dev);

        const host = await startHost({
            appDir: dir,
            port: 0,
            log: () => undefined,
            settings: {
                FUNCTIONS_WORKER_RUNTIME: "node",
                AzureWebJobsStorage: inject("azuriteConnectionString"),
                SMARTSHEET_ACCESS_TOKEN: "tok",
                SMARTSHEET_BASE_URL: "http://127.0.0.1:9/2.0/",
                INTAKE_SHEET_ID: "4583173393803140",
                TEMPLATE_FOLDER_ID: "1234567890123456",
                PRODUCTS_FOLDER_ID: "2234567890123456",
                FILING_INDEX_SHEET_ID: "3234567890123456",
                ...ownAppSettings("publish", "publish-function-key"),
            },
        });
        try {
            expect(host.functions.map((fn) => fn.name).sort()).toEqual(APP_FUNCTIONS);
        } finally {
            await host.stop();
        }
    });
});
