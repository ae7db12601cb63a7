import { describe, expect, it } from "vitest";
import { ConfigError, describeConfig, loadConfig, timingOf } from "../../src/shared/config";
import { functionTimeoutMs, parseTimeSpan } from "../../src/shared/hostTimeout";
import { readFileSync } from "node:fs";
import { COMPRESSED_PRODUCTION, SHRUNK_RECOVERY } from "../../tools/bench/timings";
import { HOST_TIMING as CHAOS_HOST_TIMING } from "../../tools/chaos/stack";
import { E2E_TIMING } from "../helpers/e2e";
import { FAST_RECOVERY } from "../helpers/recoveryKit";
import { ACME_SITE } from "../helpers/exampleSites";

const TOKEN = "tok_9f8e7d6c5b4a39281706f5e4d3c2b1a0SECRET";

const valid = {
    SMARTSHEET_ACCESS_TOKEN: TOKEN,
    INTAKE_SHEET_ID: "4583173393803140",
    TEMPLATE_FOLDER_ID: "1234567890123456",
    PRODUCTS_FOLDER_ID: "2234567890123456",
    FILING_INDEX_SHEET_ID: "3234567890123456",
    AzureWebJobsStorage: "UseDevelopmentStorage=true",
    TASK_HUB_NAME: "Sheetwright",
};

function problemsOf(env: Record<string, string>): ConfigError {
    try {
        loadConfig(env);
    } catch (error) {
        if (error instanceof ConfigError) return error;
        throw error;
    }
    throw new Error("expected loadConfig to refuse these settings");
}

