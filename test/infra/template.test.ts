import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig, SETTINGS } from "../../src/shared/config";
import { functionTimeoutMs } from "../../src/shared/hostTimeout";
import { appSettingsOf, TOKEN_SECRET_NAME_BICEP, type Deployment, type TemplateSetting } from "./appSettings";
import { entryValue, objectLiteralsIn, parseBicep, readBicepTree, stringLiteral, stringLiteralsIn, type BicepFile } from "./bicepReader";
import builtInRoles from "./builtInRoles.json";
import pinned from "./pinned.json";
import { parseYamlSubset } from "./yamlSubset";
import { ACME_SITE, GLOBEX_SITE } from "../helpers/exampleSites";

const root = path.resolve(__dirname, "..", "..");
const infra = path.join(root, "infra");
const files = readBicepTree(infra);
const file = (relative: string): BicepFile => {
    const found = files.find((candidate) => candidate.path === path.join(infra, relative));
    if (!found) throw new Error(`infra/${relative} is missing`);
    return found;
};
const main = file("main.bicep");
const api = file("app/api.bicep");
const resources = files.flatMap((bicep) => bicep.resources);
const modules = files.flatMap((bicep) => bicep.modules);
const moduleParams = (symbol: string, bicep: BicepFile = main): string => {
    const module = bicep.modules.find((candidate) => candidate.symbol === symbol);
    if (!module) throw new Error(`${bicep.path} has no module ${symbol}`);
    return entryValue(objectLiteralsIn(module.body)[0]!, "params")!;
};
const bodyOf = (resource: { body: string }) => objectLiteralsIn(resource.body)[0]!;

/** Two customer sites as an operator would list them in SHEETWRIGHT_SITES (the README's example). */
const SITES = [ACME_SITE, GLOBEX_SITE];
const storageDeployment: Deployment = { params: { sites: SITES, durableBackend: "azureStorage" } };
const schedulerDeployment: Deployment = { params: { sites: SITES, durableBackend: "durableTaskScheduler", appAlertWebhookUrl: "https://hooks.example.com/x" } };

/** What the platform sets beside the app settings, on Flex Consumption. */
const PLATFORM = { WEBSITE_SKU: "FlexConsumption" };

/** The settings as the app reads them: the platform has resolved each Key Vault reference to the secret. */
function asTheAppReadsThem(settings: TemplateSetting[]): Record<string, string> {
    const env: Record<string, string> = { ...PLATFORM };
    for (const setting of settings) {
        env[setting.name] = setting.value.startsWith("@Microsoft.KeyVault(") ? `resolved-token-for-${setting.name}` : setting.value;
    }
    return env;
}

const hostLimits = { functionTimeoutMs: functionTimeoutMs({}, path.join(root, "host.json")) };

describe("the Bicep reader", () => {
    it("reads every .bicep file under infra/ (each parses: brackets and strings balance)", () => {
        expect(files.map((bicep) => path.relative(infra, bicep.path)).sort()).toEqual(
            ["app/alerts.bicep", "app/api.bicep", "app/dts.bicep", "app/keyvault.bicep", "app/names.bicep", "app/rbac.bicep", "main.bicep"].sort(),
        );
        expect(resources.length).toBeGreaterThan(10);
    });

    it("refuses a file whose brackets do not balance rather than misread it", () => {
        expect(() => parseBicep("broken.bicep", "resource x 'Microsoft.Foo/bars@2020-01-01' = {\n  name: 'x'\n")).toThrow(/unbalanced/);
        expect(() => parseBicep("broken.bicep", "var x = 'no end\n")).toThrow(/unterminated string/);
    });
});

