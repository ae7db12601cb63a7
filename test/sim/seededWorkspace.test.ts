import { describe, expect, it } from "vitest";
import { api, sdk, useSimulator } from "./simTestKit";

const context = useSimulator();

const TEMPLATE_NAMES = ["Document Register", "Translations", "Specifications", "Approvals", "Suppliers", "Change Log", "Risk Register"];

interface Column {
    id: number;
    title: string;
    type: string;
    primary?: boolean;
    options?: string[];
    formula?: string;
}

async function templateSheets(): Promise<Map<string, any>> {
    const { sim } = context;
    const children = await sdk(sim).folders.getFolderChildren({ folderId: sim.core.anchors.templateFolderId });
    const sheets = new Map<string, any>();
    for (const child of children.data) {
        sheets.set(child.name, (await api(sim, "GET", `sheets/${child.id}?include=crossSheetReferences`)).body);
    }
    return sheets;
}

function column(sheet: { columns: Column[] }, title: string): Column {
    const found = sheet.columns.find((candidate) => candidate.title === title);
    if (!found) throw new Error(`no column ${title}`);
    return found;
}

describe("the seeded demo workspace", () => {
    it("has Products (Industrial, Consumer), Templates/Product Template and Operations in workspace 'Sheetwright Demo'", () => {
        const { sim } = context;
        const state = sim.core.state();
        expect(state.workspace.name).toBe("Sheetwright Demo");
        const name = (id: number | null) => state.folders.find((folder) => folder.id === id)?.name ?? (id === state.workspace.id ? "<workspace>" : "?");
        expect(state.folders.map((folder) => `${name(folder.parentId)}/${folder.name}`)).toEqual([
            "<workspace>/Products",
            "Products/Industrial",
            "Products/Consumer",
            "<workspace>/Templates",
            "Templates/Product Template",
            "<workspace>/Operations",
        ]);
        expect(name(sim.core.anchors.productsFolderId)).toBe("Products");
        expect(name(sim.core.anchors.templateFolderId)).toBe("Product Template");
        const operations = state.folders.find((folder) => folder.name === "Operations")?.id;
        expect(state.sheets.filter((sheet) => sheet.folderId === operations).map((sheet) => sheet.id)).toEqual([
            sim.core.anchors.intakeSheetId,
            sim.core.anchors.filingIndexSheetId,
        ]);
        expect(state.sheets).toHaveLength(9);
    });

    it("holds exactly seven template sheets, each a primary column plus 2–4 others and 3–6 rows of data", async () => {
        const sheets = await templateSheets();
        expect([...sheets.keys()]).toEqual(TEMPLATE_NAMES);
        for (const sheet of sheets.values()) {
            expect(sheet.columns.filter((candidate: Column) => candidate.primary)).toHaveLength(1);
            expect(sheet.columns[0].primary).toBe(true);
            expect(sheet.columns.length - 1).toBeGreaterThanOrEqual(2);
            expect(sheet.columns.length - 1).toBeLessThanOrEqual(4);
            expect(sheet.rows.length).toBeGreaterThanOrEqual(3);
            expect(sheet.rows.length).toBeLessThanOrEqual(6);
            for (const row of sheet.rows) expect(row.cells[0].value ?? row.cells[0].formula).toBeTruthy();
        }
    });

    it("has exactly three formula holders wired by cross-sheet references to other template sheets", async () => {
        const { sim } = context;
        const sheets = await templateSheets();
        const approvals = sheets.get("Approvals");
        const changeLog = sheets.get("Change Log");
        const register = sheets.get("Document Register");

        expect(approvals.columns.map((c: Column) => c.title)).toEqual(["Document", "Approver", "Decision", "Change Count"]);
        expect(column(approvals, "Decision")).toMatchObject({ type: "PICKLIST", options: ["Pending", "Approved", "Rejected"] });
        const changeCount = column(approvals, "Change Count").id;
        for (const row of approvals.rows) {
            expect(row.cells.find((cell: { columnId: number }) => cell.columnId === changeCount)).toEqual({
                columnId: changeCount,
                formula: "=COUNTIF({Change Log Document}, Document@row)",
            });
        }
        expect(approvals.crossSheetReferences).toEqual([
            {
                id: expect.any(Number),
                name: "Change Log Document",
                sourceSheetId: changeLog.id,
                startColumnId: column(changeLog, "Document").id,
                endColumnId: column(changeLog, "Document").id,
                status: "OK",
            },
        ]);

        expect(changeLog.columns.map((c: Column) => c.title)).toEqual(["Document", "Change", "Changed On", "Approval Status"]);
        expect(column(changeLog, "Changed On").type).toBe("DATE");
        expect(column(changeLog, "Approval Status").formula).toBe('=IF(COUNTIF({Approvals Decision}, "Pending") > 0, "Awaiting approval", "Clear")');
        const decision = column(approvals, "Decision").id;
        const approvalsDecision = {
            id: expect.any(Number),
            name: "Approvals Decision",
            sourceSheetId: approvals.id,
            startColumnId: decision,
            endColumnId: decision,
            status: "OK",
        };
        expect(changeLog.crossSheetReferences).toEqual([approvalsDecision]);

        expect(register.columns.map((c: Column) => c.title)).toEqual(["Document Number", "Title", "Revision", "Status"]);
        expect(register.crossSheetReferences).toEqual([approvalsDecision]);
        const summary = (await api(sim, "GET", `sheets/${register.id}/summary`)).body.fields;
        expect(summary.map((field: Record<string, unknown>) => [field.title, field.type, field.objectValue, field.formula])).toEqual([
            ["Product Code", "TEXT_NUMBER", undefined, undefined],
            ["Approved Documents", "TEXT_NUMBER", undefined, '=COUNTIF({Approvals Decision}, "Approved")'],
            ["Owner", "TEXT_NUMBER", "Engineering", undefined],
        ]);

        for (const [name, sheet] of sheets) {
            const hasFormula =
                sheet.columns.some((c: Column) => c.formula) ||
                sheet.rows.some((row: { cells: Array<{ formula?: string }> }) => row.cells.some((cell) => cell.formula));
            expect([name, hasFormula || sheet.hasSummaryFields]).toEqual([name, ["Approvals", "Change Log", "Document Register"].includes(name)]);
        }
    });

    it("gives no other sheet summary fields or cross-sheet references", () => {
        const { sim } = context;
        const holders = sim.core
            .state()
            .sheets.filter((sheet) => sheet.summaryFields.length > 0 || sheet.crossSheetReferences.length > 0)
            .map((sheet) => [sheet.name, sheet.summaryFields.length, sheet.crossSheetReferences.length]);
        expect(holders).toEqual([
            ["Document Register", 3, 1],
            ["Approvals", 0, 1],
            ["Change Log", 0, 1],
        ]);
    });

    it("seeds the intake sheet with four requests, one of them unapproved and one with a name over 50 characters", async () => {
        const { sim } = context;
        const sheet = (await api(sim, "GET", `sheets/${sim.core.anchors.intakeSheetId}`)).body;
        expect(sheet.name).toBe("Product Intake");
        expect(sheet.columns.map((c: Column) => [c.title, c.type])).toEqual([
            ["Product Code", "TEXT_NUMBER"],
            ["Product Name", "TEXT_NUMBER"],
            ["Product Line", "PICKLIST"],
            ["Approved", "CHECKBOX"],
            ["Status", "TEXT_NUMBER"],
            ["Folder", "TEXT_NUMBER"],
        ]);
        expect(column(sheet, "Product Line").options).toEqual(["Industrial", "Consumer"]);
        const rows = sheet.rows.map((row: { cells: Array<{ value?: unknown }> }) => row.cells.map((cell) => cell.value));
        expect(rows).toEqual([
            ["IND-1042", "Hydraulic Pump Assembly", "Industrial", true, undefined, undefined],
            ["CON-2201", "Smart Kettle", "Consumer", true, undefined, undefined],
            ["IND-1043", "Precision Torque Wrench Calibration Kit with Extended Warranty and Carry Case", "Industrial", true, undefined, undefined],
            ["CON-2202", "Travel Mug", "Consumer", false, undefined, undefined],
        ]);
        expect((rows[2][1] as string).length).toBeGreaterThan(50);
    });

    it("seeds the filing index with one older product", async () => {
        const { sim } = context;
        const sheet = (await api(sim, "GET", `sheets/${sim.core.anchors.filingIndexSheetId}`)).body;
        expect(sheet.columns.map((c: Column) => c.title)).toEqual(["Product Code", "Register Sheet Id", "Register Link", "Folder Id"]);
        expect(sheet.rows).toHaveLength(1);
        const [code, registerId, link, folderId] = sheet.rows[0].cells.map((cell: { value?: unknown }) => cell.value);
        expect(code).toBe("IND-0999");
        expect(registerId).toMatch(/^\d{16}$/);
        expect(link).toMatch(/^https:\/\/app\.smartsheet\.com\/sheets\/\w+$/);
        expect(folderId).toMatch(/^\d{16}$/);
    });
});
