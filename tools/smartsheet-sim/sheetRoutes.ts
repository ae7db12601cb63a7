import { z } from "zod";
import { apiErrors } from "./ApiError";
import { assertNameFits } from "./assertNameFits";
import { JsonId, parseBody } from "./parseBody";
import { enumListParam, idListParam, intParam, pageOf, timeParam } from "./queryParams";
import { isoTime, renderColumn, renderReference, renderRow, rowPositions } from "./render";
import { success, type RouteContext } from "./RouteContext";
import type { SimSheet } from "./model";

const COPY_INCLUDES = [
    "data",
    "cellLinks",
    "attachments",
    "discussions",
    "filters",
    "forms",
    "rules",
    "ruleRecipients",
    "shares",
    "all",
];

const CopySheetBody = z.looseObject({
    destinationType: z.enum(["folder", "workspace", "home"]),
    destinationId: JsonId,
    newName: z.string().min(1),
});

export function copySheet({ workspace, config, id, query, body }: RouteContext): unknown {
    const source = workspace.sheet(id("sheetId"));
    const include = enumListParam(query, "include", COPY_INCLUDES);
    enumListParam(query, "exclude", ["sheetHyperlinks"]);
    const request = parseBody(CopySheetBody, body);
    if (request.destinationType === "home") throw apiErrors.invalidValue("home", "destinationType");
    const destination = workspace.container(request.destinationId, request.destinationType);
    assertNameFits(request.newName, "sheet.name", config.nameLimit);
    const all = include.has("all");
    const copy = workspace.copySheet(source, destination.id, request.newName, {
        data: all || include.has("data"),
        cellLinks: all || include.has("cellLinks"),
    });
    return success(sheetReference(copy));
}

const UpdateSheetBody = z.looseObject({ name: z.string().min(1).optional() });

export function updateSheet({ workspace, config, id, body }: RouteContext): unknown {
    const sheet = workspace.sheet(id("sheetId"));
    const { name } = parseBody(UpdateSheetBody, body);
    if (name !== undefined) {
        assertNameFits(name, "sheet.name", config.nameLimit);
        sheet.name = name;
    }
    workspace.touch(sheet);
    return success(sheetReference(sheet));
}

export function deleteSheet({ workspace, id }: RouteContext): unknown {
    workspace.deleteSheet(id("sheetId"));
    return success();
}

const SHEET_INCLUDES = [
    "attachments",
    "columnType",
    "contactReferences",
    "crossSheetReferences",
    "discussions",
    "filters",
    "filterDefinitions",
    "format",
    "ganttConfig",
    "objectValue",
    "ownerInfo",
    "proofs",
    "rowPermalink",
    "rowWriterInfo",
    "source",
    "writerInfo",
];
const SHEET_EXCLUDES = ["filteredOutRows", "linkInFromCellDetails", "linksOutToCellsDetails", "nonexistentCells"];

export function getSheet({ workspace, id, query }: RouteContext): unknown {
    const sheet = workspace.sheet(id("sheetId"));
    const include = enumListParam(query, "include", SHEET_INCLUDES);
    const exclude = enumListParam(query, "exclude", SHEET_EXCLUDES);
    intParam(query, "level", { min: 0 });
    const ifVersionAfter = intParam(query, "ifVersionAfter");
    if (ifVersionAfter !== undefined && sheet.version <= ifVersionAfter) return { version: sheet.version };

    const columnIds = idListParam(query, "columnIds");
    const rowIds = idListParam(query, "rowIds");
    const rowNumbers = idListParam(query, "rowNumbers");
    const since = timeParam(query, "rowsModifiedSince");
    const positions = rowPositions(sheet);

    const columns = sheet.columns
        .map((column, index) => ({ column, index }))
        .filter(({ column }) => !columnIds || columnIds.includes(column.id));
    let rows = sheet.rows.filter(
        (row) =>
            (!rowIds || rowIds.includes(row.id)) &&
            (!rowNumbers || rowNumbers.includes(positions.get(row.id)?.rowNumber ?? 0)) &&
            (since === undefined || wholeSeconds(row.modifiedAt) >= wholeSeconds(since)),
    );
    // "If neither pageSize nor page is specified, returns all rows."
    if (query.has("page") || query.has("pageSize")) rows = pageOf(rows, query).data;

    const cellOptions = { objectValue: include.has("objectValue"), skipEmpty: exclude.has("nonexistentCells") };
    return {
        id: sheet.id,
        name: sheet.name,
        version: sheet.version,
        totalRowCount: sheet.rows.length,
        accessLevel: "OWNER",
        ganttEnabled: false,
        dependenciesEnabled: false,
        resourceManagementEnabled: false,
        cellImageUploadEnabled: true,
        favorite: false,
        userSettings: { criticalPathEnabled: false, displaySummaryTasks: true },
        permalink: sheet.permalink,
        createdAt: isoTime(sheet.createdAt),
        modifiedAt: isoTime(sheet.modifiedAt),
        hasSummaryFields: sheet.summaryFields.length > 0,
        columns: columns.map(({ column, index }) => renderColumn(column, index)),
        rows: rows.map((row) =>
            renderRow(
                row,
                positions.get(row.id),
                columns.map(({ column }) => column),
                cellOptions,
            ),
        ),
        ...(include.has("crossSheetReferences")
            ? {
                  crossSheetReferences: sheet.crossSheetReferences.map((reference) =>
                      renderReference(reference, workspace.sheets.has(reference.sourceSheetId)),
                  ),
              }
            : {}),
    };
}

function sheetReference(sheet: SimSheet): Record<string, unknown> {
    return { id: sheet.id, name: sheet.name, accessLevel: "OWNER", permalink: sheet.permalink };
}

/** Smartsheet keeps whole seconds: a row changed in the same second as `rowsModifiedSince` is included. */
function wholeSeconds(ms: number): number {
    return Math.floor(ms / 1000) * 1000;
}
