import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { APP_ROOT, buildDeployPackage } from "../../package/deployPackage";
import type { Measured } from "../figures";

const ROOT = APP_ROOT;
const LOADS = 9;

/** Settings that pass the app's start-up check without reaching anything. */
const APP_SETTINGS: Record<string, string> = {
    FUNCTIONS_WORKER_RUNTIME: "node",
    AzureWebJobsStorage: "UseDevelopmentStorage=true",
    SMARTSHEET_ACCESS_TOKEN: "bench-token",
    SMARTSHEET_BASE_URL: "http://127.0.0.1:9/2.0/",
    INTAKE_SHEET_ID: "4583173393803140",
    TEMPLATE_FOLDER_ID: "1234567890123456",
    PRODUCTS_FOLDER_ID: "2234567890123456",
    FILING_INDEX_SHEET_ID: "3234567890123456",
    TASK_HUB_NAME: "benchpackage",
    JOBS_TABLE: "benchpackage",
    PROVISION_QUEUE: "bench-package",
};
/** As on Azure, where Application Insights is always on: the exporter loads at start (it sends nothing here). */
const TELEMETRY_ON = { APPLICATIONINSIGHTS_CONNECTION_STRING: "InstrumentationKey=00000000-0000-0000-0000-000000000000;IngestionEndpoint=http://127.0.0.1:9/" };

const LOAD_PROBE = `const started = process.hrtime.bigint(); const cpu = process.cpuUsage();
require(process.argv[1]);
const used = process.cpuUsage(cpu);
process.stdout.write("\\n" + JSON.stringify({ wallMs: Number(process.hrtime.bigint() - started) / 1e6, cpuMs: (used.user + used.system) / 1000 }));
// The exporter's timers would keep the process up for a minute.
process.exit(0);`;

/**
 * The deploy package, bundled (npm run package) against what Core Tools would publish unbundled
 * (dist/src and the production dependencies' folders): files, bytes, and the time a fresh Node
 * process takes to load the app, with telemetry on as on Azure and off, median of nine loads
 * each, bundled and unbundled taking turns so that the machine's load falls on both alike.
 */
export async function deployPackage(): Promise<Measured> {
    const outDir = mkdtempSync(path.join(tmpdir(), "sheetwright-bench-package-"));
    try {
        const bundled = await buildDeployPackage({ outDir });
        const bundledBytes = bundled.files.reduce((sum, file) => sum + file.bytes, 0);
        const unbundled = unbundledPackage();
        const entries = { bundled: path.join(outDir, "index.js"), unbundled: path.join(ROOT, "dist", "src", "index.js") };
        const loads: Record<"bundled" | "unbundled", Record<"telemetryOn" | "telemetryOff", Array<{ wallMs: number; cpuMs: number }>>> = {
            bundled: { telemetryOn: [], telemetryOff: [] },
            unbundled: { telemetryOn: [], telemetryOff: [] },
        };
        for (let round = 0; round < LOADS; round++) {
            for (const telemetry of ["telemetryOn", "telemetryOff"] as const) {
                for (const variant of ["unbundled", "bundled"] as const) {
                    loads[variant][telemetry].push(await loadOnce(entries[variant], telemetry === "telemetryOn" ? TELEMETRY_ON : {}));
                }
            }
        }
        const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
        const cpu = (variant: "bundled" | "unbundled", telemetry: "telemetryOn" | "telemetryOff") => median(loads[variant][telemetry].map((load) => load.cpuMs));
        const wall = (variant: "bundled" | "unbundled", telemetry: "telemetryOn" | "telemetryOff") => median(loads[variant][telemetry].map((load) => load.wallMs));
        return {
            figures: {
                packageFiles: bundled.files.length,
                packageMb: bundledBytes / 1024 / 1024,
                bundleLoadSpeedup: cpu("unbundled", "telemetryOn") / cpu("bundled", "telemetryOn"),
            },
            details: {
                unbundledPackageFiles: unbundled.files,
                unbundledPackageMb: unbundled.bytes / 1024 / 1024,
                appLoadCpuMs: { bundled: { telemetryOn: cpu("bundled", "telemetryOn"), telemetryOff: cpu("bundled", "telemetryOff") }, unbundled: { telemetryOn: cpu("unbundled", "telemetryOn"), telemetryOff: cpu("unbundled", "telemetryOff") } },
                appLoadWallMs: { bundled: { telemetryOn: wall("bundled", "telemetryOn"), telemetryOff: wall("bundled", "telemetryOff") }, unbundled: { telemetryOn: wall("unbundled", "telemetryOn"), telemetryOff: wall("unbundled", "telemetryOff") } },
                bundleWarnings: bundled.warnings,
            },
            notes: [
                `deploy package: ${bundled.files.length} files, ${(bundledBytes / 1024 / 1024).toFixed(1)} MB bundled; unbundled ${unbundled.files} files, ${(unbundled.bytes / 1024 / 1024).toFixed(1)} MB (dist/src and the production dependencies)`,
                `app load, median of ${LOADS} fresh processes, CPU (wall) ms: telemetry on ${cpu("bundled", "telemetryOn").toFixed(0)} (${wall("bundled", "telemetryOn").toFixed(0)}) bundled, ` +
                    `${cpu("unbundled", "telemetryOn").toFixed(0)} (${wall("unbundled", "telemetryOn").toFixed(0)}) unbundled; telemetry off ${cpu("bundled", "telemetryOff").toFixed(0)} (${wall("bundled", "telemetryOff").toFixed(0)}) bundled, ` +
                    `${cpu("unbundled", "telemetryOff").toFixed(0)} (${wall("unbundled", "telemetryOff").toFixed(0)}) unbundled`,
            ],
        };
    } finally {
        rmSync(outDir, { recursive: true, force: true });
    }
}

async function loadOnce(entry: string, settings: Record<string, string>): Promise<{ wallMs: number; cpuMs: number }> {
    const { stdout } = await promisify(execFile)(process.execPath, ["-e", LOAD_PROBE, entry], { env: { ...process.env, ...APP_SETTINGS, ...settings } });
    // The SDKs may print warnings first; the probe's answer is the last line.
    return JSON.parse(stdout.trim().split("\n").at(-1)!) as { wallMs: number; cpuMs: number };
}

/** The files `func azure functionapp publish` sends without the bundle: the compiled app and every production dependency's folder. */
function unbundledPackage(): { files: number; bytes: number } {
    const parseable = execFileSync("npm", ["ls", "--omit=dev", "--all", "--parseable"], { cwd: ROOT, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
    const folders = new Set(parseable.split("\n").filter((line) => line && line !== ROOT));
    let files = 0;
    let bytes = 0;
    const walk = (dir: string, keep: (file: string) => boolean = () => true) => {
        for (const entry of readdirSync(dir, { withFileTypes: true })) {
            const child = path.join(dir, entry.name);
            // A package's own node_modules holds packages npm ls lists on their own line.
            if (entry.isDirectory() && entry.name !== "node_modules") walk(child, keep);
            else if (entry.isFile() && keep(child)) {
                files++;
                bytes += statSync(child).size;
            }
        }
    };
    // .funcignore leaves the maps and declarations out.
    walk(path.join(ROOT, "dist", "src"), (file) => file.endsWith(".js"));
    for (const folder of folders) walk(folder);
    return { files, bytes };
}
