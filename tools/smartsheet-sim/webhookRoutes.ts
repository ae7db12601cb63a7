import { z } from "zod";
import { apiErrors } from "./ApiError";
import { JsonId, parseBody } from "./parseBody";
import { pageOf } from "./queryParams";
import { isoTime } from "./render";
import { success, type RouteContext } from "./RouteContext";
import { Webhooks, type SimWebhook } from "./Webhooks";

/** Attributes Smartsheet sets itself: a create or update that sends them is refused (1032). */
const READ_ONLY = ["id", "sharedSecret", "status", "disabledDetails", "stats", "createdAt", "modifiedAt", "apiClientId", "apiClientName"] as const;

const NewWebhook = z.looseObject({
    name: z.string().min(1),
    callbackUrl: z.string().min(1),
    scope: z.literal("sheet"),
    scopeObjectId: JsonId,
    // "Currently, must be an array of size 1 that contains the string value '*.*'".
    events: z.tuple([z.literal("*.*")]),
    version: z.literal(1),
});

const WebhookChange = z.looseObject({
    name: z.string().min(1).optional(),
    callbackUrl: z.string().min(1).optional(),
    enabled: z.boolean().optional(),
    events: z.tuple([z.literal("*.*")]).optional(),
    version: z.literal(1).optional(),
});

/** `POST /webhooks`: a new webhook is disabled, NEW_NOT_VERIFIED, until `PUT` enables it. */
export function createWebhook({ workspace, webhooks, token, body }: RouteContext): unknown {
    refuseReadOnly(body, ["enabled"]);
    const input = parseBody(NewWebhook, body);
    Webhooks.checkCallbackUrl(input.callbackUrl);
    if (!workspace.sheets.has(input.scopeObjectId)) throw apiErrors.scopeObjectNotFound();
    const hook = webhooks.create(token, {
        name: input.name,
        callbackUrl: input.callbackUrl,
        scopeObjectId: input.scopeObjectId,
        events: [...input.events],
        version: input.version,
    });
    return success(renderWebhook(hook));
}

/** `GET /webhooks`: the token's own webhooks, paged (`page`, `pageSize`, `includeAll`). */
export function listWebhooks({ webhooks, token, query }: RouteContext): unknown {
    const all = webhooks.list(token).map(renderWebhook);
    const page = pageOf(all, query);
    return { pageNumber: page.pageNumber, pageSize: page.pageSize, totalPages: page.totalPages, totalCount: all.length, data: page.data };
}

export function getWebhook({ webhooks, token, id }: RouteContext): unknown {
    return renderWebhook(webhooks.get(token, id("webhookId")));
}

/** `PUT /webhooks/{id}`: `enabled: true` answers only after the verification request has been answered. */
export async function updateWebhook({ webhooks, token, id, body }: RouteContext): Promise<unknown> {
    webhooks.get(token, id("webhookId"));
    refuseReadOnly(body, ["scope", "scopeObjectId"]);
    const change = parseBody(WebhookChange, body);
    if (change.callbackUrl !== undefined) Webhooks.checkCallbackUrl(change.callbackUrl);
    const hook = await webhooks.update(token, id("webhookId"), {
        ...(change.name === undefined ? {} : { name: change.name }),
        ...(change.callbackUrl === undefined ? {} : { callbackUrl: change.callbackUrl }),
        ...(change.enabled === undefined ? {} : { enabled: change.enabled }),
    });
    return success(renderWebhook(hook));
}

export function deleteWebhook({ webhooks, token, id }: RouteContext): unknown {
    webhooks.delete(token, id("webhookId"));
    return success();
}

export function resetSharedSecret({ webhooks, token, id }: RouteContext): unknown {
    return success({ sharedSecret: webhooks.resetSharedSecret(token, id("webhookId")) });
}

export function renderWebhook(hook: SimWebhook): Record<string, unknown> {
    return {
        id: hook.id,
        name: hook.name,
        scope: "sheet",
        scopeObjectId: hook.scopeObjectId,
        events: [...hook.events],
        callbackUrl: hook.callbackUrl,
        sharedSecret: hook.sharedSecret,
        enabled: hook.enabled,
        status: hook.status,
        ...(hook.enabled || hook.disabledDetails === undefined ? {} : { disabledDetails: hook.disabledDetails }),
        version: hook.version,
        stats: {
            lastCallbackAttemptRetryCount: hook.stats.lastCallbackAttemptRetryCount,
            ...(hook.stats.lastCallbackAttempt === undefined ? {} : { lastCallbackAttempt: isoTime(hook.stats.lastCallbackAttempt) }),
            ...(hook.stats.lastSuccessfulCallback === undefined ? {} : { lastSuccessfulCallback: isoTime(hook.stats.lastSuccessfulCallback) }),
        },
        createdAt: isoTime(hook.createdAt),
        modifiedAt: isoTime(hook.modifiedAt),
    };
}

function refuseReadOnly(body: unknown, extra: readonly string[]): void {
    if (body === null || typeof body !== "object" || Array.isArray(body)) return;
    const sent = [...READ_ONLY, ...extra].filter((name) => name in body);
    if (sent.length > 0) throw apiErrors.attributesNotAllowed(sent.join(", "));
}
