import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

/**
 * The host's `functionTimeout`, in ms: `AzureFunctionsJobHost__functionTimeout` over host.json,
 * as the Functions host reads it. `undefined` when none is set or it is unlimited (-1).
 */
export function functionTimeoutMs(env: NodeJS.ProcessEnv = process.env, hostJsonPath = findHostJson()): number | undefined {
    const override = env.AzureFunctionsJobHost__functionTimeout ?? env["AzureFunctionsJobHost:functionTimeout"];
    let value = override;
    if (value === undefined && hostJsonPath) {
        const hostJson = JSON.parse(readFileSync(hostJsonPath, "utf8")) as { functionTimeout?: string };
        value = hostJson.functionTimeout;
    }
    if (value === undefined || value.trim() === "-1") return undefined;
    return parseTimeSpan(value);
}

/** .NET TimeSpan text (`[d.]hh:mm:ss[.fff]`) in ms. */
export function parseTimeSpan(text: string): number {
    const match = /^\s*(?:(\d+)\.)?(\d{1,2}):(\d{2}):(\d{2})(?:\.(\d{1,7}))?\s*$/.exec(text);
    if (!match) throw new Error(`"${text}" is not a TimeSpan such as 00:10:00.`);
    const [, days, hours, minutes, seconds, fraction] = match;
    return (
        (((Number(days ?? 0) * 24 + Number(hours)) * 60 + Number(minutes)) * 60 + Number(seconds)) * 1000 +
        Math.round(Number(`0.${fraction ?? "0"}`) * 1000)
    );
}

/** host.json of the deployed app: next to package.json, above this compiled file. */
function findHostJson(): string | undefined {
    for (let dir = __dirname; ; dir = path.dirname(dir)) {
        const candidate = path.join(dir, "host.json");
        if (existsSync(candidate) && existsSync(path.join(dir, "package.json"))) return candidate;
        if (path.dirname(dir) === dir) return undefined;
    }
}
