import { z } from "zod";
import { ApiError, apiErrors } from "./ApiError";
import { JsonId, parseBody } from "./parseBody";
import { boolParam, idListParam } from "./queryParams";
import { renderRows } from "./render";
import { success, type RouteContext } from "./RouteContext";
import type { CellValue, SimCell, SimColumn, SimRow, SimSheet } from "./model";

const MAX_ROWS_PER_REQUEST = 500;

const CellInput = z.looseObject({
    columnId: JsonId,
    value: z.union([z.string(), z.number(), z.boolean(), z.null()]).optional(),
    objectValue: z.unknown().optional(),
    formula: z.string().nullable().optional(),
    strict: z.boolean().optional(),
});
type CellInput = z.infer<typeof CellInput>;

const RowInput = z.looseObject({
    id: JsonId.optional(),
    toTop: z.boolean().optional(),
    toBottom: z.boolean().optional(),
    parentId: JsonId.optional(),
    siblingId: JsonId.optional(),
    above: z.boolean().optional(),
    cells: z.array(CellInput).optional(),
});
type RowInput = z.infer<typeof RowInput>;

interface CellWrite {
    columnId: number;
    cell: SimCell;
}

export function addRows({ workspace, id, body }: RouteContext): unknown {
    const sheet = workspace.sheet(id("sheetId"));
    const inputs = parseRows(body);
    inputs.forEach((row, index) => {
        if (row.id !== undefined) throw apiErrors.attributesNotAllowed("row.id", { index });
    });
    const placement = placementOf(sheet, inputs);
    const writes = inputs.map((row, index) => validateCells(sheet, row.cells ?? [], index, null));

    const now = workspace.touch(sheet);
    const created: SimRow[] = writes.map((cells) => {
        const row: SimRow = {
            id: workspace.nextId(),
            ...(placement.parentId === undefined ? {} : { parentId: placement.parentId }),
            createdAt: now,
            modifiedAt: now,
            cells: new Map(),
        };
        applyCells(row, cells);
        return row;
    });
    sheet.rows.splice(placement.index, 0, ...created);
    for (const row of created) {
        workspace.recordChange(sheet, { objectType: "row", eventType: "created", id: row.id });
        for (const columnId of row.cells.keys()) workspace.recordChange(sheet, { objectType: "cell", eventType: "created", rowId: row.id, columnId });
    }
    return success(renderRows(sheet, created), sheet.version);
}

/** `DELETE /sheets/{id}/rows?ids=…[&ignoreRowsNotFound=true]`: an unknown id is 404 unless ignored. */
export function deleteRows({ workspace, id, query }: RouteContext): unknown {
    const sheet = workspace.sheet(id("sheetId"));
    const ids = idListParam(query, "ids");
    if (!ids || ids.length === 0) throw apiErrors.missingAttribute("ids");
    const ignoreMissing = boolParam(query, "ignoreRowsNotFound") ?? false;
    const present = new Set(sheet.rows.map((row) => row.id));
    if (!ignoreMissing && ids.some((rowId) => !present.has(rowId))) throw apiErrors.notFound();
    if (sheet.rows.some((row) => row.locked && ids.includes(row.id))) throw apiErrors.lockedRowNotDeletable();
    const doomed = new Set(ids.filter((rowId) => present.has(rowId)));
    sheet.rows = sheet.rows.filter((row) => !doomed.has(row.id));
    workspace.touch(sheet);
    for (const rowId of doomed) workspace.recordChange(sheet, { objectType: "row", eventType: "deleted", id: rowId });
    return success([...doomed], sheet.version);
}

/**
 * `PUT /sheets/{id}/rows[?allowPartialSuccess=true]`. A row that cannot be written (locked, unknown,
 * a bad cell) fails the whole call with that row's error and `detail: {index, rowId}`; with partial
 * success allowed, the other rows are written and the answer is `PARTIAL_SUCCESS` (resultCode 3)
 * with one `failedItems` entry per row refused.
 */
