import { z } from "zod";
import { isReadOperation, SIM_OPERATIONS, type SimOperation } from "./SimOperation";

export interface RateLimit {
    requests: number;
    windowMs: number;
}

export interface SimulatorOptions {
    /** 0 picks a free port. Default 7072, the simulator's well-known local port. */
    port?: number;
    /** Default "127.0.0.1". */
    host?: string;
    /** Accepted bearer tokens. Default ["sim-token"]. */
    tokens?: string[];
    /**
     * Customer workspaces to seed, each with its own token, intake sheet, template, products
     * folder and Filing Index. Default 1. The first site's token is the first of `tokens`; site
     * n's is that token with `-n` (sim-token-2), accepted without being listed. With two or more,
     * a site's token reaches only its own workspace (403/1004 elsewhere), as a customer's would.
     */
    sites?: number;
    /** Per token. Default 300 requests per 60 000 ms, Smartsheet's documented limit. */
    rateLimit?: RateLimit;
    /** Longest sheet or folder name accepted. Default 50. */
    nameLimit?: number;
    /** Sleep before answering, per operation. Defaults: copySheet 25, other writes 8, reads 3. */
    latencyMs?: Partial<Record<SimOperation, number>>;
    /** Seed the demo workspace. Default true. */
    seed?: boolean;
    /** Source of createdAt/modifiedAt times, so tests can move time on. Default Date.now. */
    clock?: () => number;
    /** Webhook delivery timing; tests compress it (a 50 ms debounce, back-off in milliseconds). */
    webhooks?: Partial<WebhookTiming>;
}

/**
 * How webhooks deliver. Defaults follow Smartsheet's documentation ("Webhook callbacks",
 * "Webhook verification"): a one-minute debounce (commercial plans), up to 14 retries of a failed
 * callback, the first 7 with exponential back-off and the rest every 3 hours, re-verification
 * every 100 callbacks. The back-off base and the callback timeout are not documented: 1 minute
 * and 10 seconds here.
 */
export interface WebhookTiming {
    /** From a sheet's first change to the callback carrying every change made meanwhile. */
    debounceMs: number;
    /** Retry n (0-based, n < 7) waits retryBaseMs × 2^n. */
    retryBaseMs: number;
    /** Retries 7 and later wait this long. */
    retryLongMs: number;
    /** Retries after the first attempt before the webhook becomes DISABLED_CALLBACK_FAILED. */
    maxRetries: number;
    /** A callback not answered within this long counts as failed (and is retried). */
    callbackTimeoutMs: number;
    /** A verification challenge precedes every this-many-th callback. */
    verifyEvery: number;
}

export const DEFAULT_WEBHOOK_TIMING: WebhookTiming = {
    debounceMs: 60_000,
    retryBaseMs: 60_000,
    retryLongMs: 3 * 60 * 60_000,
    maxRetries: 14,
    callbackTimeoutMs: 10_000,
    verifyEvery: 100,
};

/** The limits a running simulator applies; changeable at run time. */
export interface SimConfig {
    nameLimit: number;
    rateLimit: RateLimit;
    latencyMs: Record<SimOperation, number>;
    webhooks: WebhookTiming;
}

const Milliseconds = z.number().int().nonnegative();

export const SimConfigPatch = z.strictObject({
    nameLimit: z.number().int().positive().optional(),
    rateLimit: z
        .strictObject({ requests: z.number().int().positive(), windowMs: z.number().int().positive() })
        .optional(),
    latencyMs: z.partialRecord(z.enum(SIM_OPERATIONS), Milliseconds).optional(),
    webhooks: z
        .strictObject({
            debounceMs: Milliseconds.optional(),
            retryBaseMs: Milliseconds.optional(),
            retryLongMs: Milliseconds.optional(),
            maxRetries: z.number().int().nonnegative().optional(),
            callbackTimeoutMs: z.number().int().positive().optional(),
            verifyEvery: z.number().int().positive().optional(),
        })
        .optional(),
});
export type SimConfigPatch = z.infer<typeof SimConfigPatch>;

export const DEFAULT_PORT = 7072;
export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_TOKENS = ["sim-token"];
export const MAX_SITES = 9;

export function defaultLatency(op: SimOperation): number {
    if (op === "copySheet") return 25;
    return isReadOperation(op) ? 3 : 8;
}

export function initialConfig(options: SimulatorOptions): SimConfig {
    const base: SimConfig = {
        nameLimit: 50,
        rateLimit: { requests: 300, windowMs: 60_000 },
        latencyMs: Object.fromEntries(SIM_OPERATIONS.map((op) => [op, defaultLatency(op)])) as Record<SimOperation, number>,
        webhooks: { ...DEFAULT_WEBHOOK_TIMING },
    };
    return applyConfigPatch(
        base,
        SimConfigPatch.parse({ nameLimit: options.nameLimit, rateLimit: options.rateLimit, latencyMs: options.latencyMs, webhooks: options.webhooks }),
    );
}

export function applyConfigPatch(config: SimConfig, patch: SimConfigPatch): SimConfig {
    return {
        nameLimit: patch.nameLimit ?? config.nameLimit,
        rateLimit: patch.rateLimit ? { ...patch.rateLimit } : { ...config.rateLimit },
        latencyMs: { ...config.latencyMs, ...patch.latencyMs },
        webhooks: { ...config.webhooks, ...definedOnly(patch.webhooks ?? {}) },
    };
}

function definedOnly<T extends object>(value: T): Partial<T> {
    return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined)) as Partial<T>;
}
