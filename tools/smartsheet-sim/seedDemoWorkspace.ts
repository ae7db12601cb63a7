import type { CellValue, SimAnchors, SimSheet } from "./model";
import type { NewColumn, Workspace } from "./Workspace";

/** Seed of the id source: the same seed gives the same demo ids after every reset. */
export const DEMO_SEED = 0x5eed2026;

type SeedCell = CellValue | { formula: string };

/** Which customer's copy of the demo workspace to seed: the first is the benchmark's, unchanged. */
export interface DemoSite {
    /** 1 for the first customer. */
    number: number;
}

/** The demo site's workspace name: "Sheetwright Demo", then "Sheetwright Demo 2"… */
export function demoWorkspaceName(site: DemoSite): string {
    return site.number === 1 ? "Sheetwright Demo" : `Sheetwright Demo ${site.number}`;
}

/** The demo site's product codes: the first site's as they are, site n's with `-Sn` (IND-1042-S2), so no two sites share one. */
export function demoProductCode(code: string, site: DemoSite): string {
    return site.number === 1 ? code : `${code}-S${site.number}`;
}

/**
 * The benchmark's reference workload: workspace "Sheetwright Demo" with Products (Industrial,
 * Consumer), Templates/Product Template (seven sheets, three of them wired by cross-sheet
 * references) and Operations (the intake sheet and the filing index). Another customer's site
 * is the same workspace under its own name and product codes.
 */
