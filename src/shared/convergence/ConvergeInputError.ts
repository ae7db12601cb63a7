import type { DeclaresFailureKind } from "../failures";

/**
 * A convergence asked for something that does not exist (a template version, a site, a product)
 * or cannot be planned: nothing was read from Smartsheet or written anywhere. The message names
 * what exists, so the caller can ask again.
 */
export class ConvergeInputError extends Error implements DeclaresFailureKind {
    readonly failureKind = "permanent" as const;

    constructor(message: string) {
        super(message);
        this.name = "ConvergeInputError";
    }
}
