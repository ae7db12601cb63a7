import { z } from "zod";

const smartsheetId = (what: string) =>
    z.coerce
        .number({ error: `expected the numeric Smartsheet id of ${what}` })
        .int(`expected the numeric Smartsheet id of ${what}`)
        .positive(`expected the numeric Smartsheet id of ${what}`)
        .refine(Number.isSafeInteger, `expected the numeric Smartsheet id of ${what}`);

const wholeNumber = (min: number, max: number) =>
    z.coerce
        .number({ error: `expected a whole number from ${min} to ${max}` })
        .int(`expected a whole number from ${min} to ${max}`)
        .min(min, `expected a whole number from ${min} to ${max}`)
        .max(max, `expected a whole number from ${min} to ${max}`);

const tableName = z
    .string()
    .regex(/^[A-Za-z][A-Za-z0-9]{2,62}$/, "expected 3–63 letters and digits, starting with a letter (Azure Table rules)");

// 53, not 63: the app adds "-reconcile" and "-poison" queues next to it.
const queueName = z
    .string()
    .regex(
        /^(?=.{3,53}$)[a-z0-9]+(-[a-z0-9]+)*$/,
        "expected 3–53 lowercase letters, digits and single hyphens, not at either end (Azure Queue rules, with room for -reconcile)",
    );

const ncrontab = z
    .string()
    .trim()
    .refine((value) => value.split(/\s+/).length === 6, "expected a 6-field NCRONTAB schedule, e.g. 0 */5 * * * *");

const httpsOrLoopbackUrl = z
    .string()
    .url("expected an absolute URL")
    .refine((value) => /^https:\/\//.test(value) || /^http:\/\/(127\.0\.0\.1|localhost)(:|\/)/.test(value), {
        message: "expected an https URL (plain http only on 127.0.0.1 or localhost)",
    });

/** Every setting Sheetwright reads, with its meaning; the README's configuration table mirrors it. */
export const SETTINGS = {
    SMARTSHEET_ACCESS_TOKEN: "Smartsheet API access token (secret; never logged)",
    SMARTSHEET_BASE_URL: "Smartsheet API base URL (EU, Gov or the local simulator)",
    INTAKE_SHEET_ID: "id of the intake sheet customers order products on",
    TEMPLATE_FOLDER_ID: "id of the folder holding the seven template sheets",
    PRODUCTS_FOLDER_ID: "id of the folder holding one folder per product line",
    FILING_INDEX_SHEET_ID: "id of the Filing Index sheet",
    AzureWebJobsStorage: "storage connection string (Tables and Queues)",
    JOBS_TABLE: "Azure Table holding one row per product job",
    PROVISION_QUEUE: "queue carrying key-only provisioning messages",
    INTAKE_SWEEP_SCHEDULE: "NCRONTAB schedule of the intake sweep",
    REAPER_SCHEDULE: "NCRONTAB schedule of the reaper",
    STALE_AFTER_MINUTES: "a job without progress for longer than this is taken over by the reaper",
    MAX_RECOVERIES: "recoveries before a job is parked for a person",
    SMARTSHEET_REQUESTS_PER_MINUTE: "request pacing per token",
    SMARTSHEET_CALL_TIMEOUT_SECONDS: "client-side timeout of one Smartsheet request",
    COPY_SETTLE_SECONDS: "wait after an ambiguous copy failure before listing the folder again",
    STEP_RETRY_FIRST_SECONDS: "first retry delay of a step that failed transiently (doubles each time)",
    STEP_RETRY_MAX_SECONDS: "longest delay between two retries of a step",
    STEP_RETRY_ATTEMPTS: "attempts of a step before its orchestration gives up (the reaper then recovers it)",
    ALERT_WEBHOOK_URL: "optional webhook that is POSTed when a job is parked",
} as const;

export type SettingName = keyof typeof SETTINGS;

export const Config = z.object({
    SMARTSHEET_ACCESS_TOKEN: z.string({ error: "missing" }).trim().min(1, "missing"),
    SMARTSHEET_BASE_URL: z
        .string()
        .url("expected an absolute URL such as https://api.smartsheet.com/2.0/")
        .transform((url) => (url.endsWith("/") ? url : `${url}/`))
        .default("https://api.smartsheet.com/2.0/"),
    INTAKE_SHEET_ID: smartsheetId("the intake sheet"),
    TEMPLATE_FOLDER_ID: smartsheetId("the template folder"),
    PRODUCTS_FOLDER_ID: smartsheetId("the products folder"),
    FILING_INDEX_SHEET_ID: smartsheetId("the Filing Index sheet"),
    AzureWebJobsStorage: z.string({ error: "missing" }).trim().min(1, "missing"),
    JOBS_TABLE: tableName.default("SheetwrightJobs"),
    PROVISION_QUEUE: queueName.default("provision-jobs"),
    INTAKE_SWEEP_SCHEDULE: ncrontab.default("0 0,30 8-18 * * 1-5"),
    REAPER_SCHEDULE: ncrontab.default("0 */5 * * * *"),
    STALE_AFTER_MINUTES: z.coerce
        .number({ error: "expected minutes, e.g. 15" })
        .positive("expected minutes, e.g. 15")
        .max(24 * 60, "expected at most 1440 minutes")
        .default(15),
    MAX_RECOVERIES: wholeNumber(1, 100).default(3),
    SMARTSHEET_REQUESTS_PER_MINUTE: wholeNumber(1, 10_000).default(300),
    SMARTSHEET_CALL_TIMEOUT_SECONDS: wholeNumber(1, 600).default(60),
    COPY_SETTLE_SECONDS: wholeNumber(0, 600).default(10),
    STEP_RETRY_FIRST_SECONDS: wholeNumber(1, 600).default(5),
    STEP_RETRY_MAX_SECONDS: wholeNumber(1, 600).default(60),
    STEP_RETRY_ATTEMPTS: wholeNumber(1, 20).default(5),
    ALERT_WEBHOOK_URL: httpsOrLoopbackUrl.optional(),
});
export type Config = z.infer<typeof Config>;

