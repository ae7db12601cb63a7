import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { expandGlob } from "./glob";

export interface AppPackage {
    dir: string;
    main: string;
    type?: string;
    files: string[];
}

/** Reads `<appDir>/package.json` and expands its "main" the way the Node worker does (a path or a glob). */
export function resolveAppEntryPoints(appDir: string): AppPackage {
    const packageJsonPath = path.join(appDir, "package.json");
    if (!existsSync(packageJsonPath)) {
        throw new Error(`No package.json in ${appDir}. Point --app (HostOptions.appDir) at the folder that holds the app's package.json.`);
    }
    const pkg = JSON.parse(readFileSync(packageJsonPath, "utf8")) as { main?: unknown; type?: unknown };
    if (typeof pkg.main !== "string" || pkg.main.trim() === "") {
        const legacy = readdirSync(appDir, { withFileTypes: true }).find((entry) => entry.isDirectory() && existsSync(path.join(appDir, entry.name, "function.json")));
        if (legacy) {
            throw new Error(
                `${appDir} is a programming model v3 app (${legacy.name}/function.json). This host runs only v4 apps, which register their ` +
                    `functions in code through @azure/functions v4 and name their entry point in package.json "main".`,
            );
        }
        throw new Error(`${packageJsonPath} has no "main". Set it to the compiled entry point, e.g. "dist/src/index.js" or "dist/src/functions/*.js".`);
    }
    const files = expandGlob(pkg.main, appDir);
    if (files.length === 0) {
        throw new Error(`package.json "main" (${pkg.main}) matches no file in ${appDir}. Build the app first (npm run build).`);
    }
    return { dir: appDir, main: pkg.main, type: typeof pkg.type === "string" ? pkg.type : undefined, files };
}

/**
 * Loads every entry point: CommonJS through Node's own require (so the app gets the same module
 * instances a real worker would), ES modules through import(), as the worker's loadScriptFile does.
 */
export async function loadAppEntryPoints(app: AppPackage, log: (line: string) => void): Promise<void> {
    const appRequire = createRequire(path.join(app.dir, "package.json"));
    for (const file of app.files) {
        const absolute = path.join(app.dir, file);
        const started = Date.now();
        try {
            if (isESModule(absolute, app.type)) {
                await importModule(pathToFileURL(absolute).href);
            } else {
                appRequire(absolute);
            }
        } catch (error) {
            // The Node worker's own wording, so the file that failed is named.
            throw new Error(`Worker was unable to load entry point "${file}": ${error instanceof Error ? error.message : String(error)}`, { cause: error });
        }
        const elapsed = Date.now() - started;
        log(`Loaded entry point "${file}"${elapsed > 1000 ? ` (slow: ${elapsed} ms)` : ""}`);
    }
}

function isESModule(filePath: string, packageType: string | undefined): boolean {
    if (filePath.endsWith(".mjs")) return true;
    if (filePath.endsWith(".cjs")) return false;
    return packageType === "module";
}

// Built with Function so neither tsc (CommonJS output) nor a test bundler rewrites it into require().
const importModule = new Function("specifier", "return import(specifier)") as (specifier: string) => Promise<unknown>;
