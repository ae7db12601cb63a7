import { z } from "zod";
import { apiErrors } from "./ApiError";
import { parseBody } from "./parseBody";
import { indexResult, intParam } from "./queryParams";
import { renderColumn } from "./render";
import { success, type RouteContext } from "./RouteContext";
import { COLUMN_TYPES, SYSTEM_COLUMN_TYPES, type ColumnType, type SimColumn, type SimSheet, type SystemColumnType } from "./model";

const PICKLIST_TYPES: readonly ColumnType[] = ["PICKLIST", "MULTI_PICKLIST"];
const SYMBOL_TYPES: readonly ColumnType[] = ["CHECKBOX", "PICKLIST"];
/** "Only for dependency-enabled project sheets"; the simulator's sheets never are. */
const PROJECT_TYPES: readonly ColumnType[] = ["ABSTRACT_DATETIME", "DURATION", "PREDECESSOR"];
const SYSTEM_COLUMN_TYPE_OF: Record<SystemColumnType, ColumnType> = {
    AUTO_NUMBER: "TEXT_NUMBER",
    CREATED_BY: "CONTACT_LIST",
    CREATED_DATE: "DATETIME",
    MODIFIED_BY: "CONTACT_LIST",
    MODIFIED_DATE: "DATETIME",
};
const DEFAULT_WIDTH = 150;

const ColumnAttributes = {
    primary: z.boolean().optional(),
    options: z.array(z.string()).optional(),
    symbol: z.string().min(1).optional(),
    systemColumnType: z.enum(SYSTEM_COLUMN_TYPES).optional(),
    formula: z.string().optional(),
    description: z.string().optional(),
    width: z.number().int().positive().optional(),
    validation: z.boolean().optional(),
    locked: z.boolean().optional(),
    hidden: z.boolean().optional(),
};

const NewColumn = z.looseObject({
    ...ColumnAttributes,
    title: z.string().min(1),
    type: z.enum(COLUMN_TYPES),
    index: z.number().int().nonnegative(),
});

const ColumnChange = z.looseObject({
    ...ColumnAttributes,
    title: z.string().min(1).optional(),
    type: z.enum(COLUMN_TYPES).optional(),
    index: z.number().int().nonnegative().optional(),
});

/** What decides whether a column is valid, as it would be after the write. */
interface ColumnKind {
    type: ColumnType;
    primary: boolean;
    options?: string[] | undefined;
    symbol?: string | undefined;
    systemColumnType?: SystemColumnType | undefined;
    formula?: string | undefined;
}

export function getColumns({ workspace, id, query }: RouteContext): unknown {
    const sheet = workspace.sheet(id("sheetId"));
    intParam(query, "level", { min: 0 });
    return indexResult(sheet.columns.map(renderColumn), query);
}

/** Every column of one request goes in at the same `index`, in the order given, shifting the columns from there on. */
export function addColumn({ workspace, id, body }: RouteContext): unknown {
    const sheet = workspace.sheet(id("sheetId"));
    if (body === undefined) throw apiErrors.bodyRequired();
    const inputs = (Array.isArray(body) ? body : [body]).map((column, index) => parseBody(NewColumn, column, { index }));
    const first = inputs[0];
    if (!first) throw apiErrors.bodyRequired();
    if (first.index > sheet.columns.length) throw apiErrors.invalidValue(first.index, "index");
    const titles = new Set<string>();
    const systemColumnTypes = new Set<SystemColumnType>();
    for (const input of inputs) {
        if (input.index !== first.index) throw apiErrors.indexDiffersInRequest(input.index, first.index);
        if (input.primary) throw apiErrors.onePrimaryColumn();
        if (titles.has(titleKey(input.title))) throw apiErrors.titlesNotUniqueInRequest();
        titles.add(titleKey(input.title));
        if (input.systemColumnType) {
            if (systemColumnTypes.has(input.systemColumnType)) throw apiErrors.duplicateSystemColumnTypeInRequest();
            systemColumnTypes.add(input.systemColumnType);
        }
        assertTitleFree(sheet, input.title);
        assertValidKind(sheet, { ...input, primary: false });
    }

    const created = inputs.map((input) => {
        const column: SimColumn = { id: workspace.nextId(), title: input.title, type: input.type, primary: false, width: input.width ?? DEFAULT_WIDTH };
        assign(column, {
            options: input.options && [...input.options],
            symbol: input.symbol,
            formula: input.formula || undefined,
            systemColumnType: input.systemColumnType,
            description: input.description || undefined,
            validation: input.validation,
            locked: input.locked,
            hidden: input.hidden,
        });
        return column;
    });
    sheet.columns.splice(first.index, 0, ...created);
    workspace.touch(sheet);
    for (const column of created) workspace.recordChange(sheet, { objectType: "column", eventType: "created", id: column.id });
    return success(created.map((column) => renderColumn(column, sheet.columns.indexOf(column))));
}

/**
 * `formula: ""` removes a column formula. Setting `symbol`, `systemColumnType` or `options` needs
 * `type`; a new type keeps only the options a picklist can carry, and no symbol or system type
 * unless the body says them again.
 */
