import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { build, type Message } from "esbuild";

/** The checkout: the first folder above this file with host.json (from tools/package or dist/tools/package alike). */
export const APP_ROOT = (() => {
    for (let dir = __dirname; ; dir = path.dirname(dir)) {
        if (existsSync(path.join(dir, "host.json")) && existsSync(path.join(dir, "package.json"))) return dir;
        if (path.dirname(dir) === dir) throw new Error(`No checkout (host.json and package.json) above ${__dirname}.`);
    }
})();
const ROOT = APP_ROOT;

/** What the deploy package holds: nothing else goes to Azure. */
export const PACKAGE_FILES = ["host.json", "index.js", "package.json", "sheetwright-jobs.js"] as const;

export type DurableBackend = "azureStorage" | "durableTaskScheduler";

export interface DeployPackageOptions {
    /** The folder to write (emptied first). Default: dist/package. */
    outDir?: string;
    /** host.json's Durable Functions backend; default $DURABLE_BACKEND, else azureStorage. */
    backend?: DurableBackend;
}

export interface DeployPackage {
    outDir: string;
    files: Array<{ name: string; bytes: number }>;
    warnings: string[];
}

/**
 * The folder `func azure functionapp publish` (run inside it), `azd deploy` and the deploy workflow
 * send to Azure: the app bundled by esbuild into one file with its production dependencies (Flex
 * Consumption downloads and unpacks the package at every cold start: 4 files instead of 14,000),
 * the jobs CLI bundled the same way, host.json for the chosen backend, and a package.json without
 * dependencies, so no build or install runs on Azure. Reads the compiled app (`npm run build`
 * first): the bundle is made of the very files the tests ran.
 */
export async function buildDeployPackage(options: DeployPackageOptions = {}): Promise<DeployPackage> {
    const outDir = path.resolve(options.outDir ?? path.join(ROOT, "dist", "package"));
    const entry = path.join(ROOT, "dist", "src", "index.js");
    const jobsCli = path.join(ROOT, "dist", "tools", "jobs-cli", "main.js");
    for (const compiled of [entry, jobsCli]) {
        if (!existsSync(compiled)) throw new Error(`${path.relative(ROOT, compiled)} is missing: run npm run build first (the package bundles the compiled app).`);
    }
    rmSync(outDir, { recursive: true, force: true });
    mkdirSync(outDir, { recursive: true });

    const warnings: string[] = [];
    const bundle = async (entryPoint: string, outfile: string) => {
        const result = await build({
            entryPoints: [entryPoint],
            outfile: path.join(outDir, outfile),
            bundle: true,
            platform: "node",
            target: "node20",
            format: "cjs",
            // The worker gives the app this module at run time; it is in no package.
            external: ["@azure/functions-core"],
            legalComments: "eof",
            logLevel: "silent",
        });
        warnings.push(...result.warnings.map((warning: Message) => `${outfile}: ${warning.text}${warning.location ? ` (${warning.location.file}:${warning.location.line})` : ""}`));
    };
    await bundle(entry, "index.js");
    await bundle(jobsCli, "sheetwright-jobs.js");

    copyFileSync(path.join(ROOT, "host.json"), path.join(outDir, "host.json"));
    const backend = options.backend ?? process.env.DURABLE_BACKEND ?? "azureStorage";
    execFileSync(process.execPath, [path.join(ROOT, "infra", "scripts", "hostForBackend.mjs"), backend, "--host", path.join(outDir, "host.json")], { stdio: "pipe" });

    const app = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { name: string; version: string; description: string; engines: unknown };
    const manifest = {
        name: app.name,
        version: app.version,
        private: true,
        description: `${app.description} Bundled by npm run package: no dependencies to install.`,
        main: "index.js",
        bin: { "sheetwright-jobs": "sheetwright-jobs.js" },
        engines: app.engines,
    };
    writeFileSync(path.join(outDir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);

    const files = readdirSync(outDir)
        .sort()
        .map((name) => ({ name, bytes: statSync(path.join(outDir, name)).size }));
    return { outDir, files, warnings };
}
