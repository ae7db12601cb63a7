declare const claimKey: unique symbol;

/**
 * The key of a claim on the job row (`JobRow.claims`): one per write that must happen once.
 * Rows in flight hold these keys as spelt here, so a key's spelling never changes.
 */
export type ClaimKey = string & { readonly [claimKey]: true };

const key = (text: string) => text as ClaimKey;

export const ClaimKey = {
    /** The product-line folder under the products folder. */
    lineFolder: key("lineFolder"),
    /** The product's folder in its product line's folder. */
    folder: key("folder"),
    /** The product's copy of a template sheet. */
    copy: (template: string) => key(`copy:${template}`),
    /** The product's references in the copy of a template sheet whose formulas are all in its summary. */
    references: (template: string) => key(`references:${template}`),
    /** The summary request of the copy of a template sheet: its remapped formulas, and the product code with them. */
    summary: (template: string) => key(`summary:${template}`),
    /** The product code stamped on the copy of a template sheet. */
    stamp: (template: string) => key(`stamp:${template}`),
    /** The product's row in the Filing Index. */
    register: key("register"),
    /** The status on the intake row. */
    intake: key("intake"),
    /** One change (by its index in the run) of the product's convergence to a template version. */
    convergence: (version: string, index: number) => key(`converge:${version}:${index}`),
} as const;
