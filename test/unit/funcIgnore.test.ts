import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { coreToolsFuncIgnore, publishedFiles } from "../helpers/coreToolsFuncIgnore";

const ROOT = path.resolve(__dirname, "..", "..");
const FUNCIGNORE = readFileSync(path.join(ROOT, ".funcignore"), "utf8");

describe("the model of Core Tools' .funcignore parser", () => {
    it("matches a pattern without a slash at the root only, where git would match it at any depth", () => {
        const parser = coreToolsFuncIgnore("*.ts\n*.js.map\n");
        expect(parser.accepts("main.ts")).toBe(false);
        expect(parser.accepts("src/main.ts")).toBe(true);
        expect(parser.accepts("index.js.map")).toBe(false);
        expect(parser.accepts("dist/src/index.js.map")).toBe(true);
    });

    it("matches a folder from the root only, with or without a leading slash", () => {
        for (const pattern of ["src/", "/src/"]) {
            const parser = coreToolsFuncIgnore(pattern);
            expect(parser.accepts("src/index.ts")).toBe(false);
            expect(parser.accepts("dist/src/index.js")).toBe(true);
        }
    });

    it("matches every path a pattern is a prefix of", () => {
        const parser = coreToolsFuncIgnore("*.js\ntest\n");
        expect(parser.accepts("index.js.map")).toBe(false);
        expect(parser.accepts("testing.json")).toBe(false);
        expect(parser.accepts("tests/a.txt")).toBe(false);
    });

    it("lets ** cross folders and * stop at one", () => {
        const parser = coreToolsFuncIgnore("dist/*.map\nlib/**.map\n");
        expect(parser.accepts("dist/a.js.map")).toBe(false);
        expect(parser.accepts("dist/sub/a.js.map")).toBe(true);
        expect(parser.accepts("lib/sub/deeper/a.js.map")).toBe(false);
    });

    it("lets a ! line re-include what it matches, whatever the order of the lines", () => {
        for (const content of ["dist/\n!dist/keep/\n", "!dist/keep/\ndist/\n"]) {
            const parser = coreToolsFuncIgnore(content);
            expect(parser.accepts("dist/keep/a.js.map")).toBe(true);
            expect(parser.accepts("dist/other/a.js")).toBe(false);
        }
    });

    it("skips .git and .vscode folders and the local settings at any depth, whatever .funcignore says", () => {
        expect(publishedFiles([".git/HEAD", "a/.vscode/settings.json", "local.settings.json", "sub/.gitignore", "host.json"], "")).toEqual(["host.json"]);
    });
});

/** The repository's files as a developer's checkout holds them, without node_modules and dist. */
function workingTree(relative = ""): string[] {
    return readdirSync(path.join(ROOT, relative), { withFileTypes: true }).flatMap((entry) => {
        const child = relative ? `${relative}/${entry.name}` : entry.name;
        // A worktree's .git is a file, which Core Tools would not skip; a clone's is a folder, which it does.
        if (["node_modules", "dist"].includes(child) || (child === ".git" && entry.isDirectory())) return [];
        return entry.isDirectory() ? workingTree(child) : entry.isFile() ? [child] : [];
    });
}

/** What `tsc` writes for every TypeScript source (tsconfig.json builds test/ too): a .js and its map. */
function compiled(sources: string[]): string[] {
    return sources
        .filter((file) => /^(src|tools|test)\/.*\.ts$/.test(file) && !file.endsWith(".d.ts"))
        .flatMap((file) => [`dist/${file.replace(/\.ts$/, ".js")}`, `dist/${file.replace(/\.ts$/, ".js.map")}`]);
}

/** Files that exist only on someone's machine or in CI, never in git: none may be published. */
const LOCAL_ONLY = [
    "local.settings.json",
    ".azure/dev/.env",
    ".azure/config.json",
    ".env",
    ".env.local",
    ".vscode/launch.json",
    "coverage/index.html",
    // regression CI stop 29: a failed e2e test's kept host log was published with the package
    "test-results/e2e/a-failed-test-1796321965885.log",
    "__azurite_db_table__.json",
    "__blobstorage__/0a1b",
    ".azurite/queue.json",
    "npm-debug.log",
    "dist/src/tsconfig.build.tsbuildinfo",
];

/** Paths in a production node_modules, including the names a careless pattern would catch. */
const NODE_MODULES = [
    "node_modules/zod/package.json",
    "node_modules/.bin/uuid",
    "node_modules/@azure/functions/dist/azure-functions.js",
    "node_modules/source-map-support/source-map-support.js",
    "node_modules/tslib/tslib.es6.js.map",
    "node_modules/smartsheet/README.md",
    "node_modules/test/index.js",
    "node_modules/durable-functions/lib/src/index.d.ts",
];

/**
 * The files of `paths` that git's rules leave (for tools that read .funcignore as a .gitignore):
 * `git check-ignore` in a scratch repository holding the files, empty, with .funcignore as its
 * exclude file.
 */
function gitPublished(paths: readonly string[], funcignore: string): string[] {
    const dir = mkdtempSync(path.join(tmpdir(), "sheetwright-funcignore-"));
    try {
        spawnSync("git", ["init", "-q"], { cwd: dir });
        for (const file of paths) {
            mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
            writeFileSync(path.join(dir, file), "");
        }
        writeFileSync(path.join(dir, ".git", "info", "exclude"), funcignore);
        const result = spawnSync("git", ["check-ignore", "--no-index", "--stdin"], { cwd: dir, input: paths.join("\n"), encoding: "utf8" });
        if (result.status !== 0 && result.status !== 1) throw new Error(`git check-ignore failed: ${result.stderr}`);
        const ignored = new Set(result.stdout.split("\n"));
        return paths.filter((file) => !ignored.has(file));
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
}

describe("the package .funcignore leaves, read as Core Tools reads it", () => {
    const sources = workingTree();
    const jobsCli = ["dist/tools/jobs-cli/main.js", "dist/tools/jobs-cli/main.js.map", "dist/tools/jobs-cli/format.js"];
    const tree = [...new Set([...sources, ...compiled(sources), ...jobsCli, ...LOCAL_ONLY, ...NODE_MODULES])];
    const published = publishedFiles(tree, FUNCIGNORE);

    it("is host.json, package.json, package-lock.json, the app's JavaScript, the jobs CLI and node_modules, and nothing else", () => {
        const appJs = compiled(sources).filter((file) => file.startsWith("dist/src/") && file.endsWith(".js"));
        const jobsCliFiles = [...new Set([...jobsCli, ...compiled(sources).filter((file) => file.startsWith("dist/tools/jobs-cli/"))])];
        expect(appJs).toContain("dist/src/index.js");
        expect([...published].sort()).toEqual(["host.json", "package.json", "package-lock.json", ...appJs, ...jobsCliFiles, ...NODE_MODULES].sort());
    });

    it("is the same read with git's rules", () => {
        // A worktree's .git file would clash with the scratch repository's.
        const gitTree = tree.filter((file) => file !== ".git");
        expect(gitPublished(gitTree, FUNCIGNORE).sort()).toEqual(published.filter((file) => gitTree.includes(file)).sort());
    });

    it("holds no TypeScript source, no source map outside the jobs CLI, no settings file and no test", () => {
        expect(published.filter((file) => !file.startsWith("node_modules/") && !file.startsWith("dist/tools/jobs-cli/") && /\.(ts|map)$/.test(file))).toEqual([]);
        expect(published.filter((file) => /settings|\.env|^\.azure\/|^test\/|^dist\/test\//.test(file))).toEqual([]);
    });
});
