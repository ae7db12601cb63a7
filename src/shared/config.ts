import { z } from "zod";
import { parseCron, nextUtc } from "./schedule/ncrontab";
import { planIgnoringTimeZone, resolveTimeZone } from "./schedule/timeZone";
import { budgetPacingWaitMs, SLICES_PER_WINDOW } from "./smartsheet/SharedTokenBudget";
import { TelemetryExporter } from "./telemetry/startTelemetry";

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

const seconds = (min: number, max: number) =>
    z.coerce
        .number({ error: `expected seconds from ${min} to ${max}` })
        .min(min, `expected seconds from ${min} to ${max}`)
        .max(max, `expected seconds from ${min} to ${max}`);

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

/**
 * A schedule the Functions timer accepts: six NCRONTAB fields (it parses with seconds, so the
 * five-field cron form is refused on Azure), every value in range, and an occurrence to come.
 */
const ncrontab = z
    .string()
    .trim()
    .superRefine((value, context) => {
        const problem = scheduleProblem(value);
        if (problem) context.addIssue({ code: "custom", message: problem });
    });

function scheduleProblem(expression: string): string | undefined {
    if (expression.split(/\s+/).length !== 6) return "expected a 6-field NCRONTAB schedule, e.g. 0 */5 * * * *";
    try {
        nextUtc(parseCron(expression), new Date());
        return undefined;
    } catch (error) {
        return (error as Error).message.replace(/\.$/, "");
    }
}

/** Both spellings the Functions host accepts for an identity-based connection's credential, normalized. */
const managedIdentityCredential = z
    .string()
    .trim()
    .refine((value) => value.toLowerCase() === "managedidentity", "expected managedidentity (any case), or leave it out for the default Azure credential chain")
    .transform(() => "managedidentity" as const);

const serviceUri = (service: "blob" | "queue" | "table") =>
    z
        .string()
        .url({ error: `expected a URL such as https://<account>.${service}.core.windows.net`, abort: true })
        .refine((value) => /^https:\/\//i.test(value) || /^http:\/\/(127\.\d+\.\d+\.\d+|localhost)(:\d+)?(\/|$)/i.test(value), {
            message: `expected an https URL such as https://<account>.${service}.core.windows.net (plain http only on this machine)`,
        });

/** https, or plain http only on this machine: anything else would send a secret in clear. */
const httpsOrLoopbackUrl = (example: string) =>
    z
        .string()
        .url({ error: `expected an absolute URL such as ${example}`, abort: true })
        .refine((value) => /^https:\/\//i.test(value) || /^http:\/\/(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:\d+)?(\/|$)/i.test(value), {
            message: "expected an https URL (plain http only on 127.0.0.1, [::1] or localhost)",
        });

/** Where Smartsheet sends webhook callbacks: https on a port it allows (plain http only on this machine, for the simulator). */
const webhookBaseUrl = () =>
    httpsOrLoopbackUrl("https://<app>.azurewebsites.net")
        .refine((value) => !/^https:/i.test(value) || ["", "443", "8000", "8008", "8080", "8443"].includes(new URL(value).port), {
            message: "expected port 443, 8000, 8008, 8080 or 8443: Smartsheet sends webhook callbacks to no other",
        })
        .refine((value) => new URL(value).search === "" && new URL(value).hash === "", { message: "expected the app's base URL alone, without ?query or #fragment" })
        .transform((value) => (value.endsWith("/") ? value : `${value}/`));

const siteId = (what: string) => {
    const message = `expected the numeric Smartsheet id of ${what}`;
    return z.preprocess(
        (value) => (typeof value === "string" && /^\s*\d+\s*$/.test(value) ? Number(value) : value),
        z.number({ error: message }).int(message).positive(message).refine(Number.isSafeInteger, message),
    );
};

const SITES_EXAMPLE =
    '[{"name":"acme","intakeSheetId":4583173393803140,"templateFolderId":…,"productsFolderId":…,"filingIndexSheetId":…,"tokenSetting":"SMARTSHEET_TOKEN_ACME"}]';

const SITE_KEYS = ["name", "intakeSheetId", "templateFolderId", "productsFolderId", "filingIndexSheetId", "tokenSetting", "webhookBaseUrl"] as const;

/** One customer's site as SITES lists it: where its products come from and go, and which setting holds its token. */
const SiteEntry = z.strictObject(
    {
        name: z
            .string({ error: "missing" })
            .regex(/^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/, "expected 1–40 lowercase letters, digits and inner hyphens, e.g. acme"),
        intakeSheetId: siteId("the site's intake sheet"),
        templateFolderId: siteId("the site's template folder"),
        productsFolderId: siteId("the site's products folder"),
        filingIndexSheetId: siteId("the site's Filing Index sheet"),
        // Capitals only: a Smartsheet token (lowercase letters and digits) pasted here by mistake is refused, and never echoed.
        tokenSetting: z
            .string({ error: "missing" })
            .regex(/^[A-Z][A-Z0-9_]{0,127}$/, {
                message: "expected the name of the app setting that holds the site's token, in capitals, e.g. SMARTSHEET_TOKEN_ACME (never the token itself)",
                abort: true,
            })
            .superRefine((name, context) => {
                const problem = tokenSettingProblem(name);
                if (problem) context.addIssue({ code: "custom", message: problem });
            }),
        webhookBaseUrl: webhookBaseUrl().optional(),
    },
    {
        error: (issue) =>
            issue.code === "unrecognized_keys"
                ? `unexpected ${issue.keys.join(", ")}: a site has only ${SITE_KEYS.join(", ")} (a token stays in its own app setting, named by tokenSetting)`
                : undefined,
    },
);

/** Where a site's token is kept: an app setting whose name starts so, and so names nothing else. */
const TOKEN_SETTING_PREFIX = "SMARTSHEET_TOKEN_";

/**
 * Settings that the Functions host, App Service and Azure SDKs read, by how their names begin: a
 * token setting must never name one (a storage connection string or an identity secret would be
 * sent to Smartsheet as the bearer token).
 */
