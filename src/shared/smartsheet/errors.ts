import type { DeclaresFailureKind } from "../failures";

/** How a failed Smartsheet call should be treated by whoever made it (an ambiguous write is transient). */
type SmartsheetFailureKind = "transient" | "permanent";

interface SmartsheetErrorDetails {
    operation: string;
    statusCode?: number;
    /** Smartsheet's own error code, e.g. 1041 (value too long) or 4003 (rate limit). */
    errorCode?: number;
    refId?: string;
    /** Network-level cause (timeout, ECONNRESET…) when no HTTP answer arrived. */
    cause?: string;
}

export abstract class SmartsheetError extends Error implements DeclaresFailureKind {
    /** Each class of failed call says which it is, once. */
    abstract readonly failureKind: "transient" | "ambiguous" | "permanent";
    /** Transient or permanent, as `failureKind` says. */
    get kind(): SmartsheetFailureKind {
        return this.failureKind === "permanent" ? "permanent" : "transient";
    }
    /** True when a write may have been carried out although the call failed. */
    get ambiguous(): boolean {
        return this.failureKind === "ambiguous";
    }
    readonly operation: string;
    readonly statusCode?: number;
    readonly errorCode?: number;
    readonly refId?: string;
    readonly causeCode?: string;

    constructor(message: string, details: SmartsheetErrorDetails) {
        super(message);
        this.name = new.target.name;
        this.operation = details.operation;
        this.statusCode = details.statusCode;
        this.errorCode = details.errorCode;
        this.refId = details.refId;
        this.causeCode = details.cause;
    }
}

/** Worth retrying later: rate limit, 5xx, timeouts, resets. */
export class TransientSmartsheetError extends SmartsheetError {
    readonly failureKind: "transient" | "ambiguous" = "transient";
}

/** Retrying will not help (4xx other than 429): a person has to change something first. */
export class PermanentSmartsheetError extends SmartsheetError {
    readonly failureKind = "permanent" as const;
}

/**
 * A non-idempotent write (copy, create folder, add rows…) failed in a way that does not tell
 * whether Smartsheet carried it out (4002, 5xx, timeout, reset). Never re-send it blindly:
 * wait a settle interval, list the destination and adopt what is there.
 */
export class AmbiguousWriteError extends TransientSmartsheetError {
    override readonly failureKind = "ambiguous" as const;
}

/** Network causes that mean the request never reached Smartsheet (ENOTSENT: held back by the rate limit). */
export const NEVER_SENT_CAUSES: ReadonlySet<string> = new Set(["ENOTSENT", "ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ERR_INVALID_URL"]);

/**
 * Whether a failed call may still have been carried out: everything but a refusal (4xx, 429)
 * and a request that never left. A write that failed like this may land later.
 */
export function mayHaveLanded(error: unknown): boolean {
    if (!isSmartsheetError(error)) return true;
    if (error.kind === "permanent" || error.statusCode === 429 || error.errorCode === 4003) return false;
    return !(error.causeCode !== undefined && NEVER_SENT_CAUSES.has(error.causeCode));
}

export function isSmartsheetError(error: unknown): error is SmartsheetError {
    return error instanceof SmartsheetError;
}
