import { app } from "@azure/functions";
import * as df from "durable-functions";
import { z } from "zod";
import { appConfig, keeperDeps, logFromApp, reconcileQueueName, recoveryDeps, requestReconciliation } from "../shared/composition";
import { describeConfig } from "../shared/config";
import { reconcileJobs } from "../shared/recovery/reconcile";
import { logLine } from "../shared/text/logText";
import { keepWebhooks, webhookPlanLine } from "../shared/webhooks/keepWebhooks";

const ReconcileRequest = z.object({ v: z.literal(1), occasion: z.string().max(100) });

// A hook gets no DurableClient, so start-up asks for the reconciliation through a queue.
// Its lines are written by the next invocation (hooks have no invocation context to log through).
app.hook.appStart(async () => {
    // What this instance runs with, for whoever reads the log: never the token or the storage key.
    logFromApp("info", `Sheetwright configuration: ${JSON.stringify(describeConfig(appConfig()))}`);
    logFromApp("info", webhookPlanLine(appConfig().sites));
    try {
        await requestReconciliation("start-up");
    } catch (error) {
        // Not fatal: the reaper reconciles on its schedule too.
        logFromApp("warn", `Could not ask for the start-up reconciliation: ${error instanceof Error ? error.message : String(error)}`);
    }
});

df.app.client.storageQueue("reconcileJobs", {
    queueName: reconcileQueueName(appConfig()),
    connection: "AzureWebJobsStorage",
    handler: async (message, client, context) => {
        const request = ReconcileRequest.safeParse(message);
        if (!request.success) {
            context.error(logLine(`reconcile request ignored, not understood: ${JSON.stringify(message).slice(0, 300)}`));
            return;
        }
        await reconcileJobs(await recoveryDeps(context, client), request.data.occasion);
        // At start-up the webhooks are looked after at once, not at the reaper's next run.
        if (request.data.occasion === "start-up") await keepWebhooks(await keeperDeps(context), "start-up");
    },
});

// Ops asks for a reconciliation now (`sheetwright-jobs reconcile`), and reads what it changed.
df.app.client.http("reconcileNow", {
    route: "reconcile",
    methods: ["POST"],
    authLevel: "function",
    handler: async (_request, client, context) => {
        const report = await reconcileJobs(await recoveryDeps(context, client), "requested over HTTP");
        return { status: 200, jsonBody: { checked: report.checked, transitions: report.transitions } };
    },
});
