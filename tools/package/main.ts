import { parseArgs } from "node:util";
import { buildDeployPackage, type DurableBackend } from "./deployPackage";

const USAGE = `Usage: npm run package [-- --out <dir>] [--backend azureStorage|durableTaskScheduler]

Builds the deploy package (default dist/package): the app and the jobs CLI bundled by esbuild,
host.json for the Durable Functions backend ($DURABLE_BACKEND, else azureStorage) and a
package.json without dependencies. Publish it from inside the folder:
  cd dist/package && func azure functionapp publish <app name>`;

async function main(): Promise<void> {
    const { values } = parseArgs({
        options: { out: { type: "string" }, backend: { type: "string" }, help: { type: "boolean", short: "h" } },
    });
    if (values.help) {
        process.stdout.write(`${USAGE}\n`);
        return;
    }
    if (values.backend !== undefined && values.backend !== "azureStorage" && values.backend !== "durableTaskScheduler") {
        throw new Error(`Unknown backend "${values.backend}".\n\n${USAGE}`);
    }
    const built = await buildDeployPackage({
        ...(values.out ? { outDir: values.out } : {}),
        ...(values.backend ? { backend: values.backend as DurableBackend } : {}),
    });
    for (const warning of built.warnings) process.stderr.write(`esbuild warning: ${warning}\n`);
    const total = built.files.reduce((sum, file) => sum + file.bytes, 0);
    process.stdout.write(`${built.outDir}: ${built.files.map((file) => `${file.name} (${(file.bytes / 1024).toFixed(0)} KB)`).join(", ")}; ${(total / 1024 / 1024).toFixed(1)} MB\n`);
}

main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
});
