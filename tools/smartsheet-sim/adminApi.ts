import { z } from "zod";
import { ApiError, apiErrors } from "./ApiError";
import { FaultRule } from "./FaultInjector";
import { SimConfigPatch } from "./SimulatorOptions";
import type { SimulatorCore } from "./SimulatorCore";
import { WEBHOOK_STATUSES } from "./Webhooks";
import { WebhookFaultRule } from "./WebhookFaults";

export interface AdminResponse {
    status: number;
    body: unknown;
}

const FaultsBody = z.strictObject({ rules: z.array(FaultRule) });
const WebhookFaultsBody = z.strictObject({ rules: z.array(WebhookFaultRule) });
const WebhookStatusBody = z.strictObject({
    webhookId: z.number().int().positive(),
    status: z.enum(WEBHOOK_STATUSES).exclude(["NEW_NOT_VERIFIED"]),
});
const LockedRowsBody = z.strictObject({ sheetId: z.number().int().positive(), rowIds: z.array(z.number().int().positive()), locked: z.boolean() });

/**
 * `/__sim/…` for loopback callers: inspection, fault rules, run-time config, locked rows, reset,
 * and webhooks (every token's with their deliveries, webhook fault rules, a status set behind the
 * owner's back).
 */
export function handleAdminRequest(core: SimulatorCore, method: string, path: string, bodyText: string): AdminResponse {
    const route = `${method.toUpperCase()} ${path.replace(/^\/__sim/, "").replace(/\/+$/, "") || "/"}`;
    try {
        switch (route) {
            case "GET /state":
                return ok(core.state());
            case "GET /calls":
                return ok(core.calls());
            case "POST /calls/reset":
                core.resetCalls();
                return ok(core.calls());
            case "GET /faults":
                return ok({ rules: core.faults() });
            case "POST /faults":
                return ok({ rules: core.setFaults(parse(FaultsBody, bodyText).rules) });
            case "GET /config":
                return ok(core.config());
            case "POST /config":
                return ok(core.configure(parse(SimConfigPatch, bodyText)));
            case "POST /lockedRows": {
                const { sheetId, rowIds, locked } = parse(LockedRowsBody, bodyText);
                return ok({ locked: core.lockRows(sheetId, rowIds, locked) });
            }
            case "GET /webhooks":
                return ok({ webhooks: core.webhookList(), deliveries: core.webhookDeliveries() });
            case "GET /webhookFaults":
                return ok({ rules: core.webhookFaults() });
            case "POST /webhookFaults":
                return ok({ rules: core.setWebhookFaults(parse(WebhookFaultsBody, bodyText).rules) });
            case "POST /webhookStatus": {
                const { webhookId, status } = parse(WebhookStatusBody, bodyText);
                return ok({ webhook: core.setWebhookStatus(webhookId, status) });
            }
            case "POST /reset":
                core.reset();
                return ok({ reset: true, anchors: core.state().anchors });
            default:
                return failure(apiErrors.notFound());
        }
    } catch (error) {
        if (error instanceof ApiError) return failure(error);
        throw error;
    }
}

function parse<T extends z.ZodType>(schema: T, bodyText: string): z.output<T> {
    let body: unknown;
    try {
        body = bodyText.trim() === "" ? {} : JSON.parse(bodyText);
    } catch (error) {
        throw apiErrors.unparsable(error instanceof Error ? error.message : String(error));
    }
    const result = schema.safeParse(body);
    if (!result.success) {
        throw new ApiError(400, 1018, `Invalid admin request: ${z.prettifyError(result.error).replace(/\n/g, " ")}`);
    }
    return result.data;
}

function ok(body: unknown): AdminResponse {
    return { status: 200, body };
}

function failure(error: ApiError): AdminResponse {
    return { status: error.status, body: { errorCode: error.errorCode, message: error.message } };
}