describe("resource types, API versions and modules", () => {
    it("declares only resource types and API versions pinned in test/infra/pinned.json, and every pin is used", () => {
        const pins = pinned.resourceTypes as Record<string, { apiVersion: string }>;
        const unpinned = resources
            .filter((resource) => pins[resource.type]?.apiVersion !== resource.apiVersion)
            .map((resource) => `${path.relative(root, resource.file)}:${resource.line} ${resource.type}@${resource.apiVersion}`);
        expect(unpinned).toEqual([]);
        const used = new Set(resources.map((resource) => resource.type));
        expect(Object.keys(pins).filter((type) => !used.has(type))).toEqual([]);
    });

    it("uses only pinned Azure Verified Modules and local modules that exist", () => {
        const pins = pinned.modules as Record<string, { version: string }>;
        const problems: string[] = [];
        const usedRegistryModules = new Set<string>();
        for (const module of modules) {
            if (module.target.startsWith("br/public:")) {
                const at = module.target.lastIndexOf(":");
                const [name, version] = [module.target.slice(0, at), module.target.slice(at + 1)];
                usedRegistryModules.add(name);
                if (pins[name]?.version !== version) problems.push(`${module.target} is not pinned (pinned: ${pins[name]?.version ?? "none"})`);
            } else if (!existsSync(path.resolve(path.dirname(module.file), module.target))) {
                problems.push(`${path.relative(root, module.file)}:${module.line} refers to ${module.target}, which does not exist`);
            }
        }
        expect(problems).toEqual([]);
        expect(Object.keys(pins).filter((name) => !usedRegistryModules.has(name))).toEqual([]);
    });

    it("runs the app on a Flex Consumption plan (FC1) with Node 22", () => {
        const plan = moduleParams("appServicePlan");
        const sku = entryValue(plan, "sku")!;
        expect(stringLiteral(entryValue(sku, "name")!)).toBe("FC1");
        expect(stringLiteral(entryValue(sku, "tier")!)).toBe("FlexConsumption");
        const site = moduleParams("api", api);
        const runtime = entryValue(entryValue(entryValue(site, "functionAppConfig")!, "runtime") ?? "{}", "name");
        expect(stringLiteral(runtime!)).toBe("node");
        expect(stringLiteral(entryValue(entryValue(entryValue(site, "functionAppConfig")!, "runtime")!, "version")!)).toBe("22");
        expect(stringLiteral(entryValue(site, "kind")!)).toBe("functionapp,linux");
    });

    it("gives the app the user-assigned identity only, for its package, its Key Vault references and everything else", () => {
        const site = moduleParams("api", api);
        const identities = entryValue(site, "managedIdentities")!;
        expect(entryValue(identities, "systemAssigned")).toBe("false");
        expect(entryValue(identities, "userAssignedResourceIds")!.replace(/\s+/g, " ")).toBe("[ identityId ]");
        expect(entryValue(site, "keyVaultAccessIdentityResourceId")).toBe("identityId");
        const authentication = entryValue(entryValue(entryValue(entryValue(site, "functionAppConfig")!, "deployment")!, "storage")!, "authentication")!;
        expect(stringLiteral(entryValue(authentication, "type")!)).toBe("UserAssignedIdentity");
        expect(entryValue(site, "appSettingsKeyValuePairs")).toBe("appSettings");
    });
});

