import type { DeclaresFailureKind } from "../failures";

/** The job now belongs to another instance (a recovery took over) or is no longer running. */
export class SupersededError extends Error implements DeclaresFailureKind {
    readonly failureKind = "superseded" as const;

    constructor(message: string) {
        super(message);
        this.name = "SupersededError";
    }
}

/** A problem only a person can fix (a broken template, a name that cannot fit…): park the job. */
export class NeedsPersonError extends Error implements DeclaresFailureKind {
    readonly failureKind = "permanent" as const;

    constructor(message: string) {
        super(message);
        this.name = "NeedsPersonError";
    }
}

/** Another run of the same step is writing the same thing right now; try again shortly. */
export class ClaimedElsewhereError extends Error implements DeclaresFailureKind {
    readonly failureKind = "transient" as const;

    constructor(message: string) {
        super(message);
        this.name = "ClaimedElsewhereError";
    }
}