const PLATFORM_SETTING_PREFIXES = [
    "AzureWebJobs",
    "FUNCTIONS_",
    "WEBSITE_",
    "WEBSITES_",
    "APPSETTING_",
    "APPINSIGHTS",
    "APPLICATIONINSIGHTS_",
    "AZURE_",
    "MSI_",
    "IDENTITY_",
    "SCM_",
    "CONTAINER_",
    "DOCKER_",
    "MACHINEKEY_",
];

/**
 * Why `name` may not hold a site's token, or `undefined` when it may. App setting names are
 * case-insensitive on Windows plans (`AZUREWEBJOBSSTORAGE` reads `AzureWebJobsStorage`), so every
 * comparison ignores case.
 */
function tokenSettingProblem(name: string): string | undefined {
    if (name === "SMARTSHEET_ACCESS_TOKEN") return undefined;
    const upper = name.toUpperCase();
    const own = Object.keys(SETTINGS).find((setting) => setting.toUpperCase() === upper);
    const platform = PLATFORM_SETTING_PREFIXES.find((prefix) => upper.startsWith(prefix.toUpperCase()));
    const rename = `keep the site's token in its own app setting named ${TOKEN_SETTING_PREFIX}<SITE>, e.g. ${TOKEN_SETTING_PREFIX}ACME, and put that name here`;
    if (own) return `names Sheetwright's own setting ${own} (app setting names are case-insensitive on Windows plans); ${rename}`;
    if (platform) {
        return `names a setting of the Functions host or Azure (${platform}…; app setting names are case-insensitive on Windows plans), whose value would be sent to Smartsheet as the token; ${rename}`;
    }
    if (!upper.startsWith(TOKEN_SETTING_PREFIX) || upper.length === TOKEN_SETTING_PREFIX.length) {
        return `expected a name starting with ${TOKEN_SETTING_PREFIX} (or SMARTSHEET_ACCESS_TOKEN), so that it can name no other setting; rename the app setting ${name} to ${TOKEN_SETTING_PREFIX}<SITE>, e.g. ${TOKEN_SETTING_PREFIX}ACME, and put that name here`;
    }
    return undefined;
}

/** Two sites on one intake sheet, products folder or Filing Index would take each other's jobs, folders or index rows. */
const SHARED_BY_NO_TWO_SITES = [
    ["name", "name", "site names must be distinct"],
    ["intakeSheetId", "intake sheet", "a job's intake sheet names its site"],
    ["productsFolderId", "products folder", "product codes are unique per intake sheet only, so one site could adopt the other's product folder"],
    ["filingIndexSheetId", "Filing Index", "product codes are unique per intake sheet only, so one site could overwrite the other's index row"],
] as const;

const SitesList = z
    .string()
    .transform((text, context) => {
        try {
            return JSON.parse(text) as unknown;
        } catch {
            // Not the parser's message: it quotes the text, which may hold a pasted secret.
            context.addIssue({ code: "custom", message: `is not valid JSON; expected a list such as ${SITES_EXAMPLE}` });
            return z.NEVER;
        }
    })
    .pipe(z.array(SiteEntry, { error: `expected a JSON list of sites, such as ${SITES_EXAMPLE}` }).min(1, "expected at least one site"))
    .superRefine((sites, context) => {
        for (const [key, what, why] of SHARED_BY_NO_TWO_SITES) {
            sites.forEach((site, index) => {
                const first = sites.findIndex((other) => other[key] === site[key]);
                if (first === index) return;
                context.addIssue({
                    code: "custom",
                    message:
                        key === "name"
                            ? `two sites are named "${site.name}"; ${why}`
                            : `sites "${sites[first]!.name}" and "${site.name}" share the ${what} ${site[key]}; give each its own (${why})`,
                });
            });
        }
    });

/** How a setting may appear in the start-up log line: as it is, reduced to what is not secret, or only "(set)". */
type ShownAs = "value" | "origin" | "storage" | "sites" | "set";

/** One setting: its meaning (in every problem with it; docs/configuration.md's table says the same), how the log line shows it, its schema. */
interface Setting {
    meaning: string;
    shown: ShownAs;
    schema: z.ZodType;
}

/** ALERT_WEBHOOK_FORMAT's choices: the app's own JSON, a Slack incoming webhook, a Teams workflow. */
export const ALERT_FORMATS = ["json", "slack", "teams"] as const;

