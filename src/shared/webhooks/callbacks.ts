import { createHmac, timingSafeEqual } from "node:crypto";
import { z } from "zod";

const WebhookId = z.number().int().positive().refine(Number.isSafeInteger);

/**
 * Smartsheet's verification request (header `Smartsheet-Hook-Challenge`, body `{challenge,
 * webhookId}`). The challenge is echoed in a header, so only plain printable text is accepted.
 */
export const VerificationChallenge = z.object({
    challenge: z.string().regex(/^[\x21-\x7e]{1,200}$/, "expected 1–200 printable ASCII characters"),
    webhookId: WebhookId,
});

/** What the receiver reads of an event callback; the rest (row ids, users) it does not trust or need. */
const CallbackEvent = z.looseObject({
    objectType: z.string().optional(),
    eventType: z.string().optional(),
    changeAgent: z.string().optional(),
});

/** An event callback (`events`), or a status callback (`newWebhookStatus`). */
export const WebhookCallback = z.looseObject({
    webhookId: WebhookId,
    scopeObjectId: WebhookId.optional(),
    events: z.array(CallbackEvent).max(10_000).optional(),
    newWebhookStatus: z.string().max(100).optional(),
});
export type WebhookCallback = z.infer<typeof WebhookCallback>;

/** Whether `signature` (the `Smartsheet-Hmac-SHA256` header) is the hex HMAC-SHA256 of the raw body with `secret`, compared in constant time. */
export function signatureMatches(secret: string, rawBody: string, signature: string | null): boolean {
    if (signature === null || !/^[0-9a-fA-F]{64}$/.test(signature)) return false;
    const expected = createHmac("sha256", secret).update(rawBody, "utf8").digest();
    return timingSafeEqual(expected, Buffer.from(signature, "hex"));
}
