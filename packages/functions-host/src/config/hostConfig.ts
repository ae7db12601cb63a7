import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseTimeSpan } from "../schedule/timeSpan";
import type { AppSettings } from "./appSettings";

const OVERRIDE_PREFIX = /^AzureFunctionsJobHost(__|:)/i;

/**
 * host.json with the `AzureFunctionsJobHost__a__b` (or `AzureFunctionsJobHost:a:b`) settings
 * applied over it, as the real host's configuration does. Lookups are case-insensitive.
 */
export class HostConfig {
    readonly #root: Record<string, unknown>;

    private constructor(root: Record<string, unknown>) {
        this.#root = root;
    }

    static load(appDir: string, settings: AppSettings, override?: object): HostConfig {
        let root: Record<string, unknown> = {};
        if (override) {
            root = structuredClone(override) as Record<string, unknown>;
        } else {
            const file = path.join(appDir, "host.json");
            if (existsSync(file)) {
                try {
                    root = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
                } catch (error) {
                    throw new Error(`${file} is not valid JSON: ${(error as Error).message}`);
                }
            }
        }
        for (const [key, value] of Object.entries(settings.all)) {
            if (!OVERRIDE_PREFIX.test(key)) continue;
            const segments = key.replace(OVERRIDE_PREFIX, "").split(/__|:/).filter((s) => s.length > 0);
            if (segments.length > 0) setPath(root, segments, value);
        }
        return new HostConfig(root);
    }

    get(dottedPath: string): unknown {
        let node: unknown = this.#root;
        for (const segment of dottedPath.split(".")) {
            if (!node || typeof node !== "object") return undefined;
            const key = findKey(node as Record<string, unknown>, segment);
            if (key === undefined) return undefined;
            node = (node as Record<string, unknown>)[key];
        }
        return node;
    }

    string(dottedPath: string): string | undefined {
        const value = this.get(dottedPath);
        return value === undefined || value === null ? undefined : String(value);
    }

    number(dottedPath: string, fallback: number): number {
        const value = this.get(dottedPath);
        if (value === undefined || value === null || value === "") return fallback;
        const parsed = Number(value);
        if (!Number.isFinite(parsed)) throw new Error(`host.json '${dottedPath}' must be a number, got ${JSON.stringify(value)}.`);
        return parsed;
    }

    boolean(dottedPath: string, fallback: boolean): boolean {
        const value = this.get(dottedPath);
        if (value === undefined || value === null || value === "") return fallback;
        if (typeof value === "boolean") return value;
        return String(value).toLowerCase() === "true";
    }

    /** A TimeSpan setting ("00:05:00") in milliseconds; -1 stays -1 (meaning "no limit" for functionTimeout). */
    timeSpan(dottedPath: string, fallbackMs: number): number {
        const value = this.get(dottedPath);
        if (value === undefined || value === null || value === "") return fallbackMs;
        if (String(value).trim() === "-1") return -1;
        const ms = parseTimeSpan(String(value));
        if (ms === undefined) throw new Error(`host.json '${dottedPath}' must be a TimeSpan like "00:05:00", got ${JSON.stringify(value)}.`);
        return ms;
    }
}

function findKey(node: Record<string, unknown>, segment: string): string | undefined {
    if (segment in node) return segment;
    const lower = segment.toLowerCase();
    return Object.keys(node).find((k) => k.toLowerCase() === lower);
}

function setPath(root: Record<string, unknown>, segments: string[], value: string): void {
    let node = root;
    segments.forEach((segment, index) => {
        const key = findKey(node, segment) ?? segment;
        if (index === segments.length - 1) {
            node[key] = value;
            return;
        }
        const child = node[key];
        if (!child || typeof child !== "object") node[key] = {};
        node = node[key] as Record<string, unknown>;
    });
}
