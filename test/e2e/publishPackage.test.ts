import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import { startHost } from "../../tools/functions-host/index";
import { uniqueName } from "../helpers/names";

const ROOT = path.resolve(__dirname, "..", "..");

/** `.funcignore` as `func azure functionapp publish` reads it (the gitignore forms it uses). */
function funcIgnored(): (relative: string) => boolean {
    const patterns = readFileSync(path.join(ROOT, ".funcignore"), "utf8")
        .split("\n")
        .map((line) => line.trim())
        .filter((line) => line !== "" && !line.startsWith("#"));
    const matchers = patterns.map((pattern) => {
        const directory = pattern.endsWith("/");
        const body = pattern.replace(/\/$/, "").replace(/^\//, "");
        const anchored = pattern.startsWith("/") || body.includes("/");
        const glob = new RegExp(`^${body.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*")}$`);
        return (relative: string) => {
            const parts = relative.split("/");
            if (anchored) return relative === body || relative.startsWith(`${body}/`) || (!directory && glob.test(relative));
            return parts.some((part, index) => glob.test(part) && (!directory || index < parts.length - 1 || existsSync(path.join(ROOT, relative))));
        };
    });
    return (relative) => matchers.some((matches) => matches(relative));
}

describe("the package func azure functionapp publish deploys", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "sheetwright-publish-"));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it("holds production dependencies only, and the app loads from it with every function registered", { timeout: 180_000 }, async () => {
        const ignored = funcIgnored();
        const copied: string[] = [];
        const walk = (relative: string) => {
            for (const entry of readdirSync(path.join(ROOT, relative), { withFileTypes: true })) {
                const child = relative ? `${relative}/${entry.name}` : entry.name;
                if (child === "node_modules" || ignored(child)) continue;
                if (entry.isDirectory()) walk(child);
                else {
                    mkdirSync(path.dirname(path.join(dir, child)), { recursive: true });
                    cpSync(path.join(ROOT, child), path.join(dir, child));
                    copied.push(child);
                }
            }
        };
        walk("");
        expect(copied.filter((file) => !file.startsWith("dist/src/")).sort()).toEqual([".funcignore", "host.json", "package-lock.json", "package.json"]);
        expect(copied.filter((file) => file.endsWith(".ts") || file.endsWith(".map"))).toEqual([]);

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
                TASK_HUB_NAME: uniqueName("hub").replace(/[^A-Za-z0-9]/g, ""),
                JOBS_TABLE: uniqueName("jobs").replace(/[^A-Za-z0-9]/g, ""),
                PROVISION_QUEUE: uniqueName("provision-"),
                INTAKE_SWEEP_SCHEDULE: "0 0 0 1 1 *",
                INTAKE_FULL_SWEEP_SCHEDULE: "0 0 0 1 1 *",
                REAPER_SCHEDULE: "0 0 0 1 1 *",
            },
        });
        try {
            expect(host.functions.map((fn) => fn.name).sort()).toEqual(
                [
                    "auditProduct",
                    "beginAttempt",
                    "completeJob",
                    "confirmStalled",
                    "copyTemplateSheet",
                    "ensureProductFolder",
                    "enterStage",
                    "getJob",
                    "intakeFullSweep",
                    "intakeSweep",
                    "listJobs",
                    "parkJob",
                    "provisionProduct",
                    "provisionStarter",
                    "reaper",
                    "reconcileJobs",
                    "reconcileNow",
                    "registerDocumentRegister",
                    "remapReferences",
                    "resumeJob",
                    "stampSummary",
                    "unparkJob",
                    "verifyCopies",
                ].sort(),
            );
        } finally {
            await host.stop();
        }
    });
});
