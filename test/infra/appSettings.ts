import { entryValue, objectEntries, objectLiteralsIn, stringLiteral, type BicepFile } from "./bicepReader";

/**
 * The app settings the template gives the Function App, worked out from the Bicep text for one
 * deployment (its parameters and backend): api.bicep's `appSettings = union(…)` of settings vars,
 * each var an object literal, an `empty(p) ? {} : {…}` one, or the token settings' `toObject(…)`.
 * Values Bicep computes at deployment (endpoints, the identity's client id) come from COMPUTED;
 * an expression neither here nor there stops the test, never guessed.
 */

export interface Deployment {
    /** main.bicep parameters this deployment sets; the others keep their defaults. */
    params: Record<string, unknown>;
}

export interface TemplateSetting {
    name: string;
    /** The value as deployed: a Key Vault reference stays a reference. */
    value: string;
    /** The Bicep expression it came from. */
    expression: string;
}

/** What Bicep computes at deployment, as a deployment in westus2 would get it; keyed by the expression text. */
export const COMPUTED: Record<string, (deployment: Deployment) => string> = {
    "stg.properties.primaryEndpoints.blob": () => "https://stplaceholder.blob.core.windows.net/",
    "stg.properties.primaryEndpoints.queue": () => "https://stplaceholder.queue.core.windows.net/",
    "stg.properties.primaryEndpoints.table": () => "https://stplaceholder.table.core.windows.net/",
    "applicationInsights.properties.ConnectionString": () =>
        "InstrumentationKey=00000000-0000-0000-0000-000000000000;IngestionEndpoint=https://westus2-2.in.applicationinsights.azure.com/",
    "apiUserAssignedIdentity.outputs.clientId": () => "11111111-2222-3333-4444-555555555555",
    "apiUserAssignedIdentity.outputs.resourceId": () =>
        "/subscriptions/s/resourceGroups/rg-env/providers/Microsoft.ManagedIdentity/userAssignedIdentities/id-api-placeholder",
    "keyVault.outputs.uri": () => "https://kv-placeholder.vault.azure.net/",
    "useScheduler ? dts.outputs.endpoint : ''": (deployment) =>
        deployment.params.durableBackend === "durableTaskScheduler" ? "https://dts-placeholder.westus2.durabletask.io" : "",
};

/** names.bicep's tokenSecretName, mirrored (the test checks the Bicep function still reads so). */
export const TOKEN_SECRET_NAME_BICEP = "func tokenSecretName(tokenSetting string) string => toLower(replace(tokenSetting, '_', '-'))";
export const tokenSecretName = (tokenSetting: string) => tokenSetting.replace(/_/g, "-").toLowerCase();

const TOKEN_SETTINGS_EXPRESSION =
    "toObject( union(map(sites, site => string(site.tokenSetting)), []), tokenSetting => tokenSetting, " +
    "tokenSetting => '@Microsoft.KeyVault(SecretUri=${keyVaultUri}secrets/${tokenSecretName(tokenSetting)}/)' )";

const squeeze = (text: string) => text.replace(/\s+/g, " ").replace(/\(\s+/g, "( ").replace(/\s+\)/g, " )").trim();

