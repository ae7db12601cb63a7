import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { AppSettings, mergeAppSettings } from "../../src/config/appSettings";
import { normalizeConnectionString } from "../../src/storage/storageAccount";
import { HostConfig } from "../../src/config/hostConfig";
import { loadAppEntryPoints, resolveAppEntryPoints } from "../../src/worker/appLoader";
import { expandGlob } from "../../src/worker/glob";
import { formatTimeSpan, parseTimeSpan } from "../../src/schedule/timeSpan";

function appDir(files: Record<string, string>): string {
    const dir = mkdtempSync(path.join(tmpdir(), "host-config-"));
    for (const [name, text] of Object.entries(files)) {
        mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
        writeFileSync(path.join(dir, name), text);
    }
    return dir;
}

describe("host.json with AzureFunctionsJobHost__ overrides", () => {
    it("applies overrides over host.json, case-insensitively, creating missing sections", () => {
        const dir = appDir({ "host.json": JSON.stringify({ functionTimeout: "00:10:00", extensions: { durableTask: { hubName: "Sheetwright" } } }) });
        const settings = new AppSettings({
            AzureFunctionsJobHost__functionTimeout: "00:00:05",
            AZUREFUNCTIONSJOBHOST__EXTENSIONS__DURABLETASK__HUBNAME: "Other",
            "AzureFunctionsJobHost:extensions:queues:batchSize": "4",
        });
        const config = HostConfig.load(dir, settings);
        expect(config.timeSpan("functionTimeout", 0)).toBe(5000);
        expect(config.string("extensions.durableTask.hubName")).toBe("Other");
        expect(config.number("extensions.queues.batchSize", 16)).toBe(4);
        expect(config.number("extensions.queues.maxDequeueCount", 5)).toBe(5);
    });

    it("uses the hostJson override instead of the file", () => {
        const dir = appDir({ "host.json": JSON.stringify({ functionTimeout: "00:10:00" }) });
        expect(HostConfig.load(dir, new AppSettings({}), { functionTimeout: "00:01:00" }).timeSpan("functionTimeout", 0)).toBe(60_000);
    });

    it("explains a malformed TimeSpan", () => {
        const config = HostConfig.load(appDir({}), new AppSettings({ AzureFunctionsJobHost__functionTimeout: "ten minutes" }));
        expect(() => config.timeSpan("functionTimeout", 0)).toThrow(/TimeSpan like "00:05:00"/);
    });
});

describe("app settings", () => {
    it("takes the environment over local.settings.json, and explicit settings over both", () => {
        const dir = appDir({ "local.settings.json": JSON.stringify({ IsEncrypted: false, Values: { A: "file", B: "file", C: "file" } }) });
        const warnings: string[] = [];
        const merged = mergeAppSettings(dir, { A: "env", B: "env" }, { B: "explicit" }, (w) => warnings.push(w));
        expect([merged.A, merged.B, merged.C]).toEqual(["env", "explicit", "file"]);
        expect(warnings.join("\n")).toContain("Skipping 'A'");
    });

    it("resolves %SETTING% binding expressions and names the missing one", () => {
        const settings = new AppSettings({ QUEUE: "jobs" });
        expect(settings.resolve("%QUEUE%-poison", "x")).toBe("jobs-poison");
        expect(() => settings.resolve("%NOPE%", "Function 'f' binding property 'queueName'")).toThrow(/no app setting named 'NOPE'/);
    });

    it("finds connection strings and the Disabled switch as the host does", () => {
        const settings = new AppSettings({ AzureWebJobsStorage: "UseDevelopmentStorage=true", AzureWebJobsOther: "x", "AzureWebJobs.timer1.Disabled": "true" });
        expect(settings.connectionString(undefined, "x")).toBe("UseDevelopmentStorage=true");
        expect(settings.connectionString("Other", "x")).toBe("x");
        expect(() => settings.connectionString("Missing", "Function 'q'")).toThrow(/connection 'Missing'/);
        expect(settings.isFunctionDisabled("timer1")).toBe(true);
        expect(settings.isFunctionDisabled("timer2")).toBe(false);
    });
});