/** Every setting Sheetwright reads; docs/configuration.md's table mirrors it (test/unit/docs.test.ts checks). */
export const SETTINGS = {
    SITES: {
        meaning:
            "JSON list of the customer sites this app serves, each {name, intakeSheetId, templateFolderId, productsFolderId, filingIndexSheetId, tokenSetting, webhookBaseUrl?}; tokenSetting names the app setting holding that site's token (SMARTSHEET_TOKEN_<SITE>). Leave it out to serve one site from the four ids below",
        shown: "sites",
        schema: SitesList.optional(),
    },
    SMARTSHEET_ACCESS_TOKEN: {
        meaning: "Smartsheet API access token of the single site, or of each site in SITES whose tokenSetting names it (secret; never logged)",
        shown: "set",
        schema: z.string().trim().min(1).optional(),
    },
    SMARTSHEET_BASE_URL: {
        meaning: "Smartsheet API base URL (EU, Gov or the local simulator)",
        shown: "origin",
        schema: httpsOrLoopbackUrl("https://api.smartsheet.com/2.0/")
            .transform((url) => (url.endsWith("/") ? url : `${url}/`))
            .default("https://api.smartsheet.com/2.0/"),
    },
    INTAKE_SHEET_ID: {
        meaning: "single site: id of the intake sheet customers order products on (leave out with SITES)",
        shown: "value",
        schema: smartsheetId("the intake sheet").optional(),
    },
    TEMPLATE_FOLDER_ID: {
        meaning: "single site: id of the folder holding the seven template sheets (leave out with SITES)",
        shown: "value",
        schema: smartsheetId("the template folder").optional(),
    },
    PRODUCTS_FOLDER_ID: {
        meaning: "single site: id of the folder holding one folder per product line (leave out with SITES)",
        shown: "value",
        schema: smartsheetId("the products folder").optional(),
    },
    FILING_INDEX_SHEET_ID: {
        meaning: "single site: id of the Filing Index sheet (leave out with SITES)",
        shown: "value",
        schema: smartsheetId("the Filing Index sheet").optional(),
    },
    AzureWebJobsStorage: {
        meaning: "storage connection string (Tables and Queues); or leave it out and use a managed identity with the settings below",
        shown: "storage",
        schema: z.string().trim().min(1).optional(),
    },
    AzureWebJobsStorage__accountName: {
        meaning: "storage account name, for a managed identity instead of a connection string",
        shown: "value",
        schema: z
            .string()
            .regex(/^[a-z0-9]{3,24}$/, "expected a storage account name: 3–24 lowercase letters and digits")
            .optional(),
    },
    AzureWebJobsStorage__blobServiceUri: {
        meaning:
            "Blob service URI, for a managed identity (instead of the account name); required with the queue and table URIs: the Functions host keeps its locks and timer state in blobs",
        shown: "origin",
        schema: serviceUri("blob").optional(),
    },
    AzureWebJobsStorage__tableServiceUri: {
        meaning: "Table service URI, for a managed identity (instead of the account name)",
        shown: "origin",
        schema: serviceUri("table").optional(),
    },
    AzureWebJobsStorage__queueServiceUri: {
        meaning: "Queue service URI, for a managed identity (instead of the account name)",
        shown: "origin",
        schema: serviceUri("queue").optional(),
    },
    AzureWebJobsStorage__credential: {
        meaning: "`managedidentity` (any case) to use only the app's managed identity (else the default Azure credential chain)",
        shown: "value",
        schema: managedIdentityCredential.optional(),
    },
    AzureWebJobsStorage__clientId: {
        meaning: "client id of a user-assigned managed identity",
        shown: "value",
        schema: z.string().trim().min(1).optional(),
    },
    AzureWebJobsStorage__managedIdentityResourceId: {
        meaning: "resource id of a user-assigned managed identity (/subscriptions/…/userAssignedIdentities/<name>), instead of its client id",
        shown: "value",
        schema: z
            .string()
            .trim()
            .regex(
                /^\/subscriptions\/[^/]+\/resourceGroups\/[^/]+\/providers\/Microsoft\.ManagedIdentity\/userAssignedIdentities\/[^/]+$/i,
                "expected the resource id of a user-assigned identity: /subscriptions/<id>/resourceGroups/<group>/providers/Microsoft.ManagedIdentity/userAssignedIdentities/<name>",
            )
            .optional(),
    },
    JOBS_TABLE: { meaning: "Azure Table holding one row per product job", shown: "value", schema: tableName.default("SheetwrightJobs") },
    PROVISION_QUEUE: { meaning: "queue carrying key-only provisioning messages", shown: "value", schema: queueName.default("provision-jobs") },
    TASK_HUB_NAME: {
        meaning: "Durable Functions task hub (host.json reads it); distinct per app and slot sharing one storage account, or their orchestrations mix",
        shown: "value",
        schema: z
            .string({ error: "missing" })
            .regex(/^[A-Za-z][A-Za-z0-9]{2,44}$/, "expected 3–45 letters and digits, starting with a letter (Durable Functions task hub rules)"),
    },
    INTAKE_SWEEP_SCHEDULE: {
        meaning: "NCRONTAB schedule of the intake sweep (reads the rows changed since its cursor)",
        shown: "value",
        schema: ncrontab.default("0 0,30 8-18 * * 1-5"),
    },
    INTAKE_FULL_SWEEP_SCHEDULE: {
        meaning: "NCRONTAB schedule of the full intake sweep (reads every row; catches what the cursor missed)",
        shown: "value",
        schema: ncrontab.default("0 30 2 * * *"),
    },
    REAPER_SCHEDULE: { meaning: "NCRONTAB schedule of the reaper", shown: "value", schema: ncrontab.default("0 */5 * * * *") },
    WEBSITE_TIME_ZONE: {
        meaning:
            "time zone the NCRONTAB schedules run in (IANA id such as Europe/Berlin, or a Windows id such as W. Europe Standard Time); leave it out for UTC. Azure ignores it on Flex Consumption and Linux Consumption, where it is refused",
        shown: "value",
        schema: z
            .string()
            .trim()
            .superRefine((value, context) => {
                const zone = resolveTimeZone(value);
                if (!zone.ok) context.addIssue({ code: "custom", message: zone.problem });
            })
            .optional(),
    },
    STALE_AFTER_MINUTES: {
        meaning: "a job without progress for longer than this is taken over by the reaper",
        shown: "value",
        schema: z.coerce
            .number({ error: "expected minutes, e.g. 15" })
            .positive("expected minutes, e.g. 15")
            .max(24 * 60, "expected at most 1440 minutes")
            .default(15),
    },
    MAX_RECOVERIES: { meaning: "recoveries before a job is parked for a person", shown: "value", schema: wholeNumber(1, 100).default(3) },
    SMARTSHEET_REQUESTS_PER_MINUTE: {
        meaning:
            "requests per rate-limit window per token (Smartsheet: 300 a minute), for every instance of the app together (they share one budget through the Jobs table)",
        shown: "value",
        schema: wholeNumber(1, 10_000).default(300),
    },
    SMARTSHEET_BUDGET_LEASE_SIZE: {
        meaning: "most requests an instance takes from the shared budget in one storage write: larger costs fewer storage transactions, smaller shares more fairly",
        shown: "value",
        schema: wholeNumber(1, 1_000).default(5),
    },
    SMARTSHEET_BUDGET_FALLBACK_INSTANCES: {
        meaning:
            "instances assumed to share the token while the storage account cannot be reached: each then paces itself to SMARTSHEET_REQUESTS_PER_MINUTE ÷ this",
        shown: "value",
        schema: wholeNumber(1, 1_000).default(4),
    },
    SMARTSHEET_RATE_LIMIT_WINDOW_SECONDS: {
        meaning: "the rolling window SMARTSHEET_REQUESTS_PER_MINUTE counts in: Smartsheet's minute; shorter only to compress time in a test or benchmark",
        shown: "value",
        schema: seconds(1, 3600).default(60),
    },
    SMARTSHEET_CALL_TIMEOUT_SECONDS: { meaning: "client-side timeout of one Smartsheet request", shown: "value", schema: wholeNumber(1, 600).default(60) },
    SMARTSHEET_RATE_LIMIT_RETRY_SECONDS: {
        meaning: "longest one request waits for the rate limit (pacing and every 429 back-off) before it gives up unsent",
        shown: "value",
        schema: seconds(1, 3600).default(120),
    },
    COPY_SETTLE_SECONDS: {
        meaning: "wait after an ambiguous copy failure before listing the folder again",
        shown: "value",
        schema: wholeNumber(0, 600).default(10),
    },
    LATE_WRITE_HORIZON_SECONDS: {
        meaning:
            "how long after it was claimed an unanswered write may still land in Smartsheet; a job with one is done only after a final audit once this has passed (default: the rate-limit retry time + the call timeout + the clock skew + 120 s)",
        shown: "value",
        schema: seconds(0.1, 24 * 3600).optional(),
    },
    MAX_CLOCK_SKEW_SECONDS: {
        meaning: "largest clock difference between two instances of the app that the timing checks allow for",
        shown: "value",
        schema: seconds(0, 600).default(30),
    },
    STEP_RETRY_FIRST_SECONDS: {
        meaning: "first retry delay of a step that failed transiently (doubles each time)",
        shown: "value",
        schema: wholeNumber(1, 600).default(5),
    },
    STEP_RETRY_MAX_SECONDS: { meaning: "longest delay between two retries of a step", shown: "value", schema: wholeNumber(1, 600).default(60) },
    CONVERGE_CONCURRENCY: {
        meaning:
            "products one convergence (POST /api/converge, per site) brings to a template version at a time: few, so that provisioning's activities never queue behind a convergence of hundreds of products",
        shown: "value",
        schema: wholeNumber(1, 10).default(2),
    },
    STEP_RETRY_ATTEMPTS: {
        meaning: "attempts of a step before its orchestration gives up (a bug then parks the job; a transient failure, the reaper then recovers it)",
        shown: "value",
        schema: wholeNumber(1, 20).default(5),
    },
    ALERT_WEBHOOK_URL: {
        meaning:
            "optional webhook POSTed for every alert ops must act on: a job parked (job.parked); a whole site failing a run (site.failed) and, when it sweeps again, recovering (site.recovered); an intake row whose status Smartsheet refused to write (intake.rowRefused); open or parked jobs on an intake sheet no site in SITES serves (jobs.orphaned); a site's intake webhook that cannot be kept on (webhook.disabled)",
        shown: "origin",
        schema: httpsOrLoopbackUrl("https://hooks.example.com/sheetwright").optional(),
    },
    WEBSITE_AUTH_ENABLED: {
        meaning:
            "set by the platform (True) when App Service authentication is on; only then does unpark record the caller's X-MS-CLIENT-PRINCIPAL identity. Never set it by hand",
        shown: "value",
        schema: z.stringbool({ error: "expected True or False, as the platform sets it (or leave it out)" }).optional(),
    },
    TELEMETRY_EXPORTER: {
        meaning:
            "where the app's events and metrics go (docs/telemetry.md): azure-monitor (Application Insights, through APPLICATIONINSIGHTS_CONNECTION_STRING and, with a managed identity, APPLICATIONINSIGHTS_AUTHENTICATION_STRING), console, or off; default azure-monitor when APPLICATIONINSIGHTS_CONNECTION_STRING is set, else off",
        shown: "value",
        schema: TelemetryExporter.optional(),
    },
    ALERT_WEBHOOK_FORMAT: {
        meaning:
            "how ALERT_WEBHOOK_URL's alerts are written: json (default: the app's own JSON), slack (a Slack incoming webhook: text and blocks) or teams (an Adaptive Card for a Teams workflow's \"When a Teams webhook request is received\")",
        shown: "value",
        schema: z
            .enum(ALERT_FORMATS, { message: `must be one of ${ALERT_FORMATS.join(", ")} (the webhook's kind: slack for a Slack incoming webhook, teams for a Teams workflow)` })
            .default("json"),
    },
    ALERT_WEBHOOK_SIGNING_SECRET: {
        meaning:
            "optional secret (at least 32 characters) that signs every alert: headers X-Sheetwright-Timestamp and X-Sheetwright-Signature = sha256=<hex HMAC-SHA256 of \"<timestamp>.<body>\">, see docs/alerts.md (secret; never logged)",
        shown: "set",
        // The message never quotes the value: it is a secret.
        schema: z.string().trim().min(32, { message: "must be at least 32 characters (generate one: openssl rand -hex 32)" }).optional(),
    },
    WEBHOOK_BASE_URL: {
        meaning:
            "public base URL of this function app (https://<app>.azurewebsites.net), where Smartsheet sends the intake sheets' webhook callbacks: an approval then starts its product within about a minute. A site in SITES may name its own (webhookBaseUrl). Leave it out to run on the timer sweeps alone",
        shown: "origin",
        schema: webhookBaseUrl().optional(),
    },
    WEBHOOK_FUNCTION_KEY: {
        meaning:
            "a function key of intakeWebhook (or a host key), which Smartsheet's callback URL carries as ?code=; required with WEBHOOK_BASE_URL (secret; never logged)",
        shown: "set",
        schema: z
            .string()
            .trim()
            .regex(/^[A-Za-z0-9_\-=]{16,200}$/, { message: "expected a function key: 16–200 letters, digits, -, _ or = (copy it from the function's Function Keys blade)" })
            .optional(),
    },
    WEBHOOK_COALESCE_SECONDS: {
        meaning: "webhook callbacks of one site within one slot of this many seconds start one sweep, at the slot's end",
        shown: "value",
        schema: seconds(1, 300).default(5),
    },
} satisfies Record<string, Setting>;

