import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
    cleanText,
    composeProductNames,
    MAX_NAME_LENGTH,
    NameDoesNotFitError,
    referenceName,
} from "../../src/shared/naming/productNames";
import { IntakeStatus } from "../../src/shared/intakeRow/intakeStatus";

const TEMPLATE = ["Document Register", "Translations", "Specifications", "Approvals", "Suppliers", "Change Log", "Risk Register"];

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Product names as people type them: emoji, combining marks, punctuation, whitespace runs. */
const productName = fc.oneof(
    fc.string({ unit: "grapheme", maxLength: 120 }),
    fc.string({ unit: "binary", maxLength: 120 }),
    fc
        .array(
            fc.constantFrom("Pump", " ", "   ", "\t", "\n", "👩‍🔬", "🇩🇪", "é", "e\u0301", "a\u0308\u0323", "—", "/", "&", "𝔘", "漢字", "-", "…"),
            { maxLength: 60 },
        )
        .map((parts) => parts.join("")),
);
const productCode = fc.stringMatching(/^[A-Z]{2,5}-[0-9]{1,8}$/);

describe("composeProductNames", () => {
    it("fits every sheet and folder name into 50 characters, whatever the product name", () => {
        fc.assert(
            fc.property(productCode, productName, (code, name) => {
                const names = composeProductNames(code, name, TEMPLATE);
                for (const composed of [names.folder, ...Object.values(names.sheets)]) {
                    expect(composed.length).toBeLessThanOrEqual(MAX_NAME_LENGTH);
                }
            }),
            { numRuns: 2000 },
        );
    });

    it("keeps the product code and the sheet's own name in full", () => {
        fc.assert(
            fc.property(productCode, productName, (code, name) => {
                const names = composeProductNames(code, name, TEMPLATE);
                expect(names.folder.startsWith(code)).toBe(true);
                for (const template of TEMPLATE) {
                    expect(names.sheets[template]!.startsWith(code)).toBe(true);
                    expect(names.sheets[template]!.endsWith(` - ${template}`)).toBe(true);
                }
            }),
        );
    });

    it("never splits a surrogate pair or leaves a combining mark without its letter", () => {
        fc.assert(
            fc.property(productCode, productName, (code, name) => {
                for (const composed of Object.values(composeProductNames(code, name, TEMPLATE).sheets)) {
                    expect(composed).not.toMatch(LONE_SURROGATE);
                    expect(composed).not.toMatch(/ \p{M}/u);
                }
            }),
            { numRuns: 2000 },
        );
    });

    it("lets no invisible or bidirectional formatting character (Unicode Cf) into a name, keeping the joiner inside an emoji", () => {
        const names = composeProductNames("IND-1", "Pump\u202Eexe.\u2066Set\u2069\u200B \uFEFFLab 👩\u200D🔬 a\u200Db", TEMPLATE);
        for (const name of [names.folder, ...Object.values(names.sheets)]) {
            expect(name.replace(/(?<=\p{Extended_Pictographic})\u200D(?=\p{Extended_Pictographic})/gu, "")).not.toMatch(/\p{Cf}/u);
        }
        expect(names.folder).toBe("IND-1 Pumpexe.Set Lab 👩\u200D🔬 ab");
        fc.assert(
            fc.property(fc.string({ unit: "binary", maxLength: 80 }), (name) => {
                const cleaned = cleanText(name);
                return !/\p{Cf}/u.test(cleaned.replace(/(?<=\p{Extended_Pictographic}\uFE0F?)\u200D(?=\p{Extended_Pictographic})/gu, ""));
            }),
            { numRuns: 2000 },
        );
    });

    it("gives the seven sheets of a product seven distinct names", () => {
        fc.assert(
            fc.property(productCode, productName, (code, name) => {
                const names = Object.values(composeProductNames(code, name, TEMPLATE).sheets);
                expect(new Set(names).size).toBe(TEMPLATE.length);
            }),
        );
    });

    it("composes the same names every time for the same request", () => {
        fc.assert(
            fc.property(productCode, productName, (code, name) => {
                expect(composeProductNames(code, name, TEMPLATE)).toEqual(composeProductNames(code, name, [...TEMPLATE]));
            }),
        );
    });

    it("leaves short names alone and shortens a long one with an ellipsis", () => {
        expect(composeProductNames("CON-2201", "Smart  Kettle\n", TEMPLATE)).toEqual({
            folder: "CON-2201 Smart Kettle",
            sheets: expect.objectContaining({ "Document Register": "CON-2201 Smart Kettle - Document Register" }),
        });
        const long = composeProductNames(
            "IND-1043",
            "Precision Torque Wrench Calibration Kit with Extended Warranty and Carry Case",
            TEMPLATE,
        );
        expect(long.sheets["Document Register"]).toBe("IND-1043 Precision Torque… - Document Register");
        expect(long.sheets["Approvals"]).toBe("IND-1043 Precision Torque… - Approvals");
        expect(long.folder).toBe("IND-1043 Precision Torque Wrench Calibration Kit…");
    });

    it("drops the product name entirely when not one character of it fits", () => {
        const names = composeProductNames("ABCDEFGHIJKLMNOPQRSTUVWXYZ-1", "Pump", TEMPLATE);
        expect(names.sheets["Document Register"]).toBe("ABCDEFGHIJKLMNOPQRSTUVWXYZ-1 - Document Register");
    });

    it("refuses a code that leaves no room for the sheet's name, saying what to change", () => {
        expect(() => composeProductNames("X".repeat(31), "Pump", TEMPLATE)).toThrow(NameDoesNotFitError);
        expect(() => composeProductNames("X".repeat(31), "Pump", TEMPLATE)).toThrow(/shorter product code/);
    });

    it("refuses a template whose sheet names repeat", () => {
        expect(() => composeProductNames("IND-1", "Pump", ["Approvals", "Approvals "])).toThrow(/repeated: Approvals/);
    });
});

describe("referenceName", () => {
    it("is stable, fits, and differs from the template reference it replaces", () => {
        fc.assert(
            fc.property(productCode, fc.string({ unit: "grapheme", minLength: 1, maxLength: 80 }), (code, original) => {
                const name = referenceName(code, original);
                expect(name).toBe(referenceName(code, original));
                expect(name.length).toBeLessThanOrEqual(MAX_NAME_LENGTH);
                expect(name).not.toBe(cleanText(original));
                expect(name).not.toMatch(LONE_SURROGATE);
            }),
        );
        expect(referenceName("IND-1042", "Approvals Decision")).toBe("IND-1042 Approvals Decision");
    });
});

describe("intake status cells", () => {
    it("never carry control or invisible formatting characters from a reason, and stay within 300 characters on whole graphemes", () => {
        const status = IntakeStatus.rejected(`Product Line "Kit\u202Echen\u200B" has no folder\nunder Products ${"👩‍🔬".repeat(200)}`);
        expect(status).not.toMatch(/[\p{Cc}\u202E\u200B]/u);
        expect(status.startsWith('Rejected — Product Line "Kitchen" has no folder under Products')).toBe(true);
        expect(status.length).toBeLessThanOrEqual("Rejected — ".length + 300);
        expect(status).not.toMatch(/[\uD800-\uDBFF]$/);
    });
});