export function appSettingsOf(main: BicepFile, api: BicepFile, deployment: Deployment): TemplateSetting[] {
    const apiModule = main.modules.find((module) => module.target === "app/api.bicep");
    if (!apiModule) throw new Error("main.bicep has no module app/api.bicep");
    const apiArguments = entryValue(objectLiteralsIn(apiModule.body)[0]!, "params");
    if (!apiArguments) throw new Error("main.bicep passes app/api.bicep no params");

    const mainValue = (expression: string): unknown => evaluate(expression, (name) => mainParam(main, name, deployment), deployment);
    const apiParam = (name: string): unknown => {
        const argument = entryValue(apiArguments, name);
        if (argument !== undefined) return mainValue(argument);
        return declaredDefault(api, name);
    };
    const apiValue = (expression: string): unknown => evaluate(expression, apiParam, deployment);

    const union = api.vars.get("appSettings");
    const parts = /^union\(([^()]*)\)$/.exec(union ?? "");
    if (!parts) throw new Error(`api.bicep's appSettings is not union(<settings vars>): ${union}`);
    const settings: TemplateSetting[] = [];
    for (const name of parts[1]!.split(",").map((part) => part.trim())) {
        const expression = api.vars.get(name);
        if (expression === undefined) throw new Error(`api.bicep's appSettings names ${name}, which is no var`);
        for (const entry of settingsEntries(expression, apiParam)) {
            settings.push({ name: entry.key, value: String(apiValue(entry.value)), expression: entry.value });
        }
    }
    return settings;
}

/** The entries a settings var contributes for this deployment. */
function settingsEntries(expression: string, apiParam: (name: string) => unknown) {
    if (expression.startsWith("{")) return objectEntries(expression);
    const conditional = /^empty\((\w+)\)\s*\?\s*\{\}\s*:\s*(\{[\s\S]*\})$/.exec(expression);
    if (conditional) return String(apiParam(conditional[1]!)) === "" ? [] : objectEntries(conditional[2]!);
    if (squeeze(expression) === squeeze(TOKEN_SETTINGS_EXPRESSION)) {
        const sites = apiParam("sites") as Array<{ tokenSetting: string }>;
        const keyVaultUri = String(apiParam("keyVaultUri"));
        return [...new Set(sites.map((site) => site.tokenSetting))].map((tokenSetting) => ({
            key: tokenSetting,
            value: `'@Microsoft.KeyVault(SecretUri=${keyVaultUri}secrets/${tokenSecretName(tokenSetting)}/)'`,
        }));
    }
    throw new Error(`the test cannot read this settings var; teach appSettings.ts its shape: ${expression.slice(0, 120)}`);
}

function mainParam(main: BicepFile, name: string, deployment: Deployment): unknown {
    if (name in deployment.params) return deployment.params[name];
    if (!main.params.has(name)) throw new Error(`main.bicep has no param ${name}`);
    return declaredDefault(main, name);
}

function declaredDefault(file: BicepFile, name: string): unknown {
    const declaration = file.params.get(name);
    if (declaration === undefined) throw new Error(`${file.path} has no param ${name}`);
    const match = /^\w+\s*=\s*([\s\S]+)$/.exec(declaration);
    if (!match) throw new Error(`${file.path}: param ${name} has no default and the deployment does not set it`);
    const text = match[1]!.trim();
    const literal = stringLiteral(text);
    if (literal !== undefined) return literal;
    if (/^-?\d+$/.test(text)) return Number(text);
    if (text === "true" || text === "false") return text === "true";
    throw new Error(`${file.path}: param ${name}'s default ${text} is not a literal the test can read`);
}

/** A Bicep expression's value: string literals (interpolated too), parameters, string(x), and COMPUTED. */
function evaluate(expression: string, param: (name: string) => unknown, deployment: Deployment = { params: {} }): unknown {
    const text = expression.trim();
    const computed = COMPUTED[text];
    if (computed) return computed(deployment);
    if (text.startsWith("'") && text.endsWith("'") && !text.startsWith("'''")) {
        return text
            .slice(1, -1)
            .replace(/\$\{([^}]*)\}/g, (_, inner: string) => String(evaluate(inner, param, deployment)))
            .replace(/\\(.)/g, "$1");
    }
    if (/^[A-Za-z_]\w*$/.test(text)) return param(text);
    const stringOf = /^string\((\w+)\)$/.exec(text);
    if (stringOf) {
        const value = param(stringOf[1]!);
        return typeof value === "string" ? value : JSON.stringify(value);
    }
    throw new Error(`the test cannot evaluate ${text}; add what Bicep computes for it to COMPUTED in test/infra/appSettings.ts`);
}