type SettingName = keyof typeof SETTINGS;

/** The single-site settings: one site of their own, which SITES replaces. */
const SINGLE_SITE_IDS = ["INTAKE_SHEET_ID", "TEMPLATE_FOLDER_ID", "PRODUCTS_FOLDER_ID", "FILING_INDEX_SHEET_ID"] as const;

/** The name the single-site settings' site goes by. */
const DEFAULT_SITE_NAME = "default";

type SettingsShape = { [Name in SettingName]: (typeof SETTINGS)[Name]["schema"] };

const Settings = z.object(Object.fromEntries(Object.entries(SETTINGS).map(([name, setting]) => [name, setting.schema])) as SettingsShape);
type Settings = z.infer<typeof Settings>;

/** One customer's site, its token read from the setting SITES names (or SMARTSHEET_ACCESS_TOKEN for the single site). */
export interface SiteConfig {
    name: string;
    intakeSheetId: number;
    templateFolderId: number;
    productsFolderId: number;
    filingIndexSheetId: number;
    /** The app setting the token came from; safe to name in a log line. */
    tokenSetting: string;
    /** Where Smartsheet sends this site's webhook callbacks (its own, or WEBHOOK_BASE_URL); none: timer sweeps alone. */
    webhookBaseUrl?: string;
    /** Secret: never logged, never in an error. */
    token: string;
}