describe("loadConfig", () => {
    it("accepts the required settings and fills in every default", () => {
        const config = loadConfig(valid);
        expect(config).toMatchObject({
            INTAKE_SHEET_ID: 4583173393803140,
            SMARTSHEET_BASE_URL: "https://api.smartsheet.com/2.0/",
            JOBS_TABLE: "SheetwrightJobs",
            PROVISION_QUEUE: "provision-jobs",
            INTAKE_SWEEP_SCHEDULE: "0 0,30 8-18 * * 1-5",
            INTAKE_FULL_SWEEP_SCHEDULE: "0 30 2 * * *",
            STALE_AFTER_MINUTES: 15,
            MAX_RECOVERIES: 3,
            SMARTSHEET_REQUESTS_PER_MINUTE: 300,
            SMARTSHEET_RATE_LIMIT_WINDOW_SECONDS: 60,
        });
    });

    it("takes a shorter rate-limit window, in seconds with decimals, and refuses one under a second", () => {
        expect(loadConfig({ ...valid, SMARTSHEET_RATE_LIMIT_WINDOW_SECONDS: "7.5" }).SMARTSHEET_RATE_LIMIT_WINDOW_SECONDS).toBe(7.5);
        expect(problemsOf({ ...valid, SMARTSHEET_RATE_LIMIT_WINDOW_SECONDS: "0.5" }).problems).toEqual([
            expect.stringMatching(/^SMARTSHEET_RATE_LIMIT_WINDOW_SECONDS: expected seconds from 1 to 3600 \(the rolling window/),
        ]);
    });

    it("names every missing setting in one error", () => {
        const error = problemsOf({});
        for (const name of [
            "SMARTSHEET_ACCESS_TOKEN",
            "INTAKE_SHEET_ID",
            "TEMPLATE_FOLDER_ID",
            "PRODUCTS_FOLDER_ID",
            "FILING_INDEX_SHEET_ID",
            "AzureWebJobsStorage",
            "TASK_HUB_NAME",
        ]) {
            expect(error.message).toContain(`${name}:`);
        }
        expect(error.problems).toHaveLength(7);
    });

    it("treats blank values as missing", () => {
        const error = problemsOf({ ...valid, INTAKE_SHEET_ID: "   " });
        expect(error.problems).toEqual([expect.stringMatching(/^INTAKE_SHEET_ID: /)]);
    });

    it("says what is wrong with each bad value and what it means", () => {
        const error = problemsOf({
            ...valid,
            INTAKE_SHEET_ID: "sheet-one",
            PROVISION_QUEUE: "Provision_Jobs",
            STALE_AFTER_MINUTES: "0",
            INTAKE_SWEEP_SCHEDULE: "*/5 * * * *",
            INTAKE_FULL_SWEEP_SCHEDULE: "nightly",
            SMARTSHEET_BASE_URL: "not a url",
            ALERT_WEBHOOK_URL: "http://alerts.example.com/hook",
        });
        expect(error.problems).toHaveLength(7);
        expect(error.message).toMatch(/INTAKE_SHEET_ID: expected the numeric Smartsheet id of the intake sheet/);
        expect(error.message).toMatch(/PROVISION_QUEUE: expected 3–53 lowercase letters/);
        expect(error.message).toMatch(/STALE_AFTER_MINUTES: expected minutes, e.g. 15/);
        expect(error.message).toMatch(/INTAKE_SWEEP_SCHEDULE: expected a 6-field NCRONTAB schedule/);
        expect(error.message).toMatch(/INTAKE_FULL_SWEEP_SCHEDULE: expected a 6-field NCRONTAB schedule, e\.g\. 0 \*\/5 \* \* \* \* \(NCRONTAB schedule of the full intake sweep/);
        expect(error.message).toMatch(/SMARTSHEET_BASE_URL: expected an absolute URL/);
        expect(error.message).toMatch(/ALERT_WEBHOOK_URL: expected an https URL/);
    });

    it("adds the trailing slash the SDK needs to the base URL", () => {
        expect(loadConfig({ ...valid, SMARTSHEET_BASE_URL: "http://127.0.0.1:7072/2.0" }).SMARTSHEET_BASE_URL).toBe(
            "http://127.0.0.1:7072/2.0/",
        );
    });

    it("never puts the token into an error, even when the token itself is a bad value elsewhere", () => {
        const error = problemsOf({ ...valid, INTAKE_SHEET_ID: TOKEN, JOBS_TABLE: TOKEN, MAX_RECOVERIES: TOKEN, SMARTSHEET_BASE_URL: TOKEN });
        expect(error.problems.length).toBeGreaterThanOrEqual(3);
        expect(error.message).not.toContain(TOKEN);
        expect(JSON.stringify(error)).not.toContain(TOKEN);
    });

    it("describes the configuration for the log by allow-list: every form of secret is withheld", () => {
        const secrets = {
            accountKey: "c2VjcmV0S2V5IGZvciB0ZXN0cw==",
            sas: "sv=2024-11-04&ss=tq&srt=sco&sp=rwdlacu&se=2030-01-01T00:00:00Z&sig=R2VoZWltbmlz%3D",
            endpointSas: "sig=RW5kcG9pbnRTYXM%3D",
            webhookUser: "hookuser",
            webhookPassword: "hookpass1234",
            webhookPathKey: "B0ABCDEF/XyZsecretPathKey123",
            webhookQuery: "code=QueryKey987",
        };
        const shown = JSON.stringify(
            describeConfig(
                loadConfig({
                    ...valid,
                    AzureWebJobsStorage:
                        `DefaultEndpointsProtocol=https;AccountName=sheetwrightprod;AccountKey=${secrets.accountKey};` +
                        `SharedAccessSignature=${secrets.sas};TableEndpoint=https://sheetwrightprod.table.core.windows.net/?${secrets.endpointSas};` +
                        `EndpointSuffix=core.windows.net`,
                    SMARTSHEET_BASE_URL: "https://api.smartsheet.eu/2.0/",
                    ALERT_WEBHOOK_URL: `https://${secrets.webhookUser}:${secrets.webhookPassword}@hooks.example.com/services/T01/${secrets.webhookPathKey}?${secrets.webhookQuery}`,
                }),
            ),
        );
        for (const secret of [TOKEN, ...Object.values(secrets)]) expect(shown).not.toContain(secret);
        for (const part of ["R2VoZWltbmlz", "RW5kcG9pbnRTYXM", "XyZsecretPathKey123", "QueryKey987"]) expect(shown).not.toContain(part);
        expect(shown).toContain('"SMARTSHEET_ACCESS_TOKEN":"(set)"');
        expect(shown).toContain("AccountName=sheetwrightprod");
        expect(shown).toContain("TableEndpoint=https://sheetwrightprod.table.core.windows.net/…");
        expect(shown).toContain('"ALERT_WEBHOOK_URL":"https://hooks.example.com/…"');
        expect(shown).toContain('"SMARTSHEET_BASE_URL":"https://api.smartsheet.eu/…"');
        expect(shown).toContain('"INTAKE_SHEET_ID":4583173393803140');
        expect(shown).toContain('"INTAKE_FULL_SWEEP_SCHEDULE":"0 30 2 * * *"');
    });

    it("takes the shared budget's lease size and fallback instance count, and says what a bad one means", () => {
        expect(loadConfig(valid)).toMatchObject({ SMARTSHEET_BUDGET_LEASE_SIZE: 5, SMARTSHEET_BUDGET_FALLBACK_INSTANCES: 4 });
        const error = problemsOf({ ...valid, SMARTSHEET_BUDGET_LEASE_SIZE: "0", SMARTSHEET_BUDGET_FALLBACK_INSTANCES: "two" });
        expect(error.problems).toEqual([
            expect.stringMatching(/^SMARTSHEET_BUDGET_LEASE_SIZE: expected a whole number from 1 to 1000 \(most requests an instance takes from the shared budget/),
            expect.stringMatching(/^SMARTSHEET_BUDGET_FALLBACK_INSTANCES: expected a whole number from 1 to 1000 \(instances assumed to share the token while the storage account cannot be reached/),
        ]);
    });

    it("shows the budget settings in the start-up line, and never the token", () => {
        const shown = JSON.stringify(
            describeConfig(loadConfig({ ...valid, SMARTSHEET_BUDGET_LEASE_SIZE: "8", SMARTSHEET_BUDGET_FALLBACK_INSTANCES: "6" })),
        );
        expect(shown).toContain('"SMARTSHEET_REQUESTS_PER_MINUTE":300');
        expect(shown).toContain('"SMARTSHEET_BUDGET_LEASE_SIZE":8');
        expect(shown).toContain('"SMARTSHEET_BUDGET_FALLBACK_INSTANCES":6');
        expect(shown).toContain('"SMARTSHEET_ACCESS_TOKEN":"(set)"');
        expect(shown).not.toContain(TOKEN);
    });

    it("refuses a Smartsheet base URL or webhook over plain http except on this machine (the token would travel in clear)", () => {
        expect(problemsOf({ ...valid, SMARTSHEET_BASE_URL: "http://api.smartsheet.com/2.0/" }).problems).toEqual([
            expect.stringMatching(/^SMARTSHEET_BASE_URL: expected an https URL \(plain http only on 127.0.0.1, \[::1\] or localhost\)/),
        ]);
        expect(problemsOf({ ...valid, ALERT_WEBHOOK_URL: "http://hooks.example.com/x" }).problems).toEqual([
            expect.stringMatching(/^ALERT_WEBHOOK_URL: expected an https URL/),
        ]);
        for (const local of ["http://127.0.0.1:7072/2.0/", "http://localhost:7072/2.0/", "http://[::1]:7072/2.0/"]) {
            expect(loadConfig({ ...valid, SMARTSHEET_BASE_URL: local }).SMARTSHEET_BASE_URL).toBe(local);
        }
        expect(() => loadConfig({ ...valid, SMARTSHEET_BASE_URL: "http://localhost.evil.example/2.0/" })).toThrow(/expected an https URL/);
    });
});

describe("WEBSITE_AUTH_ENABLED: App Service authentication, as the platform says it", () => {
    it("reads the platform's True and False, and is absent when the platform sets nothing", () => {
        expect(loadConfig({ ...valid, WEBSITE_AUTH_ENABLED: "True" }).WEBSITE_AUTH_ENABLED).toBe(true);
        expect(loadConfig({ ...valid, WEBSITE_AUTH_ENABLED: "False" }).WEBSITE_AUTH_ENABLED).toBe(false);
        expect(loadConfig(valid).WEBSITE_AUTH_ENABLED).toBeUndefined();
        expect(JSON.stringify(describeConfig(loadConfig({ ...valid, WEBSITE_AUTH_ENABLED: "True" })))).toContain('"WEBSITE_AUTH_ENABLED":"true"');
    });

    it("refuses a value the platform never sets, saying what it expects", () => {
        expect(problemsOf({ ...valid, WEBSITE_AUTH_ENABLED: "maybe" }).problems).toEqual([expect.stringMatching(/^WEBSITE_AUTH_ENABLED: expected True or False/)]);
    });
});

describe("the reaper's window against the host's functionTimeout", () => {
    const tenMinutes = { functionTimeoutMs: 600_000 };

    it("accepts a window longer than any live worker may run", () => {
        expect(loadConfig({ ...valid, STALE_AFTER_MINUTES: "15" }, tenMinutes).STALE_AFTER_MINUTES).toBe(15);
    });

    it("refuses a window that is not longer than functionTimeout, saying what to change", () => {
        const error = (() => {
            try {
                loadConfig({ ...valid, STALE_AFTER_MINUTES: "10" }, tenMinutes);
            } catch (caught) {
                return caught as ConfigError;
            }
        })();
        expect(error).toBeInstanceOf(ConfigError);
        expect(error?.problems).toEqual([
            expect.stringMatching(
                /^STALE_AFTER_MINUTES: 10 minutes is not longer than the host's functionTimeout \(600 s\) \+ the longest step retry delay \(STEP_RETRY_MAX_SECONDS, 60 s\) \+ the clock skew allowed \(MAX_CLOCK_SKEW_SECONDS, 30 s\) = 690 s.*Raise it above 11.5 minutes/,
            ),
        ]);
    });

    it("leaves room for clock skew between instances: a window only just above functionTimeout and the retry delay is refused", () => {
        // 10 min functionTimeout + 60 s retry delay = 11 min: 11.2 min leaves 12 s, less than the 30 s of skew allowed.
        expect(() => loadConfig({ ...valid, STALE_AFTER_MINUTES: "11.2" }, tenMinutes)).toThrow(/STALE_AFTER_MINUTES: 11.2 minutes/);
        expect(loadConfig({ ...valid, STALE_AFTER_MINUTES: "11.2", MAX_CLOCK_SKEW_SECONDS: "5" }, tenMinutes).STALE_AFTER_MINUTES).toBe(11.2);
    });

    it("refuses a write that cannot finish inside one activity: rate-limit retries + call timeout + settle ≥ functionTimeout", () => {
        expect(() => loadConfig({ ...valid, SMARTSHEET_RATE_LIMIT_RETRY_SECONDS: "550" }, tenMinutes)).toThrow(
            /SMARTSHEET_RATE_LIMIT_RETRY_SECONDS: one write may take 610 s \(rate-limit retries 550 s \+ call timeout 60 s\) and then settle 10 s/,
        );
    });

    it("refuses a late-write horizon shorter than one write may take from its claim, clock skew included", () => {
        expect(() => loadConfig({ ...valid, LATE_WRITE_HORIZON_SECONDS: "200" }, tenMinutes)).toThrow(/LATE_WRITE_HORIZON_SECONDS: 200 s/);
        expect(() => loadConfig({ ...valid, LATE_WRITE_HORIZON_SECONDS: "100" }, tenMinutes)).toThrow(
            /LATE_WRITE_HORIZON_SECONDS: 100 s is shorter than one write may take from its claim plus the clock skew allowed \(210 s/,
        );
    });

    it("refuses an unlimited functionTimeout, and a Smartsheet call timeout a worker cannot outlive", () => {
        expect(() => loadConfig(valid, { functionTimeoutMs: undefined })).toThrow(/host.json sets no function timeout/);
        expect(() => loadConfig({ ...valid, SMARTSHEET_CALL_TIMEOUT_SECONDS: "600" }, tenMinutes)).toThrow(
            /SMARTSHEET_CALL_TIMEOUT_SECONDS: 600 s is not shorter than the host's functionTimeout/,
        );
    });

    it("reads functionTimeout from host.json, and AzureFunctionsJobHost__functionTimeout over it", () => {
        expect(parseTimeSpan("00:10:00")).toBe(600_000);
        expect(parseTimeSpan("1.02:03:04.5")).toBe(((26 * 60 + 3) * 60 + 4) * 1000 + 500);
        expect(() => parseTimeSpan("ten minutes")).toThrow(/not a TimeSpan/);
        expect(functionTimeoutMs({})).toBe(600_000);
        expect(functionTimeoutMs({ AzureFunctionsJobHost__functionTimeout: "00:00:05" })).toBe(5_000);
        expect(functionTimeoutMs({ AzureFunctionsJobHost__functionTimeout: "-1" })).toBeUndefined();
    });
});

describe("the rate-limit deadline against the shared budget's slices", () => {
    it("refuses a deadline shorter than two slices of the budget's window, says why and what would do", () => {
        // The regression: 1.5 s of rate-limit waits against 3 s slices (a 60 s window) refused a burst unsent. The slices
        // are 1.5 s now: two of them are still more than 1.5 s.
        expect(problemsOf({ ...valid, SMARTSHEET_RATE_LIMIT_RETRY_SECONDS: "1.5" }).problems).toEqual([
            "SMARTSHEET_RATE_LIMIT_RETRY_SECONDS: 1.5 s is shorter than two slices of the shared request budget (3 s: " +
                "SMARTSHEET_RATE_LIMIT_WINDOW_SECONDS 60 s ÷ 40 × 2). The budget hands out requests a slice at a time; a request " +
                "that finds its slice spent waits for the next one, and would be refused unsent while the window still has room. " +
                "Raise it to at least 3 s, or shorten the window.",
        ]);
        expect(loadConfig({ ...valid, SMARTSHEET_RATE_LIMIT_RETRY_SECONDS: "3" }).SMARTSHEET_RATE_LIMIT_RETRY_SECONDS).toBe(3);
        expect(loadConfig({ ...valid, SMARTSHEET_RATE_LIMIT_RETRY_SECONDS: "1.5", SMARTSHEET_RATE_LIMIT_WINDOW_SECONDS: "15" }).SMARTSHEET_RATE_LIMIT_WINDOW_SECONDS).toBe(15);
        expect(problemsOf({ ...valid, SMARTSHEET_RATE_LIMIT_RETRY_SECONDS: "5", SMARTSHEET_RATE_LIMIT_WINDOW_SECONDS: "120" }).problems).toEqual([
            expect.stringMatching(/^SMARTSHEET_RATE_LIMIT_RETRY_SECONDS: 5 s is shorter than two slices of the shared request budget \(6 s: /),
        ]);
    });

    it("is met by every set of settings the tests, the benchmark and chaos run the app with", () => {
        const sets: Record<string, Record<string, string>> = {
            "the e2e tests": E2E_TIMING,
            FAST_RECOVERY: { ...E2E_TIMING, ...FAST_RECOVERY },
            "the backlog e2e test": { ...E2E_TIMING, ...FAST_RECOVERY, SMARTSHEET_REQUESTS_PER_MINUTE: "240" },
            COMPRESSED_PRODUCTION,
            SHRUNK_RECOVERY,
            // A plan's copy settle is 0 or 1 s.
            chaos: { ...CHAOS_HOST_TIMING, COPY_SETTLE_SECONDS: "1" },
            "local.settings.example.json": (JSON.parse(readFileSync("local.settings.example.json", "utf8")) as { Values: Record<string, string> }).Values,
        };
        for (const [name, settings] of Object.entries(sets)) {
            const env = { ...settings, ...valid };
            expect(() => loadConfig(env, { functionTimeoutMs: functionTimeoutMs(env) }), name).not.toThrow();
        }
    });
});

describe("timing derived from the settings", () => {
    it("gives a claim the whole lifetime of one write — rate-limit waits and re-sends, the call timeout, the settle — plus clock skew", () => {
        const config = loadConfig(valid);
        expect(timingOf(config)).toEqual({ writeLifetimeMs: 180_000, claimTtlMs: 220_000, lateWriteHorizonMs: 330_000, settleMs: 10_000, clockSkewMs: 30_000 });
    });

    it("takes LATE_WRITE_HORIZON_SECONDS as set, in seconds with decimals", () => {
        expect(timingOf(loadConfig({ ...valid, LATE_WRITE_HORIZON_SECONDS: "400.5" })).lateWriteHorizonMs).toBe(400_500);
    });
});

describe("SITES: several customers from one deployment", () => {
    const ACME_TOKEN = "acmetoken0123456789abcdefghij";
    const GLOBEX_TOKEN = "globextoken0123456789abcdefgh";
    const acme = ACME_SITE;
    const globex = {
        name: "globex",
        intakeSheetId: "5583173393803140",
        templateFolderId: "5234567890123456",
        productsFolderId: "6234567890123456",
        filingIndexSheetId: "7234567890123456",
        tokenSetting: "SMARTSHEET_TOKEN_GLOBEX",
    };
    const shared = { AzureWebJobsStorage: "UseDevelopmentStorage=true", TASK_HUB_NAME: "Sheetwright" };
    const withSites = (sites: unknown, extra: Record<string, string> = {}) => ({
        ...shared,
        SITES: typeof sites === "string" ? sites : JSON.stringify(sites),
        SMARTSHEET_TOKEN_ACME: ACME_TOKEN,
        SMARTSHEET_TOKEN_GLOBEX: GLOBEX_TOKEN,
        ...extra,
    });

    it("reads every site, ids as numbers or digit strings, each with the token of the setting it names", () => {
        const config = loadConfig(withSites([acme, globex]));
        expect(config.sites).toEqual([
            { ...acme, token: ACME_TOKEN },
            {
                name: "globex",
                intakeSheetId: 5583173393803140,
                templateFolderId: 5234567890123456,
                productsFolderId: 6234567890123456,
                filingIndexSheetId: 7234567890123456,
                tokenSetting: "SMARTSHEET_TOKEN_GLOBEX",
                token: GLOBEX_TOKEN,
            },
        ]);
    });

    it("lets sites share one token setting (they then share its rate budget) and SMARTSHEET_ACCESS_TOKEN be one of them", () => {
        const config = loadConfig(withSites([{ ...acme, tokenSetting: "SMARTSHEET_ACCESS_TOKEN" }, { ...globex, tokenSetting: "SMARTSHEET_ACCESS_TOKEN" }], { SMARTSHEET_ACCESS_TOKEN: TOKEN }));
        expect(config.sites.map((site) => site.token)).toEqual([TOKEN, TOKEN]);
    });

    it("reads the single-site settings as one site named default, its token from SMARTSHEET_ACCESS_TOKEN", () => {
        expect(loadConfig(valid).sites).toEqual([
            {
                name: "default",
                intakeSheetId: 4583173393803140,
                templateFolderId: 1234567890123456,
                productsFolderId: 2234567890123456,
                filingIndexSheetId: 3234567890123456,
                tokenSetting: "SMARTSHEET_ACCESS_TOKEN",
                token: TOKEN,
            },
        ]);
    });

    it("names every problem of every site at once, by where it is", () => {
        const error = problemsOf(
            withSites([
                { ...acme, name: "Acme Corp", templateFolderId: "templates" },
                { ...globex, intakeSheetId: undefined, tokenSetting: "smartsheet_token_globex" },
                { ...globex, name: "initech", productsFolderId: -3, filingIndexSheetId: 1.5, colour: "blue" },
                { ...acme, name: "hooli", intakeSheetId: 1, productsFolderId: 2, filingIndexSheetId: 3, tokenSetting: "JOBS_TABLE" },
            ]),
        );
        expect(error.problems).toEqual([
            expect.stringMatching(/^SITES\[0\]\.name: expected 1–40 lowercase letters, digits and inner hyphens, e\.g\. acme$/),
            "SITES[0].templateFolderId: expected the numeric Smartsheet id of the site's template folder",
            "SITES[1].intakeSheetId: expected the numeric Smartsheet id of the site's intake sheet",
            expect.stringMatching(/^SITES\[1\]\.tokenSetting: expected the name of the app setting that holds the site's token, in capitals.*never the token itself/),
            "SITES[2].productsFolderId: expected the numeric Smartsheet id of the site's products folder",
            "SITES[2].filingIndexSheetId: expected the numeric Smartsheet id of the site's Filing Index sheet",
            expect.stringMatching(/^SITES\[2\]: unexpected colour: a site has only name, intakeSheetId, .*tokenSetting/),
            "SITES[3].tokenSetting: names Sheetwright's own setting JOBS_TABLE (app setting names are case-insensitive on Windows plans); " +
                "keep the site's token in its own app setting named SMARTSHEET_TOKEN_<SITE>, e.g. SMARTSHEET_TOKEN_ACME, and put that name here",
        ]);
    });

    it("regression #18.13 a token setting names another secret on a case-insensitive plan: it is refused, saying what to rename", () => {
        const STORAGE = "DefaultEndpointsProtocol=https;AccountName=prod;AccountKey=c3RvcmFnZS1rZXktdGhhdC1tdXN0LW5vdC1sZWF2ZQ==";
        // process.env on Windows: any capitalisation of a name reads the same setting.
        const windowsEnv = (settings: Record<string, string>): NodeJS.ProcessEnv =>
            new Proxy(settings, {
                get: (target, name) => (typeof name === "string" ? Object.entries(target).find(([key]) => key.toUpperCase() === name.toUpperCase())?.[1] : undefined),
            });
        const refused = (tokenSetting: string) => {
            try {
                loadConfig(windowsEnv(withSites([{ ...acme, tokenSetting }], { AzureWebJobsStorage: STORAGE, FUNCTIONS_WORKER_RUNTIME: "node", WEBSITE_AUTH_ENCRYPTION_KEY: "K3y" })));
            } catch (error) {
                if (error instanceof ConfigError) return error;
                throw error;
            }
            throw new Error(`SITES with tokenSetting ${tokenSetting} was accepted`);
        };
        const storage = refused("AZUREWEBJOBSSTORAGE");
        expect(storage.problems).toEqual([
            "SITES[0].tokenSetting: names Sheetwright's own setting AzureWebJobsStorage (app setting names are case-insensitive on Windows plans); " +
                "keep the site's token in its own app setting named SMARTSHEET_TOKEN_<SITE>, e.g. SMARTSHEET_TOKEN_ACME, and put that name here",
        ]);
        expect(storage.message).not.toContain(STORAGE);
        expect(refused("SMARTSHEET_BASE_URL").problems).toEqual([expect.stringMatching(/^SITES\[0\]\.tokenSetting: names Sheetwright's own setting SMARTSHEET_BASE_URL /)]);
        for (const platform of ["FUNCTIONS_WORKER_RUNTIME", "WEBSITE_AUTH_ENCRYPTION_KEY", "AZUREWEBJOBSSECRETSTORAGETYPE", "APPLICATIONINSIGHTS_CONNECTION_STRING", "AZURE_CLIENT_SECRET"]) {
            expect(refused(platform).problems).toEqual([
                expect.stringMatching(/^SITES\[0\]\.tokenSetting: names a setting of the Functions host or Azure \(.*…; app setting names are case-insensitive on Windows plans\), whose value would be sent to Smartsheet as the token; keep the site's token in its own app setting named SMARTSHEET_TOKEN_<SITE>/),
            ]);
        }
        for (const elsewhere of ["ACME_TOKEN", "SMARTSHEET_TOKEN_", "TOKEN_SMARTSHEET_TOKEN_ACME"]) {
            expect(refused(elsewhere).problems).toEqual([
                `SITES[0].tokenSetting: expected a name starting with SMARTSHEET_TOKEN_ (or SMARTSHEET_ACCESS_TOKEN), so that it can name no other setting; ` +
                    `rename the app setting ${elsewhere} to SMARTSHEET_TOKEN_<SITE>, e.g. SMARTSHEET_TOKEN_ACME, and put that name here`,
            ]);
        }
        const config = loadConfig(windowsEnv(withSites([acme, { ...globex, tokenSetting: "SMARTSHEET_ACCESS_TOKEN" }], { AzureWebJobsStorage: STORAGE, SMARTSHEET_ACCESS_TOKEN: TOKEN })));
        expect(config.sites.map((site) => [site.tokenSetting, site.token])).toEqual([
            ["SMARTSHEET_TOKEN_ACME", ACME_TOKEN],
            ["SMARTSHEET_ACCESS_TOKEN", TOKEN],
        ]);
    });

    it("refuses two sites on one intake sheet, products folder or Filing Index, and two sites of one name, saying why", () => {
        const error = problemsOf(withSites([acme, { ...acme, tokenSetting: "SMARTSHEET_TOKEN_GLOBEX" }, { ...globex, name: "acme2", productsFolderId: acme.productsFolderId }]));
        expect(error.problems).toEqual([
            'SITES: two sites are named "acme"; site names must be distinct',
            `SITES: sites "acme" and "acme" share the intake sheet ${acme.intakeSheetId}; give each its own (a job's intake sheet names its site)`,
            expect.stringMatching(new RegExp(`^SITES: sites "acme" and "acme" share the products folder ${acme.productsFolderId}; give each its own \\(product codes are unique per intake sheet only`)),
            expect.stringMatching(new RegExp(`^SITES: sites "acme" and "acme2" share the products folder ${acme.productsFolderId}`)),
            expect.stringMatching(new RegExp(`^SITES: sites "acme" and "acme" share the Filing Index ${acme.filingIndexSheetId}`)),
        ]);
    });

    it("names a missing token setting, and what to add", () => {
        const { SMARTSHEET_TOKEN_GLOBEX: _, ...env } = withSites([acme, globex]);
        expect(problemsOf(env).problems).toEqual([
            'SMARTSHEET_TOKEN_GLOBEX: missing: site "globex" in SITES takes its Smartsheet token from this app setting; add it (a Key Vault reference is fine)',
        ]);
    });

    it("refuses SITES beside the single-site ids, naming the ones to remove", () => {
        const error = problemsOf(withSites([acme], { INTAKE_SHEET_ID: "4583173393803140", FILING_INDEX_SHEET_ID: "3234567890123456" }));
        expect(error.problems).toEqual([
            "SITES: remove INTAKE_SHEET_ID, FILING_INDEX_SHEET_ID: with SITES every site's ids are in its entry (or remove SITES to serve one site from the single-site settings)",
        ]);
    });

    it("refuses SITES that is not a JSON list of sites without quoting it (it may hold a pasted secret), and an empty list", () => {
        const pasted = `[{"name":"acme","token":"${ACME_TOKEN}"`;
        const broken = problemsOf(withSites(pasted));
        expect(broken.problems).toEqual([expect.stringMatching(/^SITES: is not valid JSON; expected a list such as \[\{"name":"acme"/)]);
        expect(broken.message).not.toContain(ACME_TOKEN);
        expect(problemsOf(withSites({ name: "acme" })).problems).toEqual([expect.stringMatching(/^SITES: expected a JSON list of sites, such as \[/)]);
        expect(problemsOf(withSites([])).problems).toEqual(["SITES: expected at least one site"]);
    });

    it("refuses a token written into SITES, and never shows any site's token in an error", () => {
        const error = problemsOf(withSites([{ ...acme, token: ACME_TOKEN }, globex], { JOBS_TABLE: GLOBEX_TOKEN, MAX_RECOVERIES: ACME_TOKEN }));
        expect(error.problems).toContainEqual(expect.stringMatching(/^SITES\[0\]: unexpected token: .*a token stays in its own app setting, named by tokenSetting/));
        expect(error.message).not.toContain(ACME_TOKEN);
        expect(error.message).not.toContain(GLOBEX_TOKEN);
    });

    it("shows SITES in the start-up line with each site's ids and token setting, never a token", () => {
        const shown = describeConfig(loadConfig(withSites([acme, globex], { SMARTSHEET_ACCESS_TOKEN: TOKEN })));
        expect(shown.SITES).toEqual([
            { ...acme },
            { ...acme, ...{ name: "globex", intakeSheetId: 5583173393803140, templateFolderId: 5234567890123456, productsFolderId: 6234567890123456, filingIndexSheetId: 7234567890123456, tokenSetting: "SMARTSHEET_TOKEN_GLOBEX" } },
        ]);
        const text = JSON.stringify(shown);
        for (const secret of [TOKEN, ACME_TOKEN, GLOBEX_TOKEN]) expect(text).not.toContain(secret);
        expect(text).not.toContain('"sites"');
    });
});

describe("settings that pass here but would fail on Azure", () => {
    const identity = {
        SMARTSHEET_ACCESS_TOKEN: TOKEN,
        INTAKE_SHEET_ID: "4583173393803140",
        TEMPLATE_FOLDER_ID: "1234567890123456",
        PRODUCTS_FOLDER_ID: "2234567890123456",
        FILING_INDEX_SHEET_ID: "3234567890123456",
        TASK_HUB_NAME: "Sheetwright",
        AzureWebJobsStorage__blobServiceUri: "https://sheetwrightprod.blob.core.windows.net/",
        AzureWebJobsStorage__queueServiceUri: "https://sheetwrightprod.queue.core.windows.net/",
        AzureWebJobsStorage__tableServiceUri: "https://sheetwrightprod.table.core.windows.net/",
        AzureWebJobsStorage__credential: "managedidentity",
        AzureWebJobsStorage__clientId: "00000000-1111-2222-3333-444444444444",
    };

    it("accepts identity-based storage exactly as the infra template sets it", () => {
        expect(loadConfig(identity)).toMatchObject({ AzureWebJobsStorage__credential: "managedidentity", AzureWebJobsStorage__clientId: identity.AzureWebJobsStorage__clientId });
    });

    it("refuses queue and table URIs without the blob URI the Functions host needs, naming the setting to add", () => {
        const { AzureWebJobsStorage__blobServiceUri: _blob, ...withoutBlob } = identity;
        expect(problemsOf(withoutBlob).problems).toEqual([
            expect.stringMatching(
                /^AzureWebJobsStorage__blobServiceUri: missing: .*add AzureWebJobsStorage__blobServiceUri=https:\/\/sheetwrightprod\.blob\.core\.windows\.net/,
            ),
        ]);
    });

    it("derives the missing URIs from the one given, in its own cloud", () => {
        const problems = problemsOf({ ...valid, AzureWebJobsStorage: "", AzureWebJobsStorage__tableServiceUri: "https://acct.table.core.usgovcloudapi.net/" }).problems;
        expect(problems).toEqual([
            "AzureWebJobsStorage__blobServiceUri, AzureWebJobsStorage__queueServiceUri: missing: with service URIs the Functions host needs all three " +
                "(it keeps its locks, timer state and Durable Functions' leases in blobs); add AzureWebJobsStorage__blobServiceUri=https://acct.blob.core.usgovcloudapi.net " +
                "and AzureWebJobsStorage__queueServiceUri=https://acct.queue.core.usgovcloudapi.net, or give AzureWebJobsStorage__accountName instead of the URIs",
        ]);
    });

    it("accepts __credential in any case, as the host does, and refuses any other credential", () => {
        expect(loadConfig({ ...identity, AzureWebJobsStorage__credential: "ManagedIdentity" }).AzureWebJobsStorage__credential).toBe("managedidentity");
        expect(problemsOf({ ...identity, AzureWebJobsStorage__credential: "clientsecret" }).problems).toEqual([
            expect.stringMatching(/^AzureWebJobsStorage__credential: expected managedidentity \(any case\)/),
        ]);
    });

    it("refuses a user-assigned identity named both by client id and by resource id", () => {
        const resourceId = "/subscriptions/0000/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/id-sheetwright";
        expect(problemsOf({ ...identity, AzureWebJobsStorage__managedIdentityResourceId: resourceId }).problems).toEqual([
            expect.stringMatching(/^AzureWebJobsStorage__managedIdentityResourceId: set together with AzureWebJobsStorage__clientId; .*remove either/),
        ]);
        const { AzureWebJobsStorage__clientId: _clientId, ...byResourceId } = identity;
        expect(loadConfig({ ...byResourceId, AzureWebJobsStorage__managedIdentityResourceId: resourceId }).AzureWebJobsStorage__managedIdentityResourceId).toBe(resourceId);
        expect(problemsOf({ ...byResourceId, AzureWebJobsStorage__managedIdentityResourceId: "00000000-1111" }).problems).toEqual([
            expect.stringMatching(/^AzureWebJobsStorage__managedIdentityResourceId: expected the resource id of a user-assigned identity/),
        ]);
    });

    it("refuses a token that is still an unresolved Key Vault reference, saying how to make it resolve", () => {
        const reference = "@Microsoft.KeyVault(SecretUri=https://kv-sheetwright.vault.azure.net/secrets/smartsheet-token-acme/)";
        const single = problemsOf({ ...valid, SMARTSHEET_ACCESS_TOKEN: reference }).problems;
        expect(single).toEqual([expect.stringMatching(/^SMARTSHEET_ACCESS_TOKEN: is still the Key Vault reference.*"Key Vault Secrets User".*Environment variables blade/)]);
        const sites = JSON.stringify([ACME_SITE]);
        const multi = problemsOf({ AzureWebJobsStorage: "UseDevelopmentStorage=true", TASK_HUB_NAME: "Sheetwright", SITES: sites, SMARTSHEET_TOKEN_ACME: ` ${reference}` });
        expect(multi.problems).toEqual([expect.stringMatching(/^SMARTSHEET_TOKEN_ACME: is still the Key Vault reference, not site "acme"'s token/)]);
    });

    it("parses every schedule, naming the field out of range, and refuses one that never occurs", () => {
        const error = problemsOf({ ...valid, INTAKE_SWEEP_SCHEDULE: "99 99 99 * * *", REAPER_SCHEDULE: "0 0 0 * 13 *", INTAKE_FULL_SWEEP_SCHEDULE: "0 0 0 30 2 *" });
        expect(error.problems).toEqual([
            expect.stringMatching(/^INTAKE_SWEEP_SCHEDULE: '99 99 99 \* \* \*' is not a valid NCRONTAB expression: Second field '99' is out of range: 99 is outside 0-59/),
            expect.stringMatching(/^INTAKE_FULL_SWEEP_SCHEDULE: .*no occurrence.*February 30th/),
            expect.stringMatching(/^REAPER_SCHEDULE: .*Month field '13' is out of range/),
        ]);
        expect(problemsOf({ ...valid, REAPER_SCHEDULE: "0 */5 * * * MON-FRY" }).problems).toEqual([expect.stringMatching(/^REAPER_SCHEDULE: .*DayOfWeek field 'MON-FRY' has an invalid value 'FRY'/)]);
    });

    it("takes WEBSITE_TIME_ZONE as an IANA or a common Windows id, and refuses one that names no zone", () => {
        expect(loadConfig({ ...valid, WEBSITE_TIME_ZONE: "Europe/Berlin" }).WEBSITE_TIME_ZONE).toBe("Europe/Berlin");
        expect(loadConfig({ ...valid, WEBSITE_TIME_ZONE: "W. Europe Standard Time" }).WEBSITE_TIME_ZONE).toBe("W. Europe Standard Time");
        expect(loadConfig(valid).WEBSITE_TIME_ZONE).toBeUndefined();
        expect(problemsOf({ ...valid, WEBSITE_TIME_ZONE: "Middle Earth Standard Time" }).problems).toEqual([
            expect.stringMatching(/^WEBSITE_TIME_ZONE: "Middle Earth Standard Time" is neither an IANA time-zone id .* use the IANA id/),
        ]);
        expect(problemsOf({ ...valid, WEBSITE_TIME_ZONE: "Europe/Atlantis" }).problems).toHaveLength(1);
    });

    it("refuses WEBSITE_TIME_ZONE on Flex Consumption and Linux Consumption, where Azure ignores it, saying what to do instead", () => {
        const flex = problemsOf({ ...valid, WEBSITE_TIME_ZONE: "Europe/Berlin", WEBSITE_SKU: "FlexConsumption" }).problems;
        expect(flex).toEqual([expect.stringMatching(/^WEBSITE_TIME_ZONE: Flex Consumption ignores it, so the timers would run in UTC, not in Europe\/Berlin\. Remove it and write .* in UTC/)]);
        const linux = problemsOf({ ...valid, WEBSITE_TIME_ZONE: "Europe/Berlin", WEBSITE_SKU: "Dynamic", CONTAINER_NAME: "sheetwright_abc" }).problems;
        expect(linux).toEqual([expect.stringMatching(/^WEBSITE_TIME_ZONE: Linux Consumption ignores it/)]);
        expect(loadConfig({ ...valid, WEBSITE_TIME_ZONE: "Europe/Berlin", WEBSITE_SKU: "ElasticPremium" }).WEBSITE_TIME_ZONE).toBe("Europe/Berlin");
        expect(loadConfig({ ...valid, WEBSITE_SKU: "FlexConsumption" }).WEBSITE_TIME_ZONE).toBeUndefined();
    });
});

describe("the alert webhook's format and signing secret", () => {
    it("writes json unless ALERT_WEBHOOK_FORMAT says slack or teams, and refuses anything else with the choices", () => {
        expect(loadConfig(valid).ALERT_WEBHOOK_FORMAT).toBe("json");
        expect(loadConfig({ ...valid, ALERT_WEBHOOK_FORMAT: "teams" }).ALERT_WEBHOOK_FORMAT).toBe("teams");
        expect(problemsOf({ ...valid, ALERT_WEBHOOK_FORMAT: "discord" }).problems).toEqual([expect.stringMatching(/^ALERT_WEBHOOK_FORMAT: must be one of json, slack, teams/)]);
    });

    it("refuses a signing secret shorter than 32 characters without quoting it, and never shows one", () => {
        const short = "short-but-secret-1234";
        const refused = problemsOf({ ...valid, ALERT_WEBHOOK_SIGNING_SECRET: short });
        expect(refused.problems).toEqual([expect.stringMatching(/^ALERT_WEBHOOK_SIGNING_SECRET: must be at least 32 characters \(generate one: openssl rand -hex 32\)/)]);
        expect(refused.message).not.toContain(short);
        const secret = "0123456789abcdef0123456789abcdef-SECRET";
        const config = loadConfig({ ...valid, ALERT_WEBHOOK_SIGNING_SECRET: secret });
        expect(config.ALERT_WEBHOOK_SIGNING_SECRET).toBe(secret);
        expect(describeConfig(config).ALERT_WEBHOOK_SIGNING_SECRET).toBe("(set)");
        expect(JSON.stringify(describeConfig(config))).not.toContain(secret);
    });
});

describe("the webhook settings", () => {
    const KEY = "fn-key-0123456789abcdefSECRET";

    it("gives every site WEBHOOK_BASE_URL (a site in SITES may name its own), shows only its origin and never the key", () => {
        const config = loadConfig({ ...valid, WEBHOOK_BASE_URL: "https://sheetwright.azurewebsites.net", WEBHOOK_FUNCTION_KEY: KEY });
        expect(config.sites[0]!.webhookBaseUrl).toBe("https://sheetwright.azurewebsites.net/");
        expect(config.WEBHOOK_COALESCE_SECONDS).toBe(5);
        const shown = JSON.stringify(describeConfig(config));
        expect(shown).not.toContain(KEY);
        expect(describeConfig(config).WEBHOOK_FUNCTION_KEY).toBe("(set)");

        const sites = JSON.stringify([
            { ...ACME_SITE, webhookBaseUrl: "https://acme-hooks.example.com:8443" },
            { ...ACME_SITE, name: "globex", intakeSheetId: 5583173393803140, productsFolderId: 6234567890123456, filingIndexSheetId: 7234567890123456, tokenSetting: "SMARTSHEET_TOKEN_GLOBEX" },
        ]);
        const multi = loadConfig({ AzureWebJobsStorage: "UseDevelopmentStorage=true", TASK_HUB_NAME: "Sheetwright", SITES: sites, SMARTSHEET_TOKEN_ACME: TOKEN, SMARTSHEET_TOKEN_GLOBEX: TOKEN, WEBHOOK_BASE_URL: "https://sheetwright.azurewebsites.net/", WEBHOOK_FUNCTION_KEY: KEY });
        expect(multi.sites.map((site) => site.webhookBaseUrl)).toEqual(["https://acme-hooks.example.com:8443/", "https://sheetwright.azurewebsites.net/"]);
    });

    it("refuses a webhook base URL without the function key its callbacks need, naming what to do and never the key", () => {
        expect(problemsOf({ ...valid, WEBHOOK_BASE_URL: "https://sheetwright.azurewebsites.net" }).message).toMatch(/WEBHOOK_FUNCTION_KEY: missing: .*Function Keys blade/);
    });

    it("refuses a callback port Smartsheet never calls, a query in the base URL, plain http off this machine, and a key that is not one", () => {
        const message = (env: Record<string, string>) => problemsOf({ ...valid, WEBHOOK_FUNCTION_KEY: KEY, ...env }).message;
        expect(message({ WEBHOOK_BASE_URL: "https://sheetwright.example.com:7071" })).toMatch(/WEBHOOK_BASE_URL: expected port 443, 8000, 8008, 8080 or 8443/);
        expect(message({ WEBHOOK_BASE_URL: "https://sheetwright.example.com/?code=abc" })).toMatch(/WEBHOOK_BASE_URL: expected the app's base URL alone/);
        expect(message({ WEBHOOK_BASE_URL: "http://sheetwright.example.com" })).toMatch(/WEBHOOK_BASE_URL: expected an https URL/);
        const badKey = problemsOf({ ...valid, WEBHOOK_BASE_URL: "https://sheetwright.azurewebsites.net", WEBHOOK_FUNCTION_KEY: "short SECRET" }).message;
        expect(badKey).toMatch(/WEBHOOK_FUNCTION_KEY: expected a function key/);
        expect(badKey).not.toContain("short SECRET");
    });
});
