import { z } from "zod";

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
    private rules: ActiveWebhookFault[] = [];

    setRules(input: readonly WebhookFaultRuleInput[]): ActiveWebhookFault[] {
        this.rules = z
            .array(WebhookFaultRule)
            .parse(input)
            .map((rule) => ({ ...rule, remaining: rule.times, skipRemaining: rule.skip }));
        return this.list();
    }

    list(): ActiveWebhookFault[] {
        return this.rules.map((rule) => ({ ...rule }));
    }

    take(webhookId: number): WebhookFaultRule | undefined {
        for (const rule of this.rules) {
            if (rule.webhookId !== undefined && rule.webhookId !== webhookId) continue;
            if (rule.skipRemaining > 0) {
                rule.skipRemaining -= 1;
                continue;
            }
            rule.remaining -= 1;
            if (rule.remaining <= 0) this.rules = this.rules.filter((other) => other !== rule);
            return rule;
        }
        return undefined;
    }

    reset(): void {
        this.rules = [];
    }
}