/** Every setting, and the sites they describe: from SITES, or the one site of the single-site settings. */
export type Config = Settings & {
    sites: SiteConfig[];
    /** Where the app's jobs API answers: WEBSITE_HOSTNAME as the platform sets it (alerts link a job and its unpark endpoint), never checked or logged. */
    appHost?: string;
};

/**
 * What the code below the composition root may read: the settings every site shares. A site's
 * ids and token reach it only through its `Site`, found from the job.
 */
export type AppWideSettings = Omit<Config, "sites" | "SITES" | "SMARTSHEET_ACCESS_TOKEN" | (typeof SINGLE_SITE_IDS)[number]>;

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

interface HostLimits {
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
    const parsed = Settings.safeParse(input);
    const problems = parsed.success
        ? []
        : parsed.error.issues.map((issue) => {
              const name = String(issue.path[0] ?? "settings");
              // SITES' messages say what a site needs themselves; its meaning would only repeat it.
              const meaning = name in SETTINGS && name !== "SITES" ? ` (${SETTINGS[name as SettingName].meaning})` : "";
              return `${pathText(issue.path)}: ${issue.message}${meaning}`;
          });
    const serviceUriGiven = ["blob", "queue", "table"].some((service) => input[`AzureWebJobsStorage__${service}ServiceUri`] !== undefined);
    // With some service URIs given, identityStorageProblems names the ones missing.
    if (!reachesStorage(input) && !serviceUriGiven) {
        problems.push(
            "AzureWebJobsStorage: missing: a storage connection string, or AzureWebJobsStorage__accountName (or " +
                "__blobServiceUri, __queueServiceUri and __tableServiceUri) to reach the account with a managed identity",
        );
    }
    problems.push(...identityStorageProblems(input), ...timeZoneProblems(input, env));
    const sites = withWebhookBaseUrls(sitesOf(input, parsed.success ? parsed.data : undefined, env, problems), parsed.success ? parsed.data : undefined, problems);
    // The timing checks need only the timing settings: report them even when others are wrong.
    const timing = Settings.pick(TIMING_SETTINGS).safeParse(input);
    if (host && timing.success) problems.push(...limitProblems(timing.data, host));
    const pacing = Settings.pick(PACING_SETTINGS).safeParse(input);
    if (pacing.success) problems.push(...pacingProblems(pacing.data));
    if (parsed.success && sites && problems.length === 0) return { ...parsed.data, sites, appHost: env.WEBSITE_HOSTNAME || undefined };
    const secrets = [env.SMARTSHEET_ACCESS_TOKEN, env.ALERT_WEBHOOK_SIGNING_SECRET, env.WEBHOOK_FUNCTION_KEY, ...tokenSettingsNamedIn(input.SITES).map((name) => env[name])]
        .map((secret) => secret?.trim())
        .filter((secret): secret is string => Boolean(secret));
    throw new ConfigError(problems.map((problem) => secrets.reduce((text, secret) => text.split(secret).join("***"), problem)));
}

/** Each site's webhook base URL (its own, else WEBHOOK_BASE_URL); a problem when some site has one but no key is set for the callbacks. */
function withWebhookBaseUrls(sites: SiteConfig[] | undefined, settings: Settings | undefined, problems: string[]): SiteConfig[] | undefined {
    if (!sites || !settings) return sites;
    const resolved = sites.map((site) => {
        const base = site.webhookBaseUrl ?? settings.WEBHOOK_BASE_URL;
        return base === undefined ? site : { ...site, webhookBaseUrl: base };
    });
    if (resolved.some((site) => site.webhookBaseUrl !== undefined) && settings.WEBHOOK_FUNCTION_KEY === undefined) {
        problems.push(
            `WEBHOOK_FUNCTION_KEY: missing: Smartsheet's callbacks reach intakeWebhook only with a function key in their URL; ` +
                `add a key to the function (Function Keys blade, or az functionapp function keys set) and put it here, or remove WEBHOOK_BASE_URL to run on timer sweeps alone`,
        );
    }
    return resolved;
}

/** `SITES[1].intakeSheetId` for an issue inside the list, the setting's name otherwise. */
function pathText(path: readonly PropertyKey[]): string {
    return path.map((part, index) => (typeof part === "number" ? `[${part}]` : index === 0 ? String(part) : `.${String(part)}`)).join("") || "settings";
}