export function updateRows({ workspace, id, body, query }: RouteContext): unknown {
    const sheet = workspace.sheet(id("sheetId"));
    const inputs = parseRows(body);
    const partial = boolParam(query, "allowPartialSuccess") ?? false;
    const targets: Array<{ row: SimRow; cells: CellWrite[] }> = [];
    const failedItems: Array<{ index: number; rowId: number | null; error: { errorCode: number; message: string; refId: string } }> = [];
    inputs.forEach((input, index) => {
        if (locationKey(input) !== "default") throw apiErrors.unsupportedOperation("moving rows (the simulator does not move rows)");
        try {
            if (input.id === undefined) throw apiErrors.missingAttribute("row.id", { index });
            const row = sheet.rows.find((candidate) => candidate.id === input.id);
            if (!row) throw apiErrors.notFound();
            if (row.locked) throw apiErrors.rowLocked({ index, rowId: row.id });
            targets.push({ row, cells: validateCells(sheet, input.cells ?? [], index, row.id) });
        } catch (error) {
            if (!partial || !(error instanceof ApiError)) throw error;
            failedItems.push({ index, rowId: input.id ?? null, error: { errorCode: error.errorCode, message: error.message, refId: refIdOf(index) } });
        }
    });

    const now = targets.length > 0 ? workspace.touch(sheet) : sheet.modifiedAt;
    for (const { row, cells } of targets) {
        workspace.recordChange(sheet, { objectType: "row", eventType: "updated", id: row.id });
        for (const { columnId, cell } of cells) {
            const had = row.cells.has(columnId);
            const clears = cell.value === undefined && cell.formula === undefined && cell.objectValue === undefined;
            if (!had && clears) continue;
            const eventType = clears ? "deleted" : had ? "updated" : "created";
            workspace.recordChange(sheet, { objectType: "cell", eventType, rowId: row.id, columnId });
        }
        applyCells(row, cells);
        row.modifiedAt = now;
    }
    const written = success(
        renderRows(
            sheet,
            targets.map(({ row }) => row),
        ),
        sheet.version,
    );
    return failedItems.length === 0 ? written : { ...written, message: "PARTIAL_SUCCESS", resultCode: 3, failedItems };
}

function refIdOf(index: number): string {
    return `sim-${Date.now().toString(36)}-${index}`;
}

function parseRows(body: unknown): RowInput[] {
    if (body === undefined) throw apiErrors.bodyRequired();
    const list = Array.isArray(body) ? body : [body];
    if (list.length > MAX_ROWS_PER_REQUEST) throw apiErrors.maxCountExceeded("rows");
    return list.map((row, index) => parseBody(RowInput, row, { index }));
}

function locationKey(row: RowInput): string {
    if (row.toTop && row.toBottom) throw apiErrors.mixedRowLocations();
    if (row.parentId !== undefined && row.siblingId !== undefined) throw apiErrors.mixedRowLocations();
    const end = row.toTop ? "top" : "bottom";
    if (row.parentId !== undefined) return `parent:${row.parentId}:${end}`;
    if (row.siblingId !== undefined) return `sibling:${row.siblingId}:${row.above ? "above" : "below"}`;
    if (row.toTop) return "top";
    if (row.toBottom) return "bottom";
    return "default";
}

