import { z } from "zod";
import { apiErrors } from "./ApiError";
import { JsonId, parseBody } from "./parseBody";
import { pageOf } from "./queryParams";
import { renderReference, type ApiCrossSheetReference } from "./render";
import { success, type RouteContext } from "./RouteContext";
import type { SimCrossSheetReference, SimSheet } from "./model";
import type { Workspace } from "./Workspace";

export function listCrossSheetReferences({ workspace, id, query }: RouteContext): unknown {
    const sheet = workspace.sheet(id("sheetId"));
    const references = sheet.crossSheetReferences.map((reference) => render(workspace, reference));
    const page = pageOf(references, query);
    return { pageNumber: page.pageNumber, pageSize: page.pageSize, totalPages: page.totalPages, totalCount: references.length, data: page.data };
}

export function getCrossSheetReference({ workspace, id }: RouteContext): unknown {
    const sheet = workspace.sheet(id("sheetId"));
    const reference = sheet.crossSheetReferences.find((candidate) => candidate.id === id("crossSheetReferenceId"));
    if (!reference) throw apiErrors.notFound();
    return render(workspace, reference);
}

const CreateReferenceBody = z.looseObject({
    name: z.string().min(1).optional(),
    sourceSheetId: JsonId,
    startRowId: JsonId.optional(),
    endRowId: JsonId.optional(),
    startColumnId: JsonId.optional(),
    endColumnId: JsonId.optional(),
});
type CreateReferenceBody = z.infer<typeof CreateReferenceBody>;

/** A column range, a row range, or both; every id must belong to the source sheet. */
export function createCrossSheetReference({ workspace, id, body }: RouteContext): unknown {
    const sheet = workspace.sheet(id("sheetId"));
    const request = parseBody(CreateReferenceBody, body);
    const source = workspace.sheet(request.sourceSheetId);
    checkRange(request, "Column", (columnId) => source.columns.some((column) => column.id === columnId));
    checkRange(request, "Row", (rowId) => source.rows.some((row) => row.id === rowId));
    if (request.startColumnId === undefined && request.startRowId === undefined) throw apiErrors.missingAttribute("startColumnId");

    const name = request.name ?? generatedName(sheet, source);
    if (sheet.crossSheetReferences.some((reference) => reference.name === name)) throw apiErrors.alreadyExists();
    const reference: SimCrossSheetReference = {
        id: workspace.nextId(),
        name,
        sourceSheetId: source.id,
        ...(request.startRowId === undefined ? {} : { startRowId: request.startRowId, endRowId: request.endRowId }),
        ...(request.startColumnId === undefined ? {} : { startColumnId: request.startColumnId, endColumnId: request.endColumnId }),
    };
    sheet.crossSheetReferences.push(reference);
    workspace.touch(sheet);
    return success(render(workspace, reference));
}

function checkRange(request: CreateReferenceBody, kind: "Column" | "Row", exists: (id: number) => boolean): void {
    const start = request[`start${kind}Id`];
    const end = request[`end${kind}Id`];
    if (start === undefined && end === undefined) return;
    if (start === undefined) throw apiErrors.missingAttribute(`start${kind}Id`);
    if (end === undefined) throw apiErrors.missingAttribute(`end${kind}Id`);
    if (!exists(start)) throw apiErrors.invalidValue(start, `start${kind}Id`);
    if (!exists(end)) throw apiErrors.invalidValue(end, `end${kind}Id`);
}

function generatedName(sheet: SimSheet, source: SimSheet): string {
    for (let n = 1; ; n++) {
        const name = `${source.name} Range ${n}`;
        if (!sheet.crossSheetReferences.some((reference) => reference.name === name)) return name;
    }
}

function render(workspace: Workspace, reference: SimCrossSheetReference): ApiCrossSheetReference {
    return renderReference(reference, workspace.sheets.has(reference.sourceSheetId));
}
