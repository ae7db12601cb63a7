#!/usr/bin/env node
// Points host.json's Durable Functions backend at the one the deployment provisioned, before the app
// is packaged: the Azure Storage provider (host.json as committed) or the Durable Task Scheduler
// (storageProvider.type "azureManaged", its connection in DURABLE_TASK_SCHEDULER_CONNECTION_STRING).
//
//   node infra/scripts/hostForBackend.mjs [azureStorage|durableTaskScheduler] [--host <path to host.json>]
//
// The backend defaults to $DURABLE_BACKEND (azd passes its environment to hooks), else azureStorage.
// Only the storage provider changes; every other host.json setting stays as it is. Run it on the tree
// that gets packaged (CI's checkout, or before `func azure functionapp publish`).
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const BACKENDS = ["azureStorage", "durableTaskScheduler"];
const SCHEDULER_PROVIDER = { type: "azureManaged", connectionStringName: "DURABLE_TASK_SCHEDULER_CONNECTION_STRING" };

const args = process.argv.slice(2);
const hostFlag = args.indexOf("--host");
const hostPath =
    hostFlag >= 0 ? path.resolve(args[hostFlag + 1] ?? "") : path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "host.json");
const positional = args.filter((_, index) => index !== hostFlag && index !== hostFlag + 1);
const backend = positional[0] ?? process.env.DURABLE_BACKEND ?? "azureStorage";

if (!BACKENDS.includes(backend)) {
    console.error(`hostForBackend: unknown Durable Functions backend "${backend}"; expected ${BACKENDS.join(" or ")} (the durableBackend parameter of infra/main.bicep)`);
    process.exit(2);
}

const text = readFileSync(hostPath, "utf8");
const host = JSON.parse(text);
const durableTask = host.extensions?.durableTask;
if (!durableTask) {
    console.error(`hostForBackend: ${hostPath} has no extensions.durableTask section; is it Sheetwright's host.json?`);
    process.exit(2);
}

const current = durableTask.storageProvider?.type ?? "AzureStorage";
const wanted = backend === "durableTaskScheduler" ? "azureManaged" : "AzureStorage";
if (current.toLowerCase() === wanted.toLowerCase()) {
    console.log(`hostForBackend: ${hostPath} already uses the ${backend} backend; unchanged`);
} else {
    if (backend === "durableTaskScheduler") durableTask.storageProvider = SCHEDULER_PROVIDER;
    else delete durableTask.storageProvider;
    writeFileSync(hostPath, `${JSON.stringify(host, null, 2)}\n`);
    console.log(`hostForBackend: ${hostPath} now uses the ${backend} backend (storageProvider ${wanted})`);
}