export function updateColumn({ workspace, id, body }: RouteContext): unknown {
    const sheet = workspace.sheet(id("sheetId"));
    const column = columnOf(sheet, id("columnId"));
    const change = parseBody(ColumnChange, body);

    if (change.title !== undefined) assertTitleFree(sheet, change.title, column);
    if (change.index !== undefined && change.index >= sheet.columns.length) throw apiErrors.invalidValue(change.index, "index");
    if (change.primary !== undefined && change.primary !== column.primary) throw apiErrors.onePrimaryColumn();
    const redefines = change.options !== undefined || change.symbol !== undefined || change.systemColumnType !== undefined;
    if (redefines && change.type === undefined) throw apiErrors.typeRequiredForChange();
    const type = change.type ?? column.type;
    const sameType = type === column.type;
    const kind: ColumnKind = {
        type,
        primary: column.primary,
        options: change.options ?? (PICKLIST_TYPES.includes(type) && change.symbol === undefined ? column.options : undefined),
        symbol: change.symbol ?? (sameType && change.options === undefined ? column.symbol : undefined),
        systemColumnType: change.systemColumnType ?? (sameType ? column.systemColumnType : undefined),
        formula: change.formula ?? column.formula,
    };
    assertValidKind(sheet, kind, column);

    const becomesSystemColumn = kind.systemColumnType !== undefined && kind.systemColumnType !== column.systemColumnType;
    const setsFormula = Boolean(change.formula) && change.formula !== column.formula;
    if (becomesSystemColumn || setsFormula) clearCells(sheet, column);
    column.type = type;
    assign(column, {
        options: kind.options && [...kind.options],
        symbol: kind.symbol,
        systemColumnType: kind.systemColumnType,
        formula: kind.formula || undefined,
    });
    if (change.title !== undefined) column.title = change.title;
    if (change.description !== undefined) assign(column, { description: change.description || undefined });
    if (change.width !== undefined) column.width = change.width;
    if (change.validation !== undefined) column.validation = change.validation;
    if (change.locked !== undefined) column.locked = change.locked;
    if (change.hidden !== undefined) column.hidden = change.hidden;
    if (change.index !== undefined) {
        sheet.columns.splice(sheet.columns.indexOf(column), 1);
        sheet.columns.splice(change.index, 0, column);
    }
    workspace.touch(sheet);
    workspace.recordChange(sheet, { objectType: "column", eventType: "updated", id: column.id });
    return success(renderColumn(column, sheet.columns.indexOf(column)));
}

/**
 * Removes the column and its cells from every row. Cross-sheet references to it, here or in other
 * sheets, stay as they are.
 */
export function deleteColumn({ workspace, id }: RouteContext): unknown {
    const sheet = workspace.sheet(id("sheetId"));
    const column = columnOf(sheet, id("columnId"));
    if (column.primary) throw apiErrors.columnNotDeletable();
    sheet.columns.splice(sheet.columns.indexOf(column), 1);
    clearCells(sheet, column);
    workspace.touch(sheet);
    workspace.recordChange(sheet, { objectType: "column", eventType: "deleted", id: column.id });
    return success();
}

function columnOf(sheet: SimSheet, columnId: number): SimColumn {
    const column = sheet.columns.find((candidate) => candidate.id === columnId);
    if (!column) throw apiErrors.notFound();
    return column;
}

/** Column titles are unique within a sheet, whatever their case. */
function assertTitleFree(sheet: SimSheet, title: string, self?: SimColumn): void {
    if (sheet.columns.some((other) => other !== self && titleKey(other.title) === titleKey(title))) throw apiErrors.titlesNotUnique();
}

function titleKey(title: string): string {
    return title.toLowerCase();
}

function assertValidKind(sheet: SimSheet, kind: ColumnKind, self?: SimColumn): void {
    if (kind.primary && kind.type !== "TEXT_NUMBER") throw apiErrors.primaryMustBeText();
    if (PROJECT_TYPES.includes(kind.type)) throw apiErrors.projectSheetType(kind.type);
    if (kind.systemColumnType !== undefined) {
        if (SYSTEM_COLUMN_TYPE_OF[kind.systemColumnType] !== kind.type) throw apiErrors.typeNotForSystemColumn(kind.type, kind.systemColumnType);
        if (sheet.columns.some((other) => other !== self && other.systemColumnType === kind.systemColumnType)) {
            throw apiErrors.duplicateSystemColumnType(kind.systemColumnType);
        }
    } else if (kind.type === "DATETIME") throw apiErrors.systemColumnsOnlyType();
    if (kind.symbol !== undefined) {
        if (!SYMBOL_TYPES.includes(kind.type)) throw apiErrors.symbolNotSupported(kind.symbol, kind.type);
        if (kind.options !== undefined) throw apiErrors.optionsWithSymbol();
    }
    if (kind.options !== undefined && !PICKLIST_TYPES.includes(kind.type)) throw apiErrors.optionsNotAllowed(kind.type);
    if (kind.formula && !kind.formula.startsWith("=")) throw apiErrors.formulaWithoutEquals();
}

/** A column formula or a system column overwrites whatever the column's cells held. */
function clearCells(sheet: SimSheet, column: SimColumn): void {
    for (const row of sheet.rows) row.cells.delete(column.id);
}

type OptionalAttribute = "options" | "symbol" | "formula" | "systemColumnType" | "description" | "validation" | "locked" | "hidden";

/** Sets the optional attributes given, removing those given as undefined. */
function assign(column: SimColumn, values: Partial<Pick<SimColumn, OptionalAttribute>>): void {
    for (const [key, value] of Object.entries(values) as Array<[OptionalAttribute, unknown]>) {
        if (value === undefined) delete column[key];
        else Object.assign(column, { [key]: value });
    }
}
