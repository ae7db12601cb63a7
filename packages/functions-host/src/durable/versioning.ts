import type { HostConfig } from "../config/hostConfig";

export type VersionMatchStrategy = "None" | "Strict" | "CurrentOrOlder";
export type VersionFailureStrategy = "Reject" | "Fail";

/** host.json `extensions.durableTask.{defaultVersion, versionMatchStrategy, versionFailureStrategy}`. */
export interface VersioningOptions {
    /** The version new orchestrations (and sub-orchestrations) get when none is given; "" when unset. */
    defaultVersion: string;
    matchStrategy: VersionMatchStrategy;
    failureStrategy: VersionFailureStrategy;
}

/** What DTFx records when `versionFailureStrategy` is Fail (TaskOrchestrationDispatcher). */
export const VERSION_MISMATCH_ERROR_TYPE = "VersionMismatch";
export const VERSION_MISMATCH_MESSAGE = "Orchestration version did not comply with Worker Versioning";

const MATCH: readonly VersionMatchStrategy[] = ["None", "Strict", "CurrentOrOlder"];
const FAILURE: readonly VersionFailureStrategy[] = ["Reject", "Fail"];

/** The documented defaults: no default version, CurrentOrOlder, Reject. */
export function readVersioning(config: HostConfig): VersioningOptions {
    return {
        defaultVersion: config.string("extensions.durableTask.defaultVersion") ?? "",
        matchStrategy: oneOf(config.string("extensions.durableTask.versionMatchStrategy"), MATCH, "CurrentOrOlder", "versionMatchStrategy"),
        failureStrategy: oneOf(config.string("extensions.durableTask.versionFailureStrategy"), FAILURE, "Reject", "versionFailureStrategy"),
    };
}

function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], fallback: T, key: string): T {
    if (value === undefined || value === "") return fallback;
    const found = allowed.find((a) => a.toLowerCase() === value.toLowerCase());
    if (!found) throw new Error(`host.json 'extensions.durableTask.${key}' must be one of ${allowed.join(", ")}, got ${JSON.stringify(value)}.`);
    return found;
}

/**
 * DTFx VersioningSettings.CompareVersions: empty versions are equal and older than any defined
 * one; two System.Version-like strings compare numerically; anything else case-insensitively.
 */
export function compareVersions(source: string | undefined, other: string | undefined): number {
    const a = (source ?? "").trim() === "" ? "" : (source as string);
    const b = (other ?? "").trim() === "" ? "" : (other as string);
    if (a === "" && b === "") return 0;
    if (a === "") return -1;
    if (b === "") return 1;
    const pa = parseDotNetVersion(a);
    const pb = parseDotNetVersion(b);
    if (pa && pb) {
        for (let i = 0; i < 4; i++) {
            const x = pa[i] ?? -1;
            const y = pb[i] ?? -1;
            if (x !== y) return x < y ? -1 : 1;
        }
        return 0;
    }
    const la = a.toLowerCase();
    const lb = b.toLowerCase();
    return la === lb ? 0 : la < lb ? -1 : 1;
}

/** System.Version.TryParse: 2 to 4 non-negative integer components ("1" alone is not a Version). */
function parseDotNetVersion(text: string): number[] | undefined {
    const parts = text.trim().split(".");
    if (parts.length < 2 || parts.length > 4) return undefined;
    const numbers = parts.map((p) => (/^\s*\d+\s*$/.test(p) ? Number(p) : Number.NaN));
    return numbers.every((n) => Number.isInteger(n) && n <= 2147483647) ? numbers : undefined;
}

/** Whether this worker may run an orchestration of `version` (TaskOrchestrationDispatcher's check). */
export function versionAllowed(options: VersioningOptions, version: string | undefined): boolean {
    switch (options.matchStrategy) {
        case "Strict":
            return (version ?? "") === options.defaultVersion;
        case "CurrentOrOlder":
            return compareVersions(version, options.defaultVersion) <= 0;
        default:
            return true;
    }
}
