import { z } from "zod";
import { FaultRules } from "./FaultRules";

/**
 * What can go wrong between the simulator and a webhook's receiver, one event callback at a time:
 * - `drop`: the callback is never sent, and the webhook carries on as if it had been answered.
 * - `duplicate`: sent twice, the same body (same nonce) both times.
 * - `delay`: sent `delayMs` late, without holding up the callbacks after it (which may overtake it).
 * - `reorder`: held back until the webhook's next callback has been answered, then sent: the two
 *   arrive out of order.
 */
export const WEBHOOK_FAULT_KINDS = ["drop", "duplicate", "delay", "reorder"] as const;
export type WebhookFaultKind = (typeof WEBHOOK_FAULT_KINDS)[number];

export const WebhookFaultRule = z.strictObject({
    kind: z.enum(WEBHOOK_FAULT_KINDS),
    /** Only this webhook's callbacks; every webhook's without. */
    webhookId: z.number().int().positive().optional(),
    times: z.number().int().positive().default(1),
    /** Matching callbacks let through before the rule starts to apply. */
    skip: z.number().int().nonnegative().default(0),
    delayMs: z.number().int().nonnegative().default(0),
});
export type WebhookFaultRule = z.output<typeof WebhookFaultRule>;
export type WebhookFaultRuleInput = z.input<typeof WebhookFaultRule>;

export interface ActiveWebhookFault extends WebhookFaultRule {
    remaining: number;
    skipRemaining: number;
}

/** The active webhook fault rules; each event callback consumes at most one. */
export class WebhookFaults {
    private readonly rules = new FaultRules<WebhookFaultRule, number>(
        (rule, webhookId) => rule.webhookId === undefined || rule.webhookId === webhookId,
    );

    setRules(input: readonly WebhookFaultRuleInput[]): ActiveWebhookFault[] {
        return this.rules.replace(z.array(WebhookFaultRule).parse(input));
    }

    list(): ActiveWebhookFault[] {
        return this.rules.list();
    }

    take(webhookId: number): WebhookFaultRule | undefined {
        return this.rules.take(webhookId);
    }

    reset(): void {
        this.rules.clear();
    }
}
