import { describe, expect, it } from "vitest";
import type { FolderChild } from "../../src/shared/smartsheet/model";
import { NeedsPersonError } from "../../src/shared/provisioning/errors";
import {
    DOCUMENT_REGISTER,
    isNamedLikeAProductSheet,
    isRemapped,
    PRODUCT_CODE_FIELD,
    referencesKeptAsTheyAre,
    sheetsToCopy,
    sheetsToRemap,
    takesProductCode,
    templateSheetNamed,
    templateSheetsIn,
} from "../../src/shared/provisioning/templateRules";

const TEMPLATE_FOLDER = 9001;
const sheet = (id: number, name: string): FolderChild => ({ id, name, resourceType: "sheet" });
const folder = (id: number, name: string): FolderChild => ({ id, name, resourceType: "folder" });

const FILING_INDEX = 500;
const OTHER_PRODUCT_SHEET = 600;
const intoTranslations = { name: "Translations Range 1", sourceTemplate: "Translations", sourceSheetId: 2 };
const intoFilingIndex = { name: "Filing Index Range", sourceSheetId: FILING_INDEX };
const intoOtherProduct = { name: "Old Product Range", sourceSheetId: OTHER_PRODUCT_SHEET };

describe("the template sheets", () => {
    it("are the sheets of the template folder, in its order; a folder or report in it is none", () => {
        const children = [sheet(1, "Document Register"), folder(2, "Archive"), { id: 3, name: "Status", resourceType: "report" }, sheet(4, "Translations")];
        expect(templateSheetsIn(TEMPLATE_FOLDER, children).map((child) => child.name)).toEqual(["Document Register", "Translations"]);
    });

    it("need a person when the template folder holds no sheet", () => {
        expect(() => templateSheetsIn(TEMPLATE_FOLDER, [folder(2, "Archive")])).toThrow(NeedsPersonError);
        expect(() => templateSheetsIn(TEMPLATE_FOLDER, [])).toThrow(`The template folder ${TEMPLATE_FOLDER} holds no sheets; put the template sheets back.`);
    });

    it("need a person when two of them share a name, spaces around it aside", () => {
        expect(() => templateSheetsIn(TEMPLATE_FOLDER, [sheet(1, "Change Log"), sheet(2, "Change Log ")])).toThrow(
            'The template folder has two sheets named "Change Log"; template sheet names must be distinct.',
        );
    });

    it("are every one copied for each product, by name", () => {
        expect(sheetsToCopy([{ name: "Document Register" }, { name: "Translations" }, { name: "Risk Register" }])).toEqual([
            "Document Register",
            "Translations",
            "Risk Register",
        ]);
    });

    it("give a job's copy the template sheet of its name, and none once that name is gone from the template", () => {
        const sheets = [
            { name: "Document Register", templateSheetId: 1 },
            { name: "Translations", templateSheetId: 2 },
        ];
        expect(templateSheetNamed(sheets, "Translations")).toEqual({ name: "Translations", templateSheetId: 2 });
        expect(templateSheetNamed(sheets, "Suppliers")).toBeUndefined();
    });
});

describe("what the copies are for", () => {
    it("the copy of the template sheet named Document Register is the one the Filing Index points at", () => {
        expect(DOCUMENT_REGISTER).toBe("Document Register");
    });

    it("a copy takes the product code when its template sheet has a Product Code summary field", () => {
        expect(PRODUCT_CODE_FIELD).toBe("Product Code");
        expect(takesProductCode({ summaryTitles: ["Owner", "Product Code"] })).toBe(true);
        expect(takesProductCode({ summaryTitles: ["Owner", "Product code"] })).toBe(false);
        expect(takesProductCode({ summaryTitles: [] })).toBe(false);
    });
});

describe("the copies' references", () => {
    it("a reference into a template sheet is remapped; one to a sheet outside the template is not", () => {
        expect(isRemapped(intoTranslations)).toBe(true);
        expect(isRemapped(intoFilingIndex)).toBe(false);
        expect(isRemapped(intoOtherProduct)).toBe(false);
    });

    it("the copies remapped are those of template sheets with a reference into the template, in the template's order", () => {
        const register = { name: "Document Register", references: [intoTranslations, intoFilingIndex] };
        const translations = { name: "Translations", references: [] };
        const suppliers = { name: "Suppliers", references: [intoFilingIndex] };
        const riskRegister = { name: "Risk Register", references: [intoTranslations] };
        expect(sheetsToRemap([register, translations, suppliers, riskRegister])).toEqual([register, riskRegister]);
    });

    it("a copy keeps as they are the references its formulas use that are not remapped, in the order the formulas name them", () => {
        const register = {
            references: [intoTranslations, intoFilingIndex, intoOtherProduct, { name: "Unused Range", sourceSheetId: 700 }],
            formulaReferences: ["Old Product Range", "Filing Index Range", "Translations Range 1", "No Such Range"],
        };
        expect(referencesKeptAsTheyAre(register)).toEqual([intoOtherProduct, intoFilingIndex]);
    });

    it("a template sheet analysed before the references its formulas use were recorded counts every reference it has as used", () => {
        expect(referencesKeptAsTheyAre({ references: [intoTranslations, intoFilingIndex, intoOtherProduct] })).toEqual([intoFilingIndex, intoOtherProduct]);
    });

    it("a sheet outside the template named like a product's copy of a template sheet is another product's, never a shared one", () => {
        const templates = ["Document Register", "Translations"];
        expect(isNamedLikeAProductSheet("ACME-7 Pump - Document Register", templates)).toBe(true);
        expect(isNamedLikeAProductSheet("  ACME-7   Pump -\u00a0Translations ", templates)).toBe(true);
        expect(isNamedLikeAProductSheet("Filing Index", templates)).toBe(false);
        expect(isNamedLikeAProductSheet(" - Document Register", templates)).toBe(false);
        expect(isNamedLikeAProductSheet("ACME-7 Pump - Suppliers", templates)).toBe(false);
    });
});