/**
 * The sites the settings describe, each with its token; `undefined` (with the problems added)
 * when they describe none. SITES and the single-site ids exclude each other.
 */
function sitesOf(input: Record<string, string>, settings: Settings | undefined, env: NodeJS.ProcessEnv, problems: string[]): SiteConfig[] | undefined {
    const singleSiteIds = SINGLE_SITE_IDS.filter((name) => input[name] !== undefined);
    if (input.SITES !== undefined) {
        if (singleSiteIds.length > 0) {
            problems.push(
                `SITES: remove ${singleSiteIds.join(", ")}: with SITES every site's ids are in its entry ` +
                    `(or remove SITES to serve one site from the single-site settings)`,
            );
        }
        if (!settings?.SITES) return undefined;
        const sites: SiteConfig[] = [];
        for (const site of settings.SITES) {
            const token = env[site.tokenSetting]?.trim();
            if (token && isUnresolvedKeyVaultReference(token)) problems.push(unresolvedKeyVaultProblem(site.tokenSetting, `site "${site.name}"`));
            else if (token) sites.push({ ...site, token });
            else {
                problems.push(
                    `${site.tokenSetting}: missing: site "${site.name}" in SITES takes its Smartsheet token from this app setting; ` +
                        `add it (a Key Vault reference is fine)`,
                );
            }
        }
        return problems.length === 0 ? sites : undefined;
    }
    for (const name of SINGLE_SITE_IDS.filter((id) => input[id] === undefined)) {
        problems.push(`${name}: missing (${SETTINGS[name].meaning}); set it, or list every site in SITES`);
    }
    if (input.SMARTSHEET_ACCESS_TOKEN === undefined) problems.push(`SMARTSHEET_ACCESS_TOKEN: missing (${SETTINGS.SMARTSHEET_ACCESS_TOKEN.meaning})`);
    else if (isUnresolvedKeyVaultReference(input.SMARTSHEET_ACCESS_TOKEN.trim())) {
        problems.push(unresolvedKeyVaultProblem("SMARTSHEET_ACCESS_TOKEN", "the site"));
        return undefined;
    }
    if (!settings || settings.SMARTSHEET_ACCESS_TOKEN === undefined || SINGLE_SITE_IDS.some((name) => settings[name] === undefined)) return undefined;
    return [
        {
            name: DEFAULT_SITE_NAME,
            intakeSheetId: settings.INTAKE_SHEET_ID!,
            templateFolderId: settings.TEMPLATE_FOLDER_ID!,
            productsFolderId: settings.PRODUCTS_FOLDER_ID!,
            filingIndexSheetId: settings.FILING_INDEX_SHEET_ID!,
            tokenSetting: "SMARTSHEET_ACCESS_TOKEN",
            token: settings.SMARTSHEET_ACCESS_TOKEN,
        },
    ];
}

/**
 * App Service replaces `@Microsoft.KeyVault(...)` with the secret before the app starts; when it
 * cannot read the secret it leaves the reference as it is, which Smartsheet would get as the token.
 */
