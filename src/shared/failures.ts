/**
 * What an error says about going on, declared once by the error's own class where it is made,
 * and read by `failureKind` wherever a decision is taken (the step runner, the orchestration):
 *
 * - `transient`: try again; it will likely work (a 429, a 5xx, a timeout, a row written meanwhile).
 * - `ambiguous`: a write may or may not have happened: look before writing again; otherwise
 *   like `transient`.
 * - `permanent`: retrying will not help; a person has to change something first (park the job).
 * - `superseded`: not a failure but an outcome: the job belongs to another run now, or has moved
 *   on; stop quietly.
 * - `bug`: an assumption of the code broke (a TypeError, a record that should be there and is
 *   not). Whatever declares no kind is one. It may be a glitch, so a step's own retries try it
 *   again; then the job parks with its message, for a person to read.
 */
export type FailureKind = "transient" | "ambiguous" | "permanent" | "superseded" | "bug";

const KINDS: ReadonlySet<string> = new Set<FailureKind>(["transient", "ambiguous", "permanent", "superseded", "bug"]);

/** An error class declares its kind with this readonly property. */
export interface DeclaresFailureKind {
    readonly failureKind: FailureKind;
}

/**
 * The kind of `error`: what its class declares; for an Azure storage call's `RestError` (the
 * Table and Queue clients' own), its status: none (no answer), 408, 429 or 5xx is `transient`,
 * any other refusal (a 4xx its caller did not handle where it made the call) a `bug`; anything
 * else, a `bug`.
 */
export function failureKind(error: unknown): FailureKind {
    if (typeof error !== "object" || error === null) return "bug";
    const declared = (error as { failureKind?: unknown }).failureKind;
    if (typeof declared === "string" && KINDS.has(declared)) return declared as FailureKind;
    if (isStorageError(error)) {
        const status = error.statusCode;
        return status === undefined || status === 408 || status === 429 || status >= 500 ? "transient" : "bug";
    }
    return "bug";
}

/** The message of whatever was thrown. */
export function messageOf(error: unknown): string {
    return error instanceof Error ? error.message : String(error);
}

/**
 * An Azure SDK `RestError` (by name, as `@azure/core-rest-pipeline`'s `isRestError` tells it, so
 * the Table and Queue clients' copies of the class both count).
 */
function isStorageError(error: object): error is Error & { statusCode?: number } {
    if (!(error instanceof Error) || error.name !== "RestError") return false;
    const status = (error as { statusCode?: unknown }).statusCode;
    return status === undefined || typeof status === "number";
}
