import { z } from "zod";
import { apiErrors } from "./ApiError";
import { parseBody } from "./parseBody";
import { renderColumn } from "./render";
import { success, type RouteContext } from "./RouteContext";
import { COLUMN_TYPES } from "./model";

const UpdateColumnBody = z.looseObject({
    title: z.string().min(1).optional(),
    formula: z.string().optional(),
    index: z.number().int().nonnegative().optional(),
    type: z.enum(COLUMN_TYPES).optional(),
    options: z.array(z.string()).optional(),
    width: z.number().int().positive().optional(),
});

/** `formula: ""` clears a column formula. */
export function updateColumn({ workspace, id, body }: RouteContext): unknown {
    const sheet = workspace.sheet(id("sheetId"));
    const column = sheet.columns.find((candidate) => candidate.id === id("columnId"));
    if (!column) throw apiErrors.notFound();
    const change = parseBody(UpdateColumnBody, body);

    if (change.title !== undefined && sheet.columns.some((other) => other !== column && other.title === change.title)) {
        throw apiErrors.titlesNotUnique();
    }
    if (change.formula && !change.formula.startsWith("=")) throw apiErrors.formulaWithoutEquals();
    if (change.index !== undefined && change.index >= sheet.columns.length) throw apiErrors.invalidValue(change.index, "index");
    const type = change.type ?? column.type;
    if (column.primary && type !== "TEXT_NUMBER") throw apiErrors.primaryMustBeText();
    if (change.options !== undefined && type !== "PICKLIST" && type !== "MULTI_PICKLIST") throw apiErrors.optionsNotAllowed(type);

    if (change.title !== undefined) column.title = change.title;
    if (change.formula !== undefined) {
        if (change.formula === "") delete column.formula;
        else column.formula = change.formula;
    }
    column.type = type;
    if (change.options !== undefined) column.options = [...change.options];
    if (change.width !== undefined) column.width = change.width;
    if (change.index !== undefined) {
        sheet.columns.splice(sheet.columns.indexOf(column), 1);
        sheet.columns.splice(change.index, 0, column);
    }
    workspace.touch(sheet);
    workspace.recordChange(sheet, { objectType: "column", eventType: "updated", id: column.id });
    return success(renderColumn(column, sheet.columns.indexOf(column)));
}