export function seedDemoWorkspace(workspace: Workspace, site: DemoSite = { number: 1 }): SimAnchors {
    const code = (text: string) => demoProductCode(text, site);
    const root = workspace.createWorkspace(demoWorkspaceName(site));
    const products = workspace.createFolder(root.id, "Products");
    workspace.createFolder(products.id, "Industrial");
    workspace.createFolder(products.id, "Consumer");
    const templates = workspace.createFolder(root.id, "Templates");
    const template = workspace.createFolder(templates.id, "Product Template");

    const register = sheet(workspace, template.id, "Document Register", [
        { title: "Document Number", primary: true },
        { title: "Title" },
        { title: "Revision" },
        { title: "Status", type: "PICKLIST", options: ["Draft", "In Review", "Released"] },
    ], [
        ["DOC-001", "Product Specification", "C", "Released"],
        ["DOC-002", "Assembly Drawing", "B", "Released"],
        ["DOC-003", "Test Procedure", "A", "In Review"],
        ["DOC-004", "User Manual", "A", "Draft"],
        ["DOC-005", "Declaration of Conformity", "A", "Draft"],
    ]);
    sheet(workspace, template.id, "Translations", [
        { title: "Document", primary: true },
        { title: "Language" },
        { title: "Translator" },
        { title: "Status", type: "PICKLIST", options: ["Not Started", "In Progress", "Complete"] },
    ], [
        ["DOC-001", "Spanish", "Traducciones Sol SL", "Complete"],
        ["DOC-004", "German", "Lingua Rhein GmbH", "In Progress"],
        ["DOC-004", "French", "Traduire Lyon SA", "Not Started"],
        ["DOC-005", "Japanese", "Honyaku Works KK", "Not Started"],
    ]);
    sheet(workspace, template.id, "Specifications", [
        { title: "Parameter", primary: true },
        { title: "Value" },
        { title: "Unit" },
        { title: "Tolerance" },
    ], [
        ["Operating Pressure", 210, "bar", "±5"],
        ["Flow Rate", 45, "L/min", "±2"],
        ["Operating Temperature", 80, "°C", "±3"],
        ["Weight", 12.5, "kg", "±0.2"],
        ["Noise Level", 68, "dB(A)", "max"],
    ]);
    const changeCount = { formula: "=COUNTIF({Change Log Document}, Document@row)" };
    const approvals = sheet(workspace, template.id, "Approvals", [
        { title: "Document", primary: true },
        { title: "Approver" },
        { title: "Decision", type: "PICKLIST", options: ["Pending", "Approved", "Rejected"] },
        { title: "Change Count" },
    ], [
        ["DOC-001", "A. Novak", "Approved", changeCount],
        ["DOC-002", "M. Laine", "Approved", changeCount],
        ["DOC-003", "A. Novak", "Pending", changeCount],
        ["DOC-004", "R. Osei", "Pending", changeCount],
        ["DOC-005", "M. Laine", "Rejected", changeCount],
    ]);
    sheet(workspace, template.id, "Suppliers", [
        { title: "Supplier", primary: true },
        { title: "Component" },
        { title: "Country" },
        { title: "Lead Time (days)" },
    ], [
        ["Kessler Hydraulik", "Seal kit", "Germany", 21],
        ["Nordic Castings", "Pump housing", "Finland", 35],
        ["Taiyo Precision", "Bearings", "Japan", 42],
        ["Ridgeway Fasteners", "Fastener set", "United Kingdom", 10],
    ]);
    const changeLog = sheet(workspace, template.id, "Change Log", [
        { title: "Document", primary: true },
        { title: "Change" },
        { title: "Changed On", type: "DATE" },
        {
            title: "Approval Status",
            formula: '=IF(COUNTIF({Approvals Decision}, "Pending") > 0, "Awaiting approval", "Clear")',
        },
    ], [
        ["DOC-001", "Bore diameter tolerance tightened", "2024-03-04"],
        ["DOC-002", "Exploded view added", "2024-03-11"],
        ["DOC-003", "Leak test step added", "2024-04-02"],
        ["DOC-001", "Housing material changed to 316L", "2024-04-18"],
    ]);
    sheet(workspace, template.id, "Risk Register", [
        { title: "Risk", primary: true },
        { title: "Likelihood", type: "PICKLIST", options: ["Low", "Medium", "High"] },
        { title: "Impact", type: "PICKLIST", options: ["Low", "Medium", "High"] },
        { title: "Mitigation" },
    ], [
        ["Seal supplier delay", "Medium", "High", "Qualify a second seal supplier"],
        ["Casting porosity", "Low", "High", "X-ray first articles"],
        ["Certification slip", "Medium", "Medium", "Book the test lab early"],
        ["Currency swing", "High", "Low", "Quote in EUR"],
    ]);

    const decision = columnId(approvals, "Decision");
    reference(workspace, approvals, "Change Log Document", changeLog, columnId(changeLog, "Document"));
    reference(workspace, changeLog, "Approvals Decision", approvals, decision);
    reference(workspace, register, "Approvals Decision", approvals, decision);
    const now = workspace.now();
    register.summaryFields.push(
        { id: workspace.nextId(), title: "Product Code", type: "TEXT_NUMBER", createdAt: now, modifiedAt: now },
        {
            id: workspace.nextId(),
            title: "Approved Documents",
            type: "TEXT_NUMBER",
            formula: '=COUNTIF({Approvals Decision}, "Approved")',
            createdAt: now,
            modifiedAt: now,
        },
        { id: workspace.nextId(), title: "Owner", type: "TEXT_NUMBER", objectValue: "Engineering", createdAt: now, modifiedAt: now },
    );

    const operations = workspace.createFolder(root.id, "Operations");
    const intake = sheet(workspace, operations.id, "Product Intake", [
        { title: "Product Code", primary: true },
        { title: "Product Name" },
        { title: "Product Line", type: "PICKLIST", options: ["Industrial", "Consumer"] },
        { title: "Approved", type: "CHECKBOX" },
        { title: "Status" },
        { title: "Folder" },
    ], [
        [code("IND-1042"), "Hydraulic Pump Assembly", "Industrial", true],
        [code("CON-2201"), "Smart Kettle", "Consumer", true],
        [code("IND-1043"), "Precision Torque Wrench Calibration Kit with Extended Warranty and Carry Case", "Industrial", true],
        [code("CON-2202"), "Travel Mug", "Consumer", false],
    ]);
    const filingIndex = sheet(workspace, operations.id, "Filing Index", [
        { title: "Product Code", primary: true },
        { title: "Register Sheet Id" },
        { title: "Register Link" },
        { title: "Folder Id" },
    ], [[code("IND-0999"), String(workspace.nextId()), workspace.newPermalink("sheets"), String(workspace.nextId())]]);

    return {
        workspaceId: root.id,
        intakeSheetId: intake.id,
        templateFolderId: template.id,
        productsFolderId: products.id,
        filingIndexSheetId: filingIndex.id,
    };
}

/** A sheet whose rows list cell contents in column order; missing trailing cells stay empty. */
function sheet(workspace: Workspace, folderId: number, name: string, columns: NewColumn[], rows: SeedCell[][]): SimSheet {
    const created = workspace.createSheet(folderId, name, columns);
    const now = workspace.now();
    for (const contents of rows) {
        const cells = new Map(
            contents.flatMap((content, i) => {
                const column = created.columns[i];
                if (!column) return [];
                return [[column.id, typeof content === "object" ? { formula: content.formula } : { value: content }] as const];
            }),
        );
        created.rows.push({ id: workspace.nextId(), createdAt: now, modifiedAt: now, cells });
    }
    return created;
}

function columnId(sheet: SimSheet, title: string): number {
    const column = sheet.columns.find((candidate) => candidate.title === title);
    if (!column) throw new Error(`Seed sheet ${sheet.name} has no column ${title}`);
    return column.id;
}

function reference(workspace: Workspace, sheet: SimSheet, name: string, source: SimSheet, sourceColumnId: number): void {
    sheet.crossSheetReferences.push({
        id: workspace.nextId(),
        name,
        sourceSheetId: source.id,
        startColumnId: sourceColumnId,
        endColumnId: sourceColumnId,
    });
}
