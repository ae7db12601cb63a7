import * as df from "durable-functions";
import { recoveryDeps } from "../shared/composition";
import { boundedBodyText } from "../shared/http/boundedBody";
import { MAX_UNPARK_BODY_BYTES, unparkBodyTooLarge, unparkJob } from "../shared/recovery/unpark";

df.app.client.http("unparkJob", {
    route: "jobs/{jobKey}/unpark",
    methods: ["POST"],
    authLevel: "function",
    handler: async (request, client, context) => {
        const body = await boundedBodyText(request, MAX_UNPARK_BODY_BYTES);
        if (body === undefined) return unparkBodyTooLarge();
        return unparkJob(await recoveryDeps(context, client), request.params.jobKey ?? "", body, {
            principalName: request.headers.get("x-ms-client-principal-name"),
            principalIdp: request.headers.get("x-ms-client-principal-idp"),
            principal: request.headers.get("x-ms-client-principal"),
        });
    },
});
