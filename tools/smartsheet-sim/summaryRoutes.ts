import { z } from "zod";
import { apiErrors } from "./ApiError";
import { JsonId, parseBody } from "./parseBody";
import { boolParam, enumListParam, idListParam, pageOf } from "./queryParams";
import { renderSummaryField, type ApiSummaryField } from "./render";
import { success, type RouteContext } from "./RouteContext";
import { COLUMN_TYPES, type SimSheet, type SimSummaryField } from "./model";

export function getSummary({ workspace, id, query }: RouteContext): unknown {
    const sheet = workspace.sheet(id("sheetId"));
    enumListParam(query, "include", ["format", "writerInfo"]);
    const exclude = enumListParam(query, "exclude", ["displayValue", "image", "imageAltText"]);
    return { fields: renderFields(sheet, sheet.summaryFields, !exclude.has("displayValue")) };
}

export function getSummaryFields({ workspace, id, query }: RouteContext): unknown {
    const sheet = workspace.sheet(id("sheetId"));
    enumListParam(query, "include", ["format", "writerInfo"]);
    const exclude = enumListParam(query, "exclude", ["displayValue", "image", "imageAltText"]);
    const page = pageOf(renderFields(sheet, sheet.summaryFields, !exclude.has("displayValue")), query);
    return {
        pageNumber: page.pageNumber,
        pageSize: page.pageSize,
        totalPages: page.totalPages,
        totalCount: sheet.summaryFields.length,
        data: page.data,
    };
}

const NewField = z.looseObject({
    title: z.string().min(1),
    type: z.enum(COLUMN_TYPES).default("TEXT_NUMBER"),
    objectValue: z.unknown().optional(),
    formula: z.string().optional(),
    index: z.number().int().nonnegative().optional(),
});

/** Summary writes carry `objectValue`; Smartsheet has no `value` attribute on a summary field. */
export function addSummaryFields({ workspace, id, query, body }: RouteContext): unknown {
    const sheet = workspace.sheet(id("sheetId"));
    const renameIfConflict = boolParam(query, "renameIfConflict") ?? false;
    const inputs = fieldList(body).map((field, index) => parseBody(NewField, field, { index }));
    const titles = new Set<string>();
    for (const input of inputs) {
        if (titles.has(input.title)) throw apiErrors.duplicateSummaryTitleInRequest();
        titles.add(input.title);
        checkValueOrFormula(input);
        if (!renameIfConflict && sheet.summaryFields.some((field) => field.title === input.title)) throw apiErrors.duplicateSummaryTitle();
    }

    const now = workspace.touch(sheet);
    const created = inputs.map((input) => {
        const field: SimSummaryField = {
            id: workspace.nextId(),
            title: freeTitle(sheet, input.title),
            type: input.type,
            ...valueOrFormula(input),
            createdAt: now,
            modifiedAt: now,
        };
        sheet.summaryFields.splice(Math.min(input.index ?? sheet.summaryFields.length, sheet.summaryFields.length), 0, field);
        return field;
    });
    return success(renderFields(sheet, created, true), sheet.version);
}

const FieldChange = z.looseObject({
    id: JsonId,
    title: z.string().min(1).optional(),
    type: z.enum(COLUMN_TYPES).optional(),
    objectValue: z.unknown().optional(),
    formula: z.string().optional(),
});

/** `formula: ""` or `objectValue: null` clears the field. */
export function updateSummaryFields({ workspace, id, body }: RouteContext): unknown {
    const sheet = workspace.sheet(id("sheetId"));
    const changes = fieldList(body).map((field, index) => {
        const change = parseBody(FieldChange, field, { index });
        const target = sheet.summaryFields.find((candidate) => candidate.id === change.id);
        if (!target) throw apiErrors.notFound();
        checkValueOrFormula(change);
        if (change.title !== undefined && sheet.summaryFields.some((other) => other !== target && other.title === change.title)) {
            throw apiErrors.duplicateSummaryTitle();
        }
        return { change, target };
    });

    const now = workspace.touch(sheet);
    for (const { change, target } of changes) {
        if (change.title !== undefined) target.title = change.title;
        if (change.type !== undefined) target.type = change.type;
        if ("objectValue" in change || change.formula !== undefined) {
            delete target.objectValue;
            delete target.formula;
            Object.assign(target, valueOrFormula(change));
        }
        target.modifiedAt = now;
    }
    return success(
        renderFields(
            sheet,
            changes.map(({ target }) => target),
            true,
        ),
        sheet.version,
    );
}

/** `DELETE …/summary/fields?ids=…[&ignoreSummaryFieldsNotFound=true]`: an unknown id is 404 unless ignored. */
export function deleteSummaryFields({ workspace, id, query }: RouteContext): unknown {
    const sheet = workspace.sheet(id("sheetId"));
    const ids = idListParam(query, "ids");
    if (!ids || ids.length === 0) throw apiErrors.missingParameter("ids");
    const ignoreMissing = boolParam(query, "ignoreSummaryFieldsNotFound") ?? false;
    const present = new Set(sheet.summaryFields.map((field) => field.id));
    if (!ignoreMissing && ids.some((fieldId) => !present.has(fieldId))) throw apiErrors.notFound();
    const doomed = new Set(ids.filter((fieldId) => present.has(fieldId)));
    if (doomed.size > 0) {
        sheet.summaryFields = sheet.summaryFields.filter((field) => !doomed.has(field.id));
        workspace.touch(sheet);
    }
    return success([...doomed], sheet.version);
}

function fieldList(body: unknown): unknown[] {
    if (body === undefined) throw apiErrors.bodyRequired();
    return Array.isArray(body) ? body : [body];
}

function checkValueOrFormula(input: { objectValue?: unknown; formula?: string | undefined }): void {
    if (input.formula && input.objectValue !== undefined && input.objectValue !== null) {
        throw apiErrors.attributeCombination("formula, objectValue");
    }
    if (input.formula && !input.formula.startsWith("=")) throw apiErrors.formulaWithoutEquals();
}

function valueOrFormula(input: { objectValue?: unknown; formula?: string | undefined }): Pick<SimSummaryField, "objectValue" | "formula"> {
    if (input.formula) return { formula: input.formula };
    if (input.objectValue === undefined || input.objectValue === null || input.objectValue === "") return {};
    return { objectValue: structuredClone(input.objectValue) };
}

/** With `renameIfConflict`, a taken title gets " (1)", " (2)"… appended. */
function freeTitle(sheet: SimSheet, title: string): string {
    const taken = (candidate: string) => sheet.summaryFields.some((field) => field.title === candidate);
    if (!taken(title)) return title;
    for (let n = 1; ; n++) if (!taken(`${title} (${n})`)) return `${title} (${n})`;
}

function renderFields(sheet: SimSheet, fields: readonly SimSummaryField[], displayValue: boolean): ApiSummaryField[] {
    return fields.map((field) => renderSummaryField(field, sheet.summaryFields.indexOf(field), { displayValue }));
}
