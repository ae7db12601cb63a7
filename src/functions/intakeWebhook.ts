import { app } from "@azure/functions";
import { receiverDeps } from "../shared/composition";
import { boundedBodyText } from "../shared/http/boundedBody";
import { MAX_CALLBACK_BYTES, receiveCallback } from "../shared/webhooks/receiveCallback";
import { RECEIVER_ROUTE } from "../shared/webhooks/webhookNames";

// Smartsheet's webhook callbacks for the sites' intake sheets: the key travels in the callback URL.
app.http("intakeWebhook", {
    route: RECEIVER_ROUTE,
    methods: ["POST"],
    authLevel: "function",
    handler: async (request, context) =>
        receiveCallback(await receiverDeps(context), {
            header: (name) => request.headers.get(name),
            body: await boundedBodyText(request, MAX_CALLBACK_BYTES),
        }),
});