/** Texts that would put a key or a shared-key connection into the deployment. */
const FORBIDDEN = [
    /listKeys\s*\(/i,
    /listAccountSas\s*\(/i,
    /listServiceSas\s*\(/i,
    /listConnectionStrings\s*\(/i,
    /AccountKey\s*=/i,
    /SharedAccessSignature/i,
    /SharedAccessKey/i,
    /DefaultEndpointsProtocol/i,
    /[?&]sig=/i,
    /\.primaryKey\b/i,
    /InstrumentationKey\s*=/i,
    /publish-?profile/i,
    /allowSharedKeyAccess:\s*true/i,
    /^\s*AzureWebJobsStorage\s*:/m,
    /AzureWebJobsStorage__accountKey/i,
];

function forbiddenIn(text: string): string[] {
    return FORBIDDEN.filter((pattern) => pattern.test(text)).map(String);
}

const deployedTexts = () => [
    ...files.map((bicep) => ({ name: path.relative(root, bicep.path), text: bicep.text })),
    ...["infra/main.parameters.json", "azure.yaml", ".github/workflows/deploy.yml"].map((name) => ({ name, text: readFileSync(path.join(root, name), "utf8") })),
];

describe("no key anywhere", () => {
    it("has no connection string, account key, listKeys(, SAS or publish profile in the template, its parameters or the deploy workflow", () => {
        const found = deployedTexts().flatMap(({ name, text }) => forbiddenIn(text).map((pattern) => `${name}: ${pattern}`));
        expect(found).toEqual([]);
    });

    it("the check finds each of those when it is there", () => {
        const bad = [
            "var x = stg.listKeys().keys[0].value",
            "AzureWebJobsStorage: 'DefaultEndpointsProtocol=https;AccountName=a;AccountKey=abc'",
            "'https://a.blob.core.windows.net/c?sv=2022&sig=abc'",
            "publish-profile: ${{ secrets.AZURE_FUNCTIONAPP_PUBLISH_PROFILE }}",
            "allowSharedKeyAccess: true",
        ];
        for (const text of bad) expect(forbiddenIn(text), text).not.toEqual([]);
    });

    it("turns off key access wherever the resource has a switch for it", () => {
        expect(entryValue(moduleParams("storage"), "allowSharedKeyAccess")).toBe("false");
        expect(entryValue(moduleParams("monitoring"), "disableLocalAuth")).toBe("true");
        const vault = file("app/keyvault.bicep").resources.find((resource) => resource.type === "Microsoft.KeyVault/vaults")!;
        expect(entryValue(entryValue(bodyOf(vault), "properties")!, "enableRbacAuthorization")).toBe("true");
    });

    it("uses the two settings named *_CONNECTION_STRING only without a secret: App Insights needs the identity, the scheduler takes it", () => {
        const settings = appSettingsOf(main, api, schedulerDeployment);
        const connectionSettings = settings.filter((setting) => /CONNECTION_STRING/.test(setting.name)).map((setting) => setting.name);
        expect(connectionSettings.sort()).toEqual(["APPLICATIONINSIGHTS_CONNECTION_STRING", "DURABLE_TASK_SCHEDULER_CONNECTION_STRING"]);
        const scheduler = settings.find((setting) => setting.name === "DURABLE_TASK_SCHEDULER_CONNECTION_STRING")!;
        expect(scheduler.value).toBe("Endpoint=https://dts-placeholder.westus2.durabletask.io;Authentication=ManagedIdentity;ClientID=11111111-2222-3333-4444-555555555555");
        const authentication = settings.find((setting) => setting.name === "APPLICATIONINSIGHTS_AUTHENTICATION_STRING")!;
        expect(authentication.value).toBe("Authorization=AAD;ClientId=11111111-2222-3333-4444-555555555555");
    });
});

describe("app settings: the template sets what the app's schema requires", () => {
    const settings = appSettingsOf(main, api, storageDeployment);
    const named = (name: string) => settings.find((setting) => setting.name === name);

    it("sets each setting once", () => {
        const names = settings.map((setting) => setting.name);
        expect(names.filter((name, index) => names.indexOf(name) !== index)).toEqual([]);
    });

    it("reaches storage by identity exactly as the shared contract says: three service URIs, managedidentity, the client id", () => {
        const storage = settings.filter((setting) => setting.name.startsWith("AzureWebJobsStorage"));
        expect(Object.fromEntries(storage.map((setting) => [setting.name, setting.value]))).toEqual({
            AzureWebJobsStorage__blobServiceUri: "https://stplaceholder.blob.core.windows.net/",
            AzureWebJobsStorage__queueServiceUri: "https://stplaceholder.queue.core.windows.net/",
            AzureWebJobsStorage__tableServiceUri: "https://stplaceholder.table.core.windows.net/",
            AzureWebJobsStorage__credential: "managedidentity",
            AzureWebJobsStorage__clientId: "11111111-2222-3333-4444-555555555555",
        });
    });

    it("passes the app's own loadConfig, with the host.json the app is deployed with", () => {
        const config = loadConfig(asTheAppReadsThem(settings), hostLimits);
        expect(config.sites.map((site) => [site.name, site.tokenSetting, site.token])).toEqual([
            ["acme", "SMARTSHEET_TOKEN_ACME", "resolved-token-for-SMARTSHEET_TOKEN_ACME"],
            ["globex", "SMARTSHEET_TOKEN_GLOBEX", "resolved-token-for-SMARTSHEET_TOKEN_GLOBEX"],
        ]);
        expect(config.TASK_HUB_NAME).toBe("Sheetwright");
        expect(loadConfig(asTheAppReadsThem(appSettingsOf(main, api, schedulerDeployment)), hostLimits).sites).toHaveLength(2);
    });

    it("sets every setting without which loadConfig refuses to start (derived from the schema, not listed by hand)", () => {
        const env = asTheAppReadsThem(settings);
        const required = settings
            .map((setting) => setting.name)
            .filter((name) => {
                const without = { ...env };
                delete without[name];
                try {
                    loadConfig(without, hostLimits);
                    return false;
                } catch {
                    return true;
                }
            });
        // The derivation bites: these are what today's schema cannot start without.
        expect(required).toEqual(
            expect.arrayContaining(["TASK_HUB_NAME", "SITES", "SMARTSHEET_TOKEN_ACME", "SMARTSHEET_TOKEN_GLOBEX", "AzureWebJobsStorage__queueServiceUri"]),
        );
        for (const name of required) expect(named(name), name).toBeDefined();
    });

    it("names only settings the app, the Functions host or the platform reads (a misspelt name would be ignored silently)", () => {
        const platform = new Set([
            "AzureWebJobsStorage__blobServiceUri",
            "APPLICATIONINSIGHTS_CONNECTION_STRING",
            "APPLICATIONINSIGHTS_AUTHENTICATION_STRING",
            "DURABLE_TASK_SCHEDULER_CONNECTION_STRING",
        ]);
        const tokenSettings = new Set<string>(SITES.map((site) => site.tokenSetting));
        const unknown = appSettingsOf(main, api, schedulerDeployment)
            .map((setting) => setting.name)
            .filter((name) => !(name in SETTINGS) && !platform.has(name) && !tokenSettings.has(name));
        expect(unknown).toEqual([]);
    });

    it("gives each distinct token setting of SITES a Key Vault reference to its secret, never a token", () => {
        const shared = [...SITES, { ...SITES[0]!, name: "acme-eu", intakeSheetId: 8583173393803140, productsFolderId: 9234567890123456, filingIndexSheetId: 9334567890123456 }];
        const tokens = appSettingsOf(main, api, { params: { sites: shared } }).filter((setting) => setting.name.startsWith("SMARTSHEET_TOKEN_"));
        expect(tokens.map((setting) => [setting.name, setting.value])).toEqual([
            ["SMARTSHEET_TOKEN_ACME", "@Microsoft.KeyVault(SecretUri=https://kv-placeholder.vault.azure.net/secrets/smartsheet-token-acme/)"],
            ["SMARTSHEET_TOKEN_GLOBEX", "@Microsoft.KeyVault(SecretUri=https://kv-placeholder.vault.azure.net/secrets/smartsheet-token-globex/)"],
        ]);
        expect(file("app/names.bicep").text).toContain(TOKEN_SECRET_NAME_BICEP);
        const vault = file("app/keyvault.bicep");
        const secret = vault.resources.find((resource) => resource.type === "Microsoft.KeyVault/vaults/secrets")!;
        expect(secret.body).toContain("name: tokenSecretName(tokenSetting)");
    });

    it("sets the scheduler's connection only with that backend, and the app's webhook only when one is given", () => {
        expect(named("DURABLE_TASK_SCHEDULER_CONNECTION_STRING")).toBeUndefined();
        expect(named("ALERT_WEBHOOK_URL")).toBeUndefined();
        const scheduler = appSettingsOf(main, api, schedulerDeployment);
        expect(scheduler.find((setting) => setting.name === "ALERT_WEBHOOK_URL")?.value).toBe("https://hooks.example.com/x");
        expect(scheduler.find((setting) => setting.name === "DURABLE_TASK_SCHEDULER_CONNECTION_STRING")).toBeDefined();
    });

    it("does not set WEBSITE_TIME_ZONE, which Flex Consumption ignores (the schedules run in UTC there)", () => {
        for (const deployment of [storageDeployment, schedulerDeployment]) {
            expect(appSettingsOf(main, api, deployment).map((setting) => setting.name)).not.toContain("WEBSITE_TIME_ZONE");
        }
    });
});

describe("role assignments", () => {
    const roles = builtInRoles as unknown as Record<string, { name: string; on: string; principal: string }>;
    const assignments = files.flatMap((bicep) =>
        bicep.resources
            .filter((resource) => resource.type === "Microsoft.Authorization/roleAssignments")
            .map((resource) => {
                const body = bodyOf(resource);
                const properties = entryValue(body, "properties")!;
                const definition = /^subscriptionResourceId\('Microsoft\.Authorization\/roleDefinitions',\s*(\w+)\)$/.exec(entryValue(properties, "roleDefinitionId")!);
                if (!definition) throw new Error(`${bicep.path}: ${resource.symbol}'s roleDefinitionId is not subscriptionResourceId(…, <var>)`);
                const roleId = stringLiteral(bicep.vars.get(definition[1]!) ?? "");
                const scopeSymbol = entryValue(body, "scope")!;
                const scope = bicep.resources.find((candidate) => candidate.symbol === scopeSymbol);
                return {
                    where: `${path.relative(root, bicep.path)} ${resource.symbol}`,
                    roleId,
                    scopeType: scope?.type,
                    principalId: entryValue(properties, "principalId"),
                    principalType: stringLiteral(entryValue(properties, "principalType") ?? ""),
                };
            }),
    );

    it("assigns only built-in roles of the table, each on the kind of resource the table says", () => {
        const problems = assignments.flatMap((assignment) => {
            const role = assignment.roleId ? roles[assignment.roleId] : undefined;
            if (!role) return [`${assignment.where}: role ${assignment.roleId} is not in test/infra/builtInRoles.json`];
            return role.on === assignment.scopeType ? [] : [`${assignment.where}: ${role.name} on ${assignment.scopeType}, expected on ${role.on}`];
        });
        expect(problems).toEqual([]);
    });

    it("gives the app's identity exactly the roles it needs, and a person only the scheduler's dashboard", () => {
        const forApp = assignments.filter((assignment) => assignment.principalId === "managedIdentityPrincipalId");
        expect(forApp.every((assignment) => assignment.principalType === "ServicePrincipal")).toBe(true);
        expect(forApp.map((assignment) => roles[assignment.roleId!]!.name).sort()).toEqual(
            [
                "Durable Task Data Contributor",
                "Key Vault Secrets User",
                "Monitoring Metrics Publisher",
                "Storage Blob Data Owner",
                "Storage Queue Data Contributor",
                "Storage Table Data Contributor",
            ].sort(),
        );
        const forPeople = assignments.filter((assignment) => assignment.principalId !== "managedIdentityPrincipalId");
        expect(forPeople.map((assignment) => [roles[assignment.roleId!]!.name, assignment.principalId])).toEqual([["Durable Task Data Contributor", "dashboardPrincipalId"]]);
    });

    it("makes the scheduler, its task hub and its role only when that backend is chosen", () => {
        const dts = main.modules.find((module) => module.target === "app/dts.bicep")!;
        expect(dts.body.startsWith("if (useScheduler)")).toBe(true);
        expect(main.vars.get("useScheduler")).toBe("durableBackend == 'durableTaskScheduler'");
        expect(file("app/dts.bicep").resources.map((resource) => resource.type)).toEqual(
            expect.arrayContaining(["Microsoft.DurableTask/schedulers", "Microsoft.DurableTask/schedulers/taskHubs"]),
        );
    });
});

describe("Azure Monitor alerts", () => {
    const alerts = file("app/alerts.bicep");
    const rules = alerts.resources.filter((resource) => resource.type === "Microsoft.Insights/scheduledQueryRules");
    const queryOf = (rule: (typeof rules)[number]) => {
        const criteria = entryValue(entryValue(bodyOf(rule), "properties")!, "criteria")!;
        const condition = objectLiteralsIn(entryValue(criteria, "allOf")!)[0]!;
        const query = alerts.vars.get(entryValue(condition, "query")!)!;
        return { condition, query: stringLiteralsIn(query)[0]! };
    };
    const eventOf = (query: string) => /customDimensions\.event\)\s*==\s*"([^"]+)"/.exec(query)?.[1];

    it("has one rule per event of the telemetry contract: job.parked, site.failed, job.recovered, on the traces table", () => {
        expect(rules.map((rule) => eventOf(queryOf(rule).query)).sort()).toEqual(["job.parked", "job.recovered", "site.failed"]);
        for (const rule of rules) {
            expect(queryOf(rule).query.trim().startsWith("traces")).toBe(true);
            expect(entryValue(entryValue(bodyOf(rule), "properties")!, "scopes")!.replace(/\s+/g, " ")).toBe("[ applicationInsights.id ]");
        }
    });

    it("fires on any park or site failure, and on more recoveries in an hour than the threshold parameter", () => {
        for (const rule of rules) {
            const { condition, query } = queryOf(rule);
            const properties = entryValue(bodyOf(rule), "properties")!;
            if (eventOf(query) === "job.recovered") {
                expect(entryValue(condition, "threshold")).toBe("recoverySpikeThreshold");
                expect(stringLiteral(entryValue(properties, "windowSize")!)).toBe("PT1H");
            } else expect(entryValue(condition, "threshold")).toBe("0");
            expect(stringLiteral(entryValue(condition, "operator")!)).toBe("GreaterThan");
            expect(stringLiteral(entryValue(condition, "timeAggregation")!)).toBe("Count");
        }
        expect(entryValue(moduleParams("alerts"), "recoverySpikeThreshold")).toBe("recoverySpikeThreshold");
    });

    it("routes every rule through the one action group: the alert email, and a webhook only when one is given", () => {
        const groups = alerts.resources.filter((resource) => resource.type === "Microsoft.Insights/actionGroups");
        expect(groups.map((group) => group.symbol)).toEqual(["actionGroup"]);
        for (const rule of rules) {
            const actions = entryValue(entryValue(bodyOf(rule), "properties")!, "actions")!;
            expect(entryValue(actions, "actionGroups")!.replace(/\s+/g, " ")).toBe("[ actionGroup.id ]");
        }
        const group = entryValue(bodyOf(groups[0]!), "properties")!;
        const email = objectLiteralsIn(entryValue(group, "emailReceivers")!)[0]!;
        expect(entryValue(email, "emailAddress")).toBe("alertEmail");
        expect(entryValue(group, "webhookReceivers")!.startsWith("empty(alertActionWebhookUrl) ? [] :")).toBe(true);
    });
});

describe("azd files", () => {
    it("maps every required main.bicep parameter in main.parameters.json, and nothing main.bicep does not declare", () => {
        const parameters = JSON.parse(readFileSync(path.join(infra, "main.parameters.json"), "utf8")) as { parameters: Record<string, unknown> };
        const declared = [...main.params.keys()];
        const required = declared.filter((name) => !/=/.test(main.params.get(name)!));
        expect(required.filter((name) => !(name in parameters.parameters))).toEqual([]);
        expect(Object.keys(parameters.parameters).filter((name) => !declared.includes(name))).toEqual([]);
    });

    it("documents in docs/deploy.md every environment value main.parameters.json reads, but those azd sets itself", () => {
        const parameters = readFileSync(path.join(infra, "main.parameters.json"), "utf8");
        const values = [...parameters.matchAll(/\$\{([A-Z_]+)(?:=[^}]*)?\}/g)].map((match) => match[1]!);
        const docs = readFileSync(path.join(root, "docs", "deploy.md"), "utf8");
        const setByAzd = ["AZURE_ENV_NAME", "AZURE_PRINCIPAL_ID", "AZURE_PRINCIPAL_TYPE"];
        expect(values.length).toBeGreaterThan(5);
        expect(values.filter((name) => !setByAzd.includes(name) && !docs.includes(`\`${name}\``))).toEqual([]);
    });

    it("declares one Functions service in TypeScript in azure.yaml that deploys the bundled package, built with the backend's host.json", () => {
        const azureYaml = parseYamlSubset(readFileSync(path.join(root, "azure.yaml"), "utf8")) as { services: Record<string, Record<string, unknown>> };
        expect(Object.keys(azureYaml.services)).toEqual(["api"]);
        const service = azureYaml.services.api!;
        expect({ project: service.project, language: service.language, host: service.host, dist: service.dist }).toEqual({ project: "./", language: "ts", host: "function", dist: "dist/package" });
        const prepackage = (service.hooks as Record<string, Record<string, { run: string }>>).prepackage!;
        expect([prepackage.posix?.run, prepackage.windows?.run]).toEqual(["npm run package", "npm run package"]);
        // The service name is the tag azd finds the Function App by.
        expect(api.params.get("serviceName")).toBe("string = 'api'");
    });

    it("reads abbreviations for every prefix main.bicep uses", () => {
        const abbreviations = JSON.parse(readFileSync(path.join(infra, "abbreviations.json"), "utf8")) as Record<string, string>;
        const used = [...main.text.matchAll(/abbrs\.(\w+)/g)].map((match) => match[1]!);
        expect(used.filter((name) => !(name in abbreviations))).toEqual([]);
    });
});
