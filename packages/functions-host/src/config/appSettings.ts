import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

/**
 * The app settings the way `func start` builds them: the process environment, then the
 * "Values" of `<appDir>/local.settings.json` for names the environment does not already
 * define (func prints "Skipping ... already defined"), then explicit overrides on top.
 */
export function mergeAppSettings(
    appDir: string,
    env: NodeJS.ProcessEnv,
    overrides: Record<string, string> = {},
    warn: (line: string) => void = () => {},
): Record<string, string> {
    const merged: Record<string, string> = {};
    for (const [key, value] of Object.entries(env)) {
        if (value !== undefined) merged[key] = value;
    }
    const localSettingsPath = path.join(appDir, "local.settings.json");
    if (existsSync(localSettingsPath)) {
        let parsed: unknown;
        try {
            parsed = JSON.parse(readFileSync(localSettingsPath, "utf8"));
        } catch (error) {
            throw new Error(`${localSettingsPath} is not valid JSON: ${(error as Error).message}. Fix the file or delete it.`);
        }
        const values = (parsed as { Values?: unknown } | null)?.Values;
        if (values && typeof values === "object") {
            for (const [key, value] of Object.entries(values as Record<string, unknown>)) {
                if (value === null || value === undefined) continue;
                if (key in merged && !(key in overrides)) {
                    warn(`Skipping '${key}' from local.settings.json as it's already defined in the environment.`);
                    continue;
                }
                merged[key] = String(value);
            }
        }
    }
    Object.assign(merged, overrides);
    return merged;
}

/** Read-only view of the app settings with the host's lookup rules (case-insensitive names). */
export class AppSettings {
    readonly #values: Record<string, string>;
    readonly #lowerCase = new Map<string, string>();

    constructor(values: Record<string, string>) {
        this.#values = { ...values };
        for (const [key, value] of Object.entries(this.#values)) this.#lowerCase.set(key.toLowerCase(), value);
    }

    get all(): Readonly<Record<string, string>> {
        return this.#values;
    }

    get(name: string): string | undefined {
        return this.#values[name] ?? this.#lowerCase.get(name.toLowerCase());
    }

    /**
     * Resolves `%NAME%` binding expressions from the settings, as the host does for binding
     * properties (queue names, schedules, hub names). `%%` is not special.
     */
    resolve(text: string, what: string): string {
        return text.replace(/%([^%]+)%/g, (_token, name: string) => {
            const value = this.get(name);
            if (value === undefined) {
                throw new Error(`${what} uses '%${name}%', but there is no app setting named '${name}'. Add it to the settings (environment, local.settings.json "Values", or HostOptions.settings).`);
            }
            return value;
        });
    }

    /**
     * The connection string behind a binding's `connection` name, looked up as the host does:
     * `<name>`, then `AzureWebJobs<name>`; `AzureWebJobsStorage` when no name is given.
     */
    connectionString(connection: string | undefined, what: string): string {
        const name = connection && connection.length > 0 ? connection : "AzureWebJobsStorage";
        const value = this.get(name) ?? this.get(`AzureWebJobs${name}`);
        if (value === undefined || value.trim() === "") {
            throw new Error(`${what} needs the storage connection '${name}', but the setting '${name}' is missing or empty. Set it to an Azurite connection string or "UseDevelopmentStorage=true".`);
        }
        return value;
    }

    /** The host's switch `AzureWebJobs.<FunctionName>.Disabled` (also `AzureWebJobs__<name>__Disabled`, for Linux shells). */
    isFunctionDisabled(functionName: string): boolean {
        const value = this.get(`AzureWebJobs.${functionName}.Disabled`) ?? this.get(`AzureWebJobs__${functionName}__Disabled`);
        return value !== undefined && ["true", "1"].includes(value.trim().toLowerCase());
    }
}