/** Where new rows go. Every row of a request must name the same location; the default is the bottom. */
function placementOf(sheet: SimSheet, rows: RowInput[]): { index: number; parentId?: number } {
    const keys = new Set(rows.map(locationKey));
    if (keys.size > 1) throw apiErrors.mixedRowLocations();
    const first = rows[0];
    if (!first) return { index: sheet.rows.length };
    if (first.parentId !== undefined) {
        const parentIndex = sheet.rows.findIndex((row) => row.id === first.parentId);
        if (parentIndex < 0) throw apiErrors.invalidParentId(first.parentId);
        return { index: first.toTop ? parentIndex + 1 : subtreeEnd(sheet, parentIndex), parentId: first.parentId };
    }
    if (first.siblingId !== undefined) {
        const siblingIndex = sheet.rows.findIndex((row) => row.id === first.siblingId);
        const sibling = sheet.rows[siblingIndex];
        if (!sibling) throw apiErrors.invalidSiblingId(first.siblingId);
        return {
            index: first.above ? siblingIndex : subtreeEnd(sheet, siblingIndex),
            ...(sibling.parentId === undefined ? {} : { parentId: sibling.parentId }),
        };
    }
    return { index: first.toTop ? 0 : sheet.rows.length };
}

/** The index just past a row and all of its descendants (children always follow their parent). */
function subtreeEnd(sheet: SimSheet, index: number): number {
    const inside = new Set([sheet.rows[index]?.id]);
    let end = index + 1;
    for (; end < sheet.rows.length; end++) {
        const row = sheet.rows[end];
        if (row?.parentId === undefined || !inside.has(row.parentId)) break;
        inside.add(row.id);
    }
    return end;
}

function validateCells(sheet: SimSheet, cells: CellInput[], index: number, rowId: number | null): CellWrite[] {
    const detail = { index, rowId };
    const seen = new Set<number>();
    return cells.map((input) => {
        const column = sheet.columns.find((candidate) => candidate.id === input.columnId);
        if (!column) throw apiErrors.invalidColumnId(input.columnId, detail);
        if (seen.has(column.id)) throw apiErrors.duplicateColumnId(column.id, detail);
        seen.add(column.id);
        if (column.formula) throw apiErrors.columnFormulaCell(detail);

        const hasValue = input.value !== undefined && input.value !== null;
        const hasObjectValue = input.objectValue !== undefined && input.objectValue !== null;
        if (input.formula !== undefined && input.formula !== null) {
            if (hasValue || hasObjectValue) throw apiErrors.formulaWithValue(detail);
            if (!input.formula.startsWith("=")) throw apiErrors.formulaWithoutEquals(detail);
            return { columnId: column.id, cell: { formula: input.formula } };
        }
        if (hasValue && hasObjectValue) throw apiErrors.valueAndObjectValue(detail);
        if (input.value === undefined && input.objectValue === undefined && input.formula === undefined) {
            throw apiErrors.missingAttribute("cell.value", detail);
        }
        return { columnId: column.id, cell: cellFor(column, hasObjectValue ? input.objectValue : input.value, input.strict, detail) };
    });
}

function cellFor(column: SimColumn, raw: unknown, strict: boolean | undefined, detail: Record<string, unknown>): SimCell {
    if (raw === undefined || raw === null || raw === "") return column.type === "CHECKBOX" ? { value: false } : {};
    if (typeof raw === "object") {
        const inner = (raw as { value?: unknown }).value;
        return isCellValue(inner) ? { value: inner, objectValue: raw } : { objectValue: raw };
    }
    if (!isCellValue(raw)) throw apiErrors.invalidValue(raw, "cell.value", detail);
    if (column.type === "CHECKBOX" && typeof raw !== "boolean") {
        if (typeof raw === "string" && /^(true|false)$/i.test(raw)) return { value: raw.toLowerCase() === "true" };
        if (strict !== false) throw apiErrors.notStrict(column.id, raw, column.type, detail);
    }
    return { value: raw };
}

function isCellValue(value: unknown): value is CellValue {
    return typeof value === "string" || typeof value === "number" || typeof value === "boolean";
}

function applyCells(row: SimRow, writes: CellWrite[]): void {
    for (const { columnId, cell } of writes) {
        if (cell.value === undefined && cell.formula === undefined && cell.objectValue === undefined) row.cells.delete(columnId);
        else row.cells.set(columnId, cell);
    }
}