describe("storage connection strings", () => {
    it("expands UseDevelopmentStorage=true to Azurite's default ports", () => {
        const expanded = normalizeConnectionString("UseDevelopmentStorage=true");
        expect(expanded).toContain("TableEndpoint=http://127.0.0.1:10002/devstoreaccount1");
        expect(expanded).toContain("QueueEndpoint=http://127.0.0.1:10001/devstoreaccount1");
        expect(() => normalizeConnectionString("nonsense")).toThrow(/no AccountName/);
    });
});

describe("package.json main globs", () => {
    it("expands paths, *, ** and {a,b} like the worker's globby call", () => {
        const dir = appDir({ "dist/src/index.js": "", "dist/src/functions/a.js": "", "dist/src/functions/b.js": "", "dist/src/functions/b.js.map": "", "dist/src/functions/deep/c.js": "" });
        expect(expandGlob("dist/src/functions/*.js", dir)).toEqual(["dist/src/functions/a.js", "dist/src/functions/b.js"]);
        expect(expandGlob("dist/src/{index.js,functions/*.js}", dir)).toEqual(["dist/src/functions/a.js", "dist/src/functions/b.js", "dist/src/index.js"]);
        expect(expandGlob("dist/**/*.js", dir)).toHaveLength(4);
        expect(expandGlob("./dist/src/index.js", dir)).toEqual(["dist/src/index.js"]);
        expect(expandGlob("dist/missing.js", dir)).toEqual([]);
    });
});

describe("TimeSpan text", () => {
    it("parses and formats as .NET does", () => {
        expect(parseTimeSpan("00:10:00")).toBe(600_000);
        expect(parseTimeSpan("1.02:03:04.5")).toBe(93_784_500);
        expect(parseTimeSpan("7")).toBe(7 * 86_400_000);
        expect(parseTimeSpan("soon")).toBeUndefined();
        expect(formatTimeSpan(600_000)).toBe("00:10:00");
        expect(formatTimeSpan(93_784_500)).toBe("1.02:03:04.5000000");
    });

    it("reads TimeSpan.Parse's other forms and refuses what it refuses", () => {
        expect(parseTimeSpan("-00:00:01")).toBe(-1000);
        expect(parseTimeSpan("1:2")).toBe(3_720_000);
        expect(parseTimeSpan("2.00:30")).toBe(2 * 86_400_000 + 1_800_000);
        expect(parseTimeSpan("00:00:00.0000001")).toBe(0.0001);
        for (const text of ["24:00:00", "00:60:00", "00:00:60", "1.2.3:00:00", "00:00:00.12345678", "", "1:2:3:4"]) expect(parseTimeSpan(text), text).toBeUndefined();
        expect(formatTimeSpan(-1000)).toBe("-00:00:01");
        expect(formatTimeSpan(0)).toBe("00:00:00");
    });
});

describe("loading the app", () => {
    it("names the entry point that failed to load, in the Node worker's words", async () => {
        const dir = appDir({ "package.json": JSON.stringify({ main: "src/*.js" }), "src/good.js": "", "src/broken.js": "const x = ;" });
        const app = resolveAppEntryPoints(dir);
        await expect(loadAppEntryPoints(app, () => undefined)).rejects.toThrow(/^Worker was unable to load entry point "src\/broken\.js": /);
    });

    it("says that a programming model v3 app (function.json folders) is not one it runs, rather than asking for a main", () => {
        const dir = appDir({ "package.json": JSON.stringify({ name: "v3" }), "HttpStart/function.json": JSON.stringify({ bindings: [] }) });
        expect(() => resolveAppEntryPoints(dir)).toThrow(/programming model v3 app \(HttpStart\/function\.json\).*only v4 apps/);
    });
});
