import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = resolve(__dirname, "../../src");

/**
 * The layers of the app, bottom first: a module imports only from its own layer or below, and
 * no import cycle exists anywhere. A path names a folder of `src` or one file.
 */
const LAYERS: string[][] = [
    ["shared/text", "shared/http", "shared/logger.ts", "shared/schedule", "shared/telemetry", "shared/failures.ts"],
    ["shared/naming", "shared/config.ts", "shared/storage.ts", "shared/hostTimeout.ts", "shared/smartsheet"],
    ["shared/alerts"],
    ["shared/jobs"],
    ["shared/sites"],
    ["shared/orchestration", "shared/intakeRow"],
    // A template version's shape is recorded with its blueprint, built by the analysis.
    ["shared/provisioning", "shared/convergence/TemplateShape.ts"],
    ["shared/convergence"],
    ["shared/intake"],
    ["shared/recovery"],
    ["shared/webhooks"],
    ["shared/composition.ts"],
    ["orchestrators", "functions", "index.ts"],
];

function sourceFiles(dir: string): string[] {
    return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
    );
}

/** Every relative import of a file (type-only ones too: they tie the layers as much), resolved to a file. */
function importsOf(file: string): string[] {
    const text = readFileSync(file, "utf8");
    return [...text.matchAll(/\bfrom\s+"(\.[^"]+)"/g)].map((match) => resolve(dirname(file), `${match[1]}.ts`));
}

function layerOf(file: string): number {
    const path = relative(SRC, file).split("\\").join("/");
    const layer = LAYERS.findIndex((paths) => paths.some((entry) => path === entry || path.startsWith(`${entry}/`)));
    if (layer < 0) throw new Error(`${path} belongs to no layer: add it to LAYERS in ${relative(process.cwd(), __filename)}`);
    return layer;
}

const files = sourceFiles(SRC);
const graph = new Map(files.map((file) => [file, importsOf(file)]));

describe("the app's layers", () => {
    it("every import points at an existing module", () => {
        const missing = [...graph].flatMap(([file, imports]) => imports.filter((target) => !graph.has(target)).map((target) => `${relative(SRC, file)} → ${relative(SRC, target)}`));
        expect(missing).toEqual([]);
    });

    it("no import runs up the layers", () => {
        const upward = [...graph].flatMap(([file, imports]) =>
            imports.filter((target) => graph.has(target) && layerOf(target) > layerOf(file)).map((target) => `${relative(SRC, file)} → ${relative(SRC, target)}`),
        );
        expect(upward).toEqual([]);
    });

    it("there is no import cycle", () => {
        const cycles: string[] = [];
        const state = new Map<string, "visiting" | "done">();
        const path: string[] = [];
        const visit = (file: string) => {
            if (state.get(file) === "done") return;
            if (state.get(file) === "visiting") {
                cycles.push([...path.slice(path.indexOf(file)), file].map((step) => relative(SRC, step)).join(" → "));
                return;
            }
            state.set(file, "visiting");
            path.push(file);
            for (const target of graph.get(file) ?? []) if (graph.has(target)) visit(target);
            path.pop();
            state.set(file, "done");
        };
        for (const file of files) visit(file);
        expect(cycles).toEqual([]);
    });
});

const ROOT = resolve(__dirname, "../..");
const HOST_PACKAGE = join(ROOT, "packages/functions-host");

/** Every file of `dir` (but node_modules and dist) whose name ends with one of `endings`. */
function filesIn(dir: string, endings: readonly string[]): string[] {
    return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory()
            ? ["node_modules", "dist"].includes(entry.name)
                ? []
                : filesIn(join(dir, entry.name), endings)
            : endings.some((ending) => entry.name.endsWith(ending))
              ? [join(dir, entry.name)]
              : [],
    );
}

describe("the local Functions host package (packages/functions-host) and the app", () => {
    it("the package reaches nothing outside its folder: no relative import or require leaves it", () => {
        const escaping = filesIn(HOST_PACKAGE, [".ts", ".js", ".mts"]).flatMap((file) =>
            [...readFileSync(file, "utf8").matchAll(/(?:\bfrom\s+|\brequire\(\s*|\bimport\(\s*)["'](\.[^"']+)["']/g)]
                .map((match) => resolve(dirname(file), match[1]!))
                .filter((target) => relative(HOST_PACKAGE, target).startsWith(".."))
                .map((target) => `${relative(ROOT, file)} → ${relative(ROOT, target)}`),
        );
        expect(escaping).toEqual([]);
    });

    it("the app's own code (src/) does not import the local host: it runs on Azure Functions", () => {
        const importing = files.filter((file) => /["']@sheetwright\/functions-host["']/.test(readFileSync(file, "utf8"))).map((file) => relative(SRC, file));
        expect(importing).toEqual([]);
    });
});
