import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { DimensionNames, TelemetryEvents, TelemetryMetrics } from "../../src/shared/telemetry/Telemetry";

const ROOT = resolve(__dirname, "../..");
const DOC = readFileSync(join(ROOT, "docs/telemetry.md"), "utf8");
const KQL = [...DOC.matchAll(/```kusto\n([\s\S]*?)```/g)].map((match) => match[1]!);

function sourceFiles(dir: string): string[] {
    return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
    );
}

/** The app's code, without the file that declares the names (a name there is not yet recorded anywhere). */
const CODE = sourceFiles(join(ROOT, "src"))
    .filter((file) => relative(ROOT, file) !== join("src", "shared", "telemetry", "Telemetry.ts"))
    .map((file) => readFileSync(file, "utf8"))
    .join("\n");

const NAMES: readonly string[] = [...TelemetryEvents, ...TelemetryMetrics];

describe("docs/telemetry.md and the code cannot drift", () => {
    it("has KQL for the questions ops asks", () => {
        expect(KQL.length).toBeGreaterThanOrEqual(12);
    });

    it("every event and metric name the KQL uses is one the code declares", () => {
        const used = KQL.flatMap((query) => [...query.matchAll(/"((?:job|site|sweep|reaper|alert)\.[A-Za-z]+|sheetwright\.[a-z_.]+)"/g)].map((match) => match[1]!));
        expect(used.length).toBeGreaterThan(0);
        expect(used.filter((name) => !NAMES.includes(name))).toEqual([]);
    });

    it("every customDimensions the KQL reads is a dimension the code declares", () => {
        const dimensions = KQL.flatMap((query) => [...query.matchAll(/customDimensions\.(\w+)/g)].map((match) => match[1]!));
        const known: readonly string[] = ["event", ...DimensionNames];
        expect(dimensions.filter((name) => !known.includes(name))).toEqual([]);
    });

    it("every log text the KQL searches for is written by the code", () => {
        const phrases = KQL.flatMap((query) => [...query.matchAll(/\bhas "([^"]+)"/g)].map((match) => match[1]!));
        expect(phrases.length).toBeGreaterThan(0);
        expect(phrases.filter((phrase) => !CODE.includes(phrase))).toEqual([]);
    });

    it("lists every event and metric the code declares in its tables", () => {
        expect(NAMES.filter((name) => !DOC.includes(`| \`${name}\` |`))).toEqual([]);
    });

    it("every declared event and metric is recorded somewhere in the app", () => {
        expect(NAMES.filter((name) => !CODE.includes(`"${name}"`))).toEqual([]);
    });
});