function isUnresolvedKeyVaultReference(value: string): boolean {
    return /^@Microsoft\.KeyVault\s*\(/i.test(value);
}

function unresolvedKeyVaultProblem(setting: string, whose: string): string {
    return (
        `${setting}: is still the Key Vault reference, not ${whose}'s token: App Service could not read the secret. Give the app's ` +
        `identity the "Key Vault Secrets User" role on the vault (a user-assigned identity must also be the app's ` +
        `keyVaultReferenceIdentity), check that the SecretUri names an existing secret, and read the reference's status ` +
        `in the app's Environment variables blade (Key vault reference: Resolved, or why not); then restart the app`
    );
}

/** The token settings SITES names, read leniently, so that an error never shows a token even when SITES itself is wrong. */
function tokenSettingsNamedIn(sites: string | undefined): string[] {
    if (sites === undefined) return [];
    try {
        const list = JSON.parse(sites) as unknown;
        if (!Array.isArray(list)) return [];
        return list.flatMap((site: unknown) => {
            const name = (site as { tokenSetting?: unknown } | null)?.tokenSetting;
            return typeof name === "string" && name.trim() !== "" ? [name.trim()] : [];
        });
    } catch {
        return [];
    }
}

/** A connection string, or an identity-based connection as the Functions host reads one. */
function reachesStorage(input: Record<string, string>): boolean {
    return (
        input.AzureWebJobsStorage !== undefined ||
        input.AzureWebJobsStorage__accountName !== undefined ||
        (input.AzureWebJobsStorage__tableServiceUri !== undefined && input.AzureWebJobsStorage__queueServiceUri !== undefined)
    );
}

/**
 * An identity-based connection the Functions host would not start on. It reaches blobs (its locks,
 * timer state, Durable Functions' leases) through the same connection, so service URIs without the
 * blob one pass the app's own needs and fail the host's; and it takes a user-assigned identity by
 * client id or by resource id, never both.
 */
function identityStorageProblems(input: Record<string, string>): string[] {
    if (input.AzureWebJobsStorage !== undefined || input.AzureWebJobsStorage__accountName !== undefined) return [];
    const problems: string[] = [];
    const uris = ["blobServiceUri", "queueServiceUri", "tableServiceUri"] as const;
    const set = uris.filter((uri) => input[`AzureWebJobsStorage__${uri}`] !== undefined);
    if (set.length > 0 && set.length < uris.length) {
        const missing = uris.filter((uri) => !set.includes(uri));
        const given = input[`AzureWebJobsStorage__${set[0]!}`]!.replace(/\/+$/, "");
        // The same account and cloud as the URI given: only the service's label differs.
        const uriFor = (uri: string) => {
            const service = uri.replace("ServiceUri", "");
            const derived = given.replace(/^(https?:\/\/[^./]+\.)(blob|queue|table)\./i, `$1${service}.`);
            return derived === given ? `https://<account>.${service}.core.windows.net` : derived;
        };
        problems.push(
            `${missing.map((uri) => `AzureWebJobsStorage__${uri}`).join(", ")}: missing: with service URIs the Functions host needs all three ` +
                `(it keeps its locks, timer state and Durable Functions' leases in blobs); add ` +
                missing.map((uri) => `AzureWebJobsStorage__${uri}=${uriFor(uri)}`).join(" and ") +
                `, or give AzureWebJobsStorage__accountName instead of the URIs`,
        );
    }
    if (input.AzureWebJobsStorage__clientId !== undefined && input.AzureWebJobsStorage__managedIdentityResourceId !== undefined) {
        problems.push(
            "AzureWebJobsStorage__managedIdentityResourceId: set together with AzureWebJobsStorage__clientId; the Functions host takes " +
                "one user-assigned identity by one of them: remove either",
        );
    }
    return problems;
}

/** WEBSITE_TIME_ZONE where Azure ignores it: the schedules would run in UTC while ops reads them as local time. */
function timeZoneProblems(input: Record<string, string>, env: NodeJS.ProcessEnv): string[] {
    const zone = input.WEBSITE_TIME_ZONE?.trim();
    const plan = zone === undefined ? undefined : planIgnoringTimeZone(env);
    if (!plan) return [];
    return [
        `WEBSITE_TIME_ZONE: ${plan} ignores it, so the timers would run in UTC, not in ${zone}. ` +
            `Remove it and write INTAKE_SWEEP_SCHEDULE and the other schedules in UTC (working hours then shift by an hour ` +
            `when the clocks change), or host the app on a Premium or Dedicated plan, where WEBSITE_TIME_ZONE is honoured`,
    ];
}

const TIMING_SETTINGS = {
    STALE_AFTER_MINUTES: true,
    SMARTSHEET_CALL_TIMEOUT_SECONDS: true,
    SMARTSHEET_RATE_LIMIT_RETRY_SECONDS: true,
    COPY_SETTLE_SECONDS: true,
    LATE_WRITE_HORIZON_SECONDS: true,
    MAX_CLOCK_SKEW_SECONDS: true,
    STEP_RETRY_MAX_SECONDS: true,
} as const;

type TimingSettings = Pick<Config, keyof typeof TIMING_SETTINGS>;

/** The durations the exactly-once design rests on, derived from the settings. */
export interface Timing {
    /** From a write's claim to its last possible answer: rate-limit waits and re-sends, then the call timeout. */
    writeLifetimeMs: number;
    /** How long a claim protects a write in flight: the whole time one write can take, plus clock skew, seen from another instance's clock. */
    claimTtlMs: number;
    /** How long after its claim an unanswered write may still land in Smartsheet. */
    lateWriteHorizonMs: number;
    /** After an ambiguous write: how long to wait before looking whether it happened. */
    settleMs: number;
    /** The largest clock difference between two instances (or between Smartsheet and us) allowed for. */
    clockSkewMs: number;
}

/** Smartsheet abandons a request it cannot finish (500/4002, its own server timeout); this is the margin for it. */
const SMARTSHEET_SERVER_MARGIN_MS = 120_000;

export function timingOf(config: TimingSettings): Timing {
    const writeLifetimeMs = (config.SMARTSHEET_RATE_LIMIT_RETRY_SECONDS + config.SMARTSHEET_CALL_TIMEOUT_SECONDS) * 1000;
    const settleMs = config.COPY_SETTLE_SECONDS * 1000;
    const clockSkewMs = config.MAX_CLOCK_SKEW_SECONDS * 1000;
    return {
        writeLifetimeMs,
        claimTtlMs: writeLifetimeMs + settleMs + clockSkewMs,
        // Measured from a claim stamped by another instance's clock: the skew counts here too.
        lateWriteHorizonMs:
            config.LATE_WRITE_HORIZON_SECONDS !== undefined
                ? config.LATE_WRITE_HORIZON_SECONDS * 1000
                : writeLifetimeMs + clockSkewMs + SMARTSHEET_SERVER_MARGIN_MS,
        settleMs,
        clockSkewMs,
    };
}

/**
 * The clock margins: staleness and claim freshness compare timestamps written by different
 * instances, so every comparison leaves room for MAX_CLOCK_SKEW_SECONDS.
 */
function limitProblems(config: TimingSettings, host: HostLimits): string[] {
    const timeout = host.functionTimeoutMs;
    if (timeout === undefined) {
        return [
            "functionTimeout: host.json sets no function timeout (or -1); set one (e.g. 00:10:00) so that " +
                "STALE_AFTER_MINUTES can be longer than any live worker may run",
        ];
    }
    const problems: string[] = [];
    const shown = (ms: number) => `${Math.round(ms / 100) / 10} s`;
    const timing = timingOf(config);
    const quietMs = timeout + config.STEP_RETRY_MAX_SECONDS * 1000 + config.MAX_CLOCK_SKEW_SECONDS * 1000;
    if (config.STALE_AFTER_MINUTES * 60_000 <= quietMs) {
        problems.push(
            `STALE_AFTER_MINUTES: ${config.STALE_AFTER_MINUTES} minutes is not longer than the host's functionTimeout (${shown(timeout)}) ` +
                `+ the longest step retry delay (STEP_RETRY_MAX_SECONDS, ${config.STEP_RETRY_MAX_SECONDS} s) + the clock skew allowed ` +
                `(MAX_CLOCK_SKEW_SECONDS, ${config.MAX_CLOCK_SKEW_SECONDS} s) = ${shown(quietMs)}, the longest a live job can go without ` +
                `progress; the reaper could take a job from a live worker. Raise it above ${Math.ceil(quietMs / 6_000) / 10} minutes.`,
        );
    }
    if (config.SMARTSHEET_CALL_TIMEOUT_SECONDS * 1000 >= timeout) {
        problems.push(
            `SMARTSHEET_CALL_TIMEOUT_SECONDS: ${config.SMARTSHEET_CALL_TIMEOUT_SECONDS} s is not shorter than the host's ` +
                `functionTimeout (${shown(timeout)}); a hung call would outlive its activity.`,
        );
    } else if (timing.writeLifetimeMs + timing.settleMs >= timeout) {
        problems.push(
            `SMARTSHEET_RATE_LIMIT_RETRY_SECONDS: one write may take ${shown(timing.writeLifetimeMs)} (rate-limit retries ` +
                `${config.SMARTSHEET_RATE_LIMIT_RETRY_SECONDS} s + call timeout ${config.SMARTSHEET_CALL_TIMEOUT_SECONDS} s) and then settle ` +
                `${config.COPY_SETTLE_SECONDS} s, which does not fit in the host's functionTimeout (${shown(timeout)}); lower it.`,
        );
    }
    if (timing.lateWriteHorizonMs < timing.writeLifetimeMs + timing.clockSkewMs) {
        problems.push(
            `LATE_WRITE_HORIZON_SECONDS: ${config.LATE_WRITE_HORIZON_SECONDS} s is shorter than one write may take from its claim ` +
                `plus the clock skew allowed (${shown(timing.writeLifetimeMs + timing.clockSkewMs)}: rate-limit retries + call timeout + ` +
                `MAX_CLOCK_SKEW_SECONDS); a write could land after the final audit.`,
        );
    }
    return problems;
}

const PACING_SETTINGS = { SMARTSHEET_RATE_LIMIT_RETRY_SECONDS: true, SMARTSHEET_RATE_LIMIT_WINDOW_SECONDS: true } as const;

/**
 * The shared request budget hands out a token's requests a slice of the rate-limit window at a
 * time (SharedTokenBudget): a request whose slice is spent waits for the next. A rate-limit
 * deadline shorter than that wait would refuse, unsent, requests the budget only paces.
 */
function pacingProblems(config: Pick<Config, keyof typeof PACING_SETTINGS>): string[] {
    const windowMs = config.SMARTSHEET_RATE_LIMIT_WINDOW_SECONDS * 1000;
    const neededMs = budgetPacingWaitMs(windowMs);
    if (config.SMARTSHEET_RATE_LIMIT_RETRY_SECONDS * 1000 >= neededMs) return [];
    const shown = (ms: number) => `${Math.round(ms / 10) / 100} s`;
    return [
        `SMARTSHEET_RATE_LIMIT_RETRY_SECONDS: ${config.SMARTSHEET_RATE_LIMIT_RETRY_SECONDS} s is shorter than two slices of the ` +
            `shared request budget (${shown(neededMs)}: SMARTSHEET_RATE_LIMIT_WINDOW_SECONDS ${config.SMARTSHEET_RATE_LIMIT_WINDOW_SECONDS} s ÷ ` +
            `${SLICES_PER_WINDOW} × 2). The budget hands out requests a slice at a time; a request that finds its slice spent ` +
            `waits for the next one, and would be refused unsent while the window still has room. Raise it to at least ` +
            `${shown(neededMs)}, or shorten the window.`,
    ];
}

/** Connection-string keys whose values are not secret; every other key (AccountKey, SharedAccessSignature…) is withheld. */
const PUBLIC_STORAGE_KEYS = new Set(["usedevelopmentstorage", "defaultendpointsprotocol", "accountname", "endpointsuffix"]);

/**
 * The configuration as it may be logged, by allow-list: ids, names, schedules and numbers as
 * they are; a URL as its origin only (credentials, path and query can all hold secrets — a chat
 * webhook's path is its key); a storage connection string as its account name and endpoint
 * origins; the token, and anything not known to be harmless, as "(set)".
 */
export function describeConfig(config: Config): Record<string, string | number | ShownSite[]> {
    const shown: Record<string, string | number | ShownSite[]> = {};
    for (const [name, setting] of Object.entries(SETTINGS) as Array<[SettingName, Setting]>) {
        const value = config[name];
        if (value === undefined) continue;
        const as = setting.shown;
        if (as === "value" && (typeof value === "number" || typeof value === "string")) shown[name] = value;
        else if (as === "value" && typeof value === "boolean") shown[name] = String(value);
        // The resolved sites carry their tokens: SITES shows what may be shown of them.
        else if (as === "sites") shown[name] = config.sites.map(shownSite);
        else if (as === "origin") shown[name] = originOf(String(value));
        else if (as === "storage") shown[name] = describeStorage(String(value));
        else shown[name] = "(set)";
    }
    return shown;
}

type ShownSite = Omit<SiteConfig, "token">;

/** A site as a log line may show it: its ids, the name of its token's setting (never the token), its webhook base URL's origin. */
function shownSite(site: SiteConfig): ShownSite {
    const { name, intakeSheetId, templateFolderId, productsFolderId, filingIndexSheetId, tokenSetting, webhookBaseUrl } = site;
    return { name, intakeSheetId, templateFolderId, productsFolderId, filingIndexSheetId, tokenSetting, ...(webhookBaseUrl ? { webhookBaseUrl: originOf(webhookBaseUrl) } : {}) };
}

function originOf(url: string): string {
    try {
        const parsed = new URL(url);
        return parsed.origin === "null" ? "(set)" : `${parsed.origin}/…`;
    } catch {
        return "(set)";
    }
}

function describeStorage(connection: string): string {
    const parts: string[] = [];
    for (const pair of connection.split(";")) {
        const at = pair.indexOf("=");
        if (at <= 0) continue;
        const key = pair.slice(0, at).trim();
        const value = pair.slice(at + 1).trim();
        if (PUBLIC_STORAGE_KEYS.has(key.toLowerCase()) && /^[\w.-]+$/.test(value)) parts.push(`${key}=${value}`);
        else if (/endpoint$/i.test(key)) parts.push(`${key}=${originOf(value)}`);
        else parts.push(`${key}=***`);
    }
    return parts.length > 0 ? parts.join(";") : "(set)";
}
