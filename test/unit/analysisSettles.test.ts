import { describe, expect, it } from "vitest";
import { analysisSettles } from "../../src/shared/provisioning/Blueprint";
import type { FolderChild } from "../../src/shared/smartsheet/model";

const listed = (modifiedAt: string | undefined): FolderChild =>
    ({ id: 1, name: "Suppliers", resourceType: "sheet", ...(modifiedAt === undefined ? {} : { modifiedAt }) }) as FolderChild;

describe("whether a template analysis is sure of the version it describes", () => {
    const edited = "2026-12-01T10:00:05Z"; // any time in [10:00:05, 10:00:06)

    it("is not settled while an edit could still land in the last edit's second", () => {
        expect(analysisSettles([listed(edited)], new Date("2026-12-01T10:00:05.900Z"), 0)).toBe(false);
    });

    it("is settled once the reads begin in a later second than every sheet's last edit", () => {
        expect(analysisSettles([listed(edited)], new Date("2026-12-01T10:00:06.000Z"), 0)).toBe(true);
    });

    it("leaves room for the clock skew allowed between the app and Smartsheet", () => {
        expect(analysisSettles([listed(edited)], new Date("2026-12-01T10:00:06.500Z"), 1_000)).toBe(false);
        expect(analysisSettles([listed(edited)], new Date("2026-12-01T10:00:07.000Z"), 1_000)).toBe(true);
    });

    it("judges by the latest edit of any sheet", () => {
        const sheets = [listed("2026-12-01T09:00:00Z"), { ...listed(edited), id: 2 }];
        expect(analysisSettles(sheets, new Date("2026-12-01T10:00:05.500Z"), 0)).toBe(false);
    });

    it("is never settled when a sheet is listed without a modification time", () => {
        expect(analysisSettles([listed(undefined)], new Date("2030-01-01T00:00:00Z"), 0)).toBe(false);
    });
});