/** Start-up refused: lists every bad or missing setting at once, never a secret's value. */
export class ConfigError extends Error {
    constructor(readonly problems: string[]) {
        super(
            `Sheetwright cannot start: ${problems.length} setting${problems.length === 1 ? " is" : "s are"} wrong. ` +
                `Fix them in the app settings (local.settings.json when running locally):\n` +
                problems.map((problem) => `  - ${problem}`).join("\n"),
        );
        this.name = "ConfigError";
    }
}

export interface HostLimits {
    /** The host's `functionTimeout` in ms; `undefined` when unlimited or not set. */
    functionTimeoutMs: number | undefined;
}

/**
 * Reads and validates every setting; empty strings count as missing. With the host's limits it
 * also refuses a reaper window that a live worker could outlast: the reaper must only ever take
 * over work that has stopped.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, host?: HostLimits): Config {
    const input: Record<string, string> = {};
    for (const name of Object.keys(SETTINGS)) {
        const value = env[name];
        if (value !== undefined && value.trim() !== "") input[name] = value;
    }
    const parsed = Config.safeParse(input);
    const secret = env.SMARTSHEET_ACCESS_TOKEN?.trim();
    const problems = parsed.success
        ? []
        : parsed.error.issues.map((issue) => {
              const name = String(issue.path[0] ?? "settings");
              const meaning = name in SETTINGS ? ` (${SETTINGS[name as SettingName]})` : "";
              return `${name}: ${issue.message}${meaning}`;
          });
    // The timing checks need only the timing settings: report them even when others are wrong.
    const timing = Config.pick({ STALE_AFTER_MINUTES: true, SMARTSHEET_CALL_TIMEOUT_SECONDS: true }).safeParse(input);
    if (host && timing.success) problems.push(...limitProblems(timing.data, host));
    if (parsed.success && problems.length === 0) return parsed.data;
    throw new ConfigError(problems.map((problem) => (secret ? problem.split(secret).join("***") : problem)));
}

function limitProblems(config: Pick<Config, "STALE_AFTER_MINUTES" | "SMARTSHEET_CALL_TIMEOUT_SECONDS">, host: HostLimits): string[] {
    const timeout = host.functionTimeoutMs;
    if (timeout === undefined) {
        return [
            "functionTimeout: host.json sets no function timeout (or -1); set one (e.g. 00:10:00) so that " +
                "STALE_AFTER_MINUTES can be longer than any live worker may run",
        ];
    }
    const problems: string[] = [];
    const shown = `${Math.round(timeout / 1000)} s`;
    if (config.STALE_AFTER_MINUTES * 60_000 <= timeout) {
        problems.push(
            `STALE_AFTER_MINUTES: ${config.STALE_AFTER_MINUTES} minutes is not longer than the host's functionTimeout ` +
                `(${shown}); the reaper could take a job from a live worker. Raise it above ${timeout / 60_000} minutes.`,
        );
    }
    if (config.SMARTSHEET_CALL_TIMEOUT_SECONDS * 1000 >= timeout) {
        problems.push(
            `SMARTSHEET_CALL_TIMEOUT_SECONDS: ${config.SMARTSHEET_CALL_TIMEOUT_SECONDS} s is not shorter than the host's ` +
                `functionTimeout (${shown}); a hung call would outlive its activity.`,
        );
    }
    return problems;
}

/** The configuration as it may be logged: the token reduced to whether it is set. */
export function describeConfig(config: Config): Record<string, string | number> {
    const shown: Record<string, string | number> = {};
    for (const [name, value] of Object.entries(config)) {
        if (value === undefined) continue;
        if (name === "SMARTSHEET_ACCESS_TOKEN") shown[name] = "(set)";
        else if (name === "AzureWebJobsStorage") shown[name] = String(value).replace(/AccountKey=[^;]+/i, "AccountKey=***");
        else if (name === "ALERT_WEBHOOK_URL") shown[name] = String(value).replace(/\?.*$/, "?***");
        else shown[name] = value;
    }
    return shown;
}
