import fc from "fast-check";
import { expect, it } from "vitest";
import { composeProductNames } from "../../src/shared/naming/productNames";
import { expectedNames } from "../../tools/chaos/composedNames";

const TEMPLATE = ["Document Register", "Translations", "Specifications", "Approvals", "Suppliers", "Change Log", "Risk Register"];

/**
 * The auditor composes names from the written rules, with code of its own. Where the pipeline
 * and the auditor disagree on a name the intake sweep accepts, one of them misreads the rules.
 */
it("composes the same names as the pipeline for the names an intake row can hold", () => {
    const name = fc.oneof(
        fc.constantFrom("Hydraulic Pump Assembly", "Precision Torque Wrench Calibration Kit with Extended Warranty and Carry Case"),
        fc
            .array(fc.constantFrom("Pump", " ", "Torque", "👩‍🔬", "🇩🇪", "é", "e\u0301", "—", "/", "&", "漢字", "-", "Calibration", "(Marine)"), { maxLength: 40 })
            .map((parts) => parts.join("")),
    );
    fc.assert(
        fc.property(fc.stringMatching(/^[A-Z]{2,5}-[0-9]{1,8}$/), name, (code, productName) => {
            const cleaned = productName.normalize("NFC").replace(/\s+/g, " ").trim();
            fc.pre(/[\p{L}\p{N}]/u.test(cleaned) && !/^\p{M}/u.test(cleaned));
            const pipeline = composeProductNames(code, cleaned, TEMPLATE);
            const auditor = expectedNames(code, cleaned, TEMPLATE);
            expect(auditor.folder).toBe(pipeline.folder);
            expect(Object.fromEntries(auditor.sheets)).toEqual(pipeline.sheets);
        }),
        { numRuns: 3000 },
    );
});
