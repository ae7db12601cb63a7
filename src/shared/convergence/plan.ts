import { z } from "zod";
import { cleanText, composeProductNames, NameDoesNotFitError, referenceName } from "../naming/productNames";
import { rewriterOf } from "../provisioning/remap/plan";
import { DOCUMENT_REGISTER, PRODUCT_CODE_FIELD } from "../provisioning/templateRules";
import {
    ColumnShape,
    compareText,
    SummaryFieldShape,
    type ProductColumnShape,
    type ProductShape,
    type ProductSheetShape,
    type ProductSummaryFieldShape,
    type SheetShape,
    type TemplateShape,
} from "./TemplateShape";

const Id = z.number().int().positive();

/** `null`: the column or field does not have that attribute (no formula, say), or is to lose it. */
const Attribute = z.union([z.string(), z.number(), z.boolean(), z.array(z.string()), z.null()]);

/** Attributes of a column or summary field by name: what one of its aspects is, or becomes. */
export const Attributes = z.record(z.string(), Attribute);
export type Attributes = z.infer<typeof Attributes>;

/**
 * What a template edit changes of a sheet, column or field. Each aspect is compared three-way
 * on its own, so a customer's edit of one (a picklist option added) holds back no template
 * change of another (the column's formula fixed).
 */
export const Aspect = z.enum(["name", "title", "type", "formula", "settings", "value"]);
export type Aspect = z.infer<typeof Aspect>;

type ColumnAttribute = keyof ColumnShape;
type FieldAttribute = keyof SummaryFieldShape;

const COLUMN_ASPECTS: ReadonlyArray<[Aspect, readonly ColumnAttribute[]]> = [
    ["title", ["title"]],
    // Smartsheet changes options, symbol and system column type only with the type (1090): one aspect.
    ["type", ["type", "options", "symbol", "systemColumnType"]],
    ["formula", ["formula"]],
    ["settings", ["description", "validation", "locked", "hidden"]],
];

const FIELD_ASPECTS: ReadonlyArray<[Aspect, readonly FieldAttribute[]]> = [
    ["title", ["title"]],
    ["type", ["type", "options", "symbol"]],
    ["formula", ["formula"]],
    ["value", ["value"]],
];

/** A reference the product's copy gets, as provisioning's remap makes it. */
const ProductReference = z.object({
    /** `referenceName(productCode, templateReference)`. */
    name: z.string(),
    templateReference: z.string(),
    /** The template sheet whose product copy it reads. */
    sourceTemplate: z.string(),
});
export type ProductReference = z.infer<typeof ProductReference>;

/** Every change names the template sheet it is about; a change to a copy also names the copy. */
const onSheet = { sheet: z.string() };
const onCopy = { sheet: z.string(), sheetId: Id };
/** The column's position in the new template (the old one's, for a removed column): the plan's order. */
const position = z.number().int().nonnegative();

export const ConvergenceChange = z.discriminatedUnion("kind", [
    z.object({
        kind: z.literal("addSheet"),
        ...onSheet,
        /** The copy's name, composed as provisioning composes it. */
        name: z.string(),
        templateSheetId: Id,
        /** What provisioning's remap (`planRemap`) gives the copy: these references, and the formulas below rewritten to use them. */
        references: z.array(ProductReference),
        /** Titles of the columns whose column formula the remap rewrites. */
        columnFormulas: z.array(z.string()),
        cellFormulas: z.boolean(),
        summaryFormulas: z.boolean(),
        /** The copy has a Product Code field, which gets the product's code. */
        stampsCode: z.boolean(),
        /** The copy is the Document Register: the product's Filing Index row is pointed at it. */
        registers: z.boolean(),
    }),
    z.object({ kind: z.literal("renameSheet"), ...onCopy, from: z.string(), to: z.string() }),
    z.object({ kind: z.literal("addReferences"), ...onCopy, references: z.array(ProductReference) }),
    z.object({
        kind: z.literal("addColumn"),
        ...onCopy,
        position,
        /**
         * The column as the new template has it, formula in the product's terms. Its `index` is
         * the one `addColumn` is sent with: the sheet's deletions and its earlier additions done.
         */
        column: ColumnShape,
    }),
    z.object({
        kind: z.literal("updateColumn"),
        ...onCopy,
        position,
        columnId: Id,
        /** The column's title in the product now. */
        title: z.string(),
        /** Every attribute of each aspect the update changes, as it becomes. */
        set: Attributes,
        /** The same attributes as the product has them now. */
        was: Attributes,
    }),
    z.object({ kind: z.literal("deleteColumn"), ...onCopy, position, columnId: Id, title: z.string() }),
    z.object({ kind: z.literal("addSummaryField"), ...onCopy, field: SummaryFieldShape }),
    z.object({ kind: z.literal("updateSummaryField"), ...onCopy, fieldId: Id, title: z.string(), set: Attributes, was: Attributes }),
    z.object({ kind: z.literal("deleteSummaryField"), ...onCopy, fieldId: Id, title: z.string() }),
]);
export type ConvergenceChange = z.infer<typeof ConvergenceChange>;
type ChangeOf<K extends ConvergenceChange["kind"]> = Extract<ConvergenceChange, { kind: K }>;

export const ConflictKind = z.enum([
    /** The product changed what the template changed, differently. */
    "edited",
    /** The template's change would overwrite what the product's column cells or field hold. */
    "overwritesData",
    /** The template's column or field would take a title the product uses for one of its own (Smartsheet refuses duplicates, 1056). */
    "titleTaken",
    /** The template changed a column or field the product's copy no longer has. */
    "missingInProduct",
    /** The product has no copy of a template sheet. */
    "sheetMissing",
    /** The sheet names composed for the new template do not fit Smartsheet's limit. */
    "nameDoesNotFit",
]);
export type ConflictKind = z.infer<typeof ConflictKind>;

export const ConvergenceConflict = z.object({
    kind: ConflictKind,
    sheet: z.string(),
    column: z.string().optional(),
    field: z.string().optional(),
    position: position.optional(),
    aspect: Aspect.optional(),
    oldTemplate: Attributes.optional(),
    newTemplate: Attributes.optional(),
    product: Attributes.optional(),
    detail: z.string().optional(),
});
export type ConvergenceConflict = z.infer<typeof ConvergenceConflict>;

/** Something the new template no longer has that the product does: never deleted but on request, and only without data. */
export const RemovedFromTemplate = z.object({
    sheet: z.string(),
    kind: z.enum(["sheet", "column", "summaryField"]),
    /** Its title (a sheet: the copy's name) in the product. */
    title: z.string(),
    position: position.optional(),
    hasData: z.boolean().optional(),
    /** A `deleteColumn` or `deleteSummaryField` change is planned for it. */
    deleted: z.boolean(),
});
export type RemovedFromTemplate = z.infer<typeof RemovedFromTemplate>;

/** Smartsheet calls by operation, named as the adapter and the simulator's call log name them. */
export const SmartsheetCalls = z.object({
    total: z.number().int().nonnegative(),
    byOperation: z.record(z.string(), z.number().int().positive()),
});
export type SmartsheetCalls = z.infer<typeof SmartsheetCalls>;

export const ConvergencePlan = z.object({
    /**
     * Ordered by sheet, then column position, then field title: the order to review them in. To
     * carry them out, a sheet's column updates and deletions go before its additions (a rename
     * frees the title a new column may take; `addColumn`'s index counts the deletions done).
     */
    changes: z.array(ConvergenceChange),
    conflicts: z.array(ConvergenceConflict),
    removedFromTemplate: z.array(RemovedFromTemplate),
    calls: SmartsheetCalls,
});
export type ConvergencePlan = z.infer<typeof ConvergencePlan>;

export const ConvergenceOptions = z.object({
    /** Delete what the template removed, where the product's column or field holds no data. */
    removeUnused: z.boolean().default(false),
});
export type ConvergenceOptions = z.input<typeof ConvergenceOptions>;

export interface ConvergenceInput {
    /** The template version the product was provisioned from, or last converged to. */
    from: TemplateShape;
    to: TemplateShape;
    product: ProductShape;
    productCode: string;
    options?: ConvergenceOptions;
}

/** Nothing to write and nothing for a person to decide (what the template removed may still be reported). */
export function isEmptyPlan(plan: ConvergencePlan): boolean {
    return plan.changes.length === 0 && plan.conflicts.length === 0;
}

/**
 * What it takes to bring one product from the template version `from` to `to`, three-way: a
 * template change is applied only where the product's copy still has what `from` had (or
 * has it already, as `to` has it); a product that changed it too is a conflict, named. What a
 * customer added is never touched; what the template removed is reported, and deleted only
 * on request (`removeUnused`) where it holds no data. Pure and deterministic: the same
 * shapes give the same plan whatever their order, and a product already converged gives an
 * empty one.
 *
 * Matching. Sheets: the two versions' by template sheet id, then by name; the product's copy by
 * the template sheet it was named from (`ProductSheetShape.template`), the new name first.
 * Columns of the two versions: by id (a template column keeps its id across a rename), then
 * by title, then — for columns recorded without ids — a column at the same position with the
 * same type is the same column renamed. A product's column: its primary column for the
 * template's; else the one titled as the new template titles it (converged already), else as
 * the old did; titles compared case-insensitively, as Smartsheet's uniqueness is. Summary
 * fields alike, by id then title, titles exact (as Smartsheet keeps them unique).
 */
export function planConvergence({ from, to, product, productCode, options }: ConvergenceInput): ConvergencePlan {
    const { removeUnused } = ConvergenceOptions.parse(options ?? {});
    const draft = new PlanDraft();
    const names = {
        from: composedNames(productCode, product.productName, from.sheets),
        to: composedNames(productCode, product.productName, to.sheets),
    };
    if (names.to instanceof NameDoesNotFitError) {
        draft.conflicts.push({ kind: "nameDoesNotFit", sheet: longestName(to.sheets), detail: names.to.message });
    }
    const copies = new Map(product.sheets.map((copy) => [copy.template, copy]));
    const sheetPairs = pairUp(byName(from.sheets), byName(to.sheets), { id: (sheet) => sheet.sheetId, key: (sheet) => sheet.name });

    for (const { base, target } of sheetPairs) {
        if (!target) {
            const copy = copies.get(base!.name);
            if (copy) draft.removed.push({ sheet: base!.name, kind: "sheet", title: copy.name, deleted: false });
            continue;
        }
        const copy = copies.get(target.name) ?? (base && copies.get(base.name));
        const targetSide = sideOf(target, to, productCode);
        const composedName = names.to instanceof NameDoesNotFitError ? undefined : names.to[target.name];
        if (!copy) {
            if (base) draft.conflicts.push({ kind: "sheetMissing", sheet: target.name });
            else if (composedName !== undefined) draft.changes.push(addSheet(targetSide, composedName, productCode));
            continue;
        }
        // A sheet copied by an earlier run of this convergence is compared with the new template as copied: formulas not yet remapped.
        const baseSide = base ? sideOf(base, from, productCode) : asCopied(target);
        const baseName = base ? (names.from instanceof NameDoesNotFitError ? undefined : names.from[base.name]) : composedName;
        if (composedName !== undefined && baseName !== undefined) planSheetName(draft, target.name, copy, baseName, composedName);
        planReferences(draft, target.name, baseSide, targetSide, copy, productCode);
        planColumns(draft, target.name, baseSide, targetSide, copy, removeUnused);
        planSummaryFields(draft, target.name, baseSide, targetSide, copy, removeUnused, productCode);
    }
    const changes = [...draft.changes].sort(changeOrder);
    return {
        changes,
        conflicts: [...draft.conflicts].sort(conflictOrder),
        removedFromTemplate: [...draft.removed].sort(removedOrder),
        calls: callsOf(changes),
    };
}

class PlanDraft {
    readonly changes: ConvergenceChange[] = [];
    readonly conflicts: ConvergenceConflict[] = [];
    readonly removed: RemovedFromTemplate[] = [];
}

/** A template version's sheet, with what a product's copy of it has instead of the references into the template. */
interface TemplateSide {
    sheet: SheetShape;
    /** Template reference name → the template sheet it reads: the references the remap gives the product its own of. */
    remapped: ReadonlyMap<string, string>;
    /** A formula of the sheet as the product's copy has it once remapped. */
    inProduct: (formula: string) => string;
}

function sideOf(sheet: SheetShape, template: TemplateShape, productCode: string): TemplateSide {
    const templateSheetNamed = new Map(template.sheets.map((candidate) => [candidate.sheetId, candidate.name]));
    const remapped = new Map(
        sheet.references.flatMap((reference) => {
            const source = templateSheetNamed.get(reference.sourceSheetId);
            return source === undefined ? [] : [[reference.name, source] as const];
        }),
    );
    return { sheet, remapped, inProduct: rewriterOf(new Map([...remapped.keys()].map((name) => [name, referenceName(productCode, name)]))) };
}

/** The new template's sheet as a copy of it is before the remap: its formulas still use the template's references. */
function asCopied(sheet: SheetShape): TemplateSide {
    return { sheet, remapped: new Map(), inProduct: (formula) => formula };
}

function composedNames(productCode: string, productName: string, sheets: readonly SheetShape[]): Record<string, string> | NameDoesNotFitError {
    try {
        return composeProductNames(productCode, productName, sheets.map((sheet) => sheet.name)).sheets;
    } catch (error) {
        if (error instanceof NameDoesNotFitError) return error;
        throw error;
    }
}

/** The sheet whose name decides how much room the product's part of every name has. */
function longestName(sheets: readonly SheetShape[]): string {
    return [...sheets].map((sheet) => sheet.name).sort((a, b) => cleanText(b).length - cleanText(a).length || compareText(a, b))[0] ?? "";
}

/** The same copy that provisioning would make and remap now, counted as its remap counts it (see `callsOf`). */
function addSheet(target: TemplateSide, name: string, productCode: string): ChangeOf<"addSheet"> {
    const { sheet, remapped } = target;
    const usesRemapped = (formula: string | undefined) => formula !== undefined && [...remapped.keys()].some((reference) => formula.includes(`{${reference}}`));
    return {
        kind: "addSheet",
        sheet: sheet.name,
        name,
        templateSheetId: sheet.sheetId,
        references: productReferences(target, productCode, () => true),
        columnFormulas: sheet.columns.filter((column) => usesRemapped(column.formula)).map((column) => column.title),
        cellFormulas: sheet.cellFormulaReferences.some((reference) => remapped.has(reference)),
        summaryFormulas: sheet.summaryFields.some((field) => usesRemapped(field.formula)),
        stampsCode: sheet.summaryFields.some((field) => field.title === PRODUCT_CODE_FIELD),
        registers: sheet.name === DOCUMENT_REGISTER,
    };
}

function productReferences(target: TemplateSide, productCode: string, wanted: (name: string) => boolean): ProductReference[] {
    return [...target.remapped]
        .filter(([name]) => wanted(name))
        .map(([name, source]) => ({ name: referenceName(productCode, name), templateReference: name, sourceTemplate: source }))
        .sort((a, b) => compareText(a.name, b.name));
}

/** The copy's name, three-way: provisioning's name under the old template, under the new, and the copy's own. */
function planSheetName(draft: PlanDraft, sheet: string, copy: ProductSheetShape, baseName: string, targetName: string): void {
    if (copy.name === targetName || baseName === targetName) return;
    if (copy.name === baseName) {
        draft.changes.push({ kind: "renameSheet", sheet, sheetId: copy.sheetId, from: copy.name, to: targetName });
        return;
    }
    draft.conflicts.push({ kind: "edited", sheet, aspect: "name", oldTemplate: { name: baseName }, newTemplate: { name: targetName }, product: { name: copy.name } });
}

/** References into template sheets that the new template has and the old did not: the copy gets the product's own, unless it has them. */
function planReferences(draft: PlanDraft, sheet: string, base: TemplateSide, target: TemplateSide, copy: ProductSheetShape, productCode: string): void {
    const made = new Set(copy.references.map((reference) => reference.name));
    const references = productReferences(target, productCode, (name) => !base.remapped.has(name) && !made.has(referenceName(productCode, name)));
    if (references.length > 0) draft.changes.push({ kind: "addReferences", sheet, sheetId: copy.sheetId, references });
}

/** A column or summary field's attributes of one aspect, formulas in the product's terms; absent ones `null`. */
function attributesOf<T extends object>(item: T, names: readonly (keyof T & string)[], inProduct: (formula: string) => string): Attributes {
    const attributes: Attributes = {};
    for (const name of names) {
        const value = item[name] as Attributes[string] | undefined;
        attributes[name] = name === "formula" && typeof value === "string" ? inProduct(value) : (value ?? null);
    }
    return attributes;
}

function same(a: Attributes, b: Attributes): boolean {
    return JSON.stringify(a) === JSON.stringify(b);
}

/** One aspect as the old template, the new one and the product have it. */
interface AspectCompared {
    aspect: Aspect;
    base: Attributes;
    target: Attributes;
    product: Attributes;
}

/**
 * Aspects the new template changed and the product does not have yet: each to apply (the
 * product kept the old template's) or a conflict (the product changed it too).
 */
function threeWay<T extends object>(
    aspects: ReadonlyArray<[Aspect, readonly (keyof T & string)[]]>,
    base: T,
    target: T,
    product: T,
    sides: { base: TemplateSide; target: TemplateSide },
): { apply: AspectCompared[]; conflicts: AspectCompared[] } {
    const apply: AspectCompared[] = [];
    const conflicts: AspectCompared[] = [];
    for (const [aspect, names] of aspects) {
        const compared = {
            aspect,
            base: attributesOf(base, names, sides.base.inProduct),
            target: attributesOf(target, names, sides.target.inProduct),
            product: attributesOf(product, names, (formula) => formula),
        };
        if (same(compared.target, compared.product) || same(compared.base, compared.target)) continue;
        (same(compared.product, compared.base) ? apply : conflicts).push(compared);
    }
    return { apply, conflicts };
}

/** The attributes of the aspects the new template changed, as it has them. */
function changedByTemplate<T extends object>(
    aspects: ReadonlyArray<[Aspect, readonly (keyof T & string)[]]>,
    base: T,
    target: T,
    sides: { base: TemplateSide; target: TemplateSide },
): Attributes {
    const changed: Attributes = {};
    for (const [, names] of aspects) {
        const before = attributesOf(base, names, sides.base.inProduct);
        const after = attributesOf(target, names, sides.target.inProduct);
        if (!same(before, after)) Object.assign(changed, after);
    }
    return changed;
}

/** Writing a column formula or a system column type overwrites every cell; a field's formula, its value. */
function overwritesData(compared: AspectCompared, holdsData: boolean): boolean {
    if (!holdsData) return false;
    const introduces = (name: string) => compared.product[name] === null && compared.target[name] !== null && compared.target[name] !== undefined;
    return (compared.aspect === "formula" && introduces("formula")) || (compared.aspect === "type" && introduces("systemColumnType"));
}

interface Pair<T> {
    base?: T;
    target?: T;
}

/**
 * The old and the new version's items paired: by id where both carry one, then by key, then
 * (`samePlace`) where either lacks an id. What is left is removed (`base` only) or added (`target` only).
 */
function pairUp<T>(
    base: readonly T[],
    target: readonly T[],
    match: { id: (item: T) => number | undefined; key: (item: T) => string; samePlace?: (a: T, b: T) => boolean },
): Pair<T>[] {
    const pairs: Pair<T>[] = [];
    const baseLeft = [...base];
    const targetLeft = [...target];
    const pairWhere = (same: (b: T, t: T) => boolean) => {
        for (const t of [...targetLeft]) {
            const at = baseLeft.findIndex((b) => same(b, t));
            if (at < 0) continue;
            pairs.push({ base: baseLeft[at]!, target: t });
            baseLeft.splice(at, 1);
            targetLeft.splice(targetLeft.indexOf(t), 1);
        }
    };
    pairWhere((b, t) => match.id(b) !== undefined && match.id(b) === match.id(t));
    pairWhere((b, t) => match.key(b) === match.key(t));
    const { samePlace } = match;
    if (samePlace) pairWhere((b, t) => (match.id(b) === undefined || match.id(t) === undefined) && samePlace(b, t));
    return [...pairs, ...baseLeft.map((b) => ({ base: b })), ...targetLeft.map((t) => ({ target: t }))];
}

/** Smartsheet keeps a sheet's column titles unique whatever their case, and its summary field titles exactly. */
const columnKey = (title: string) => title.toLowerCase();
const fieldKey = (title: string) => title;

function planColumns(draft: PlanDraft, sheet: string, base: TemplateSide, target: TemplateSide, copy: ProductSheetShape, removeUnused: boolean): void {
    const sides = { base, target };
    const templateColumns = (side: TemplateSide) => [...side.sheet.columns].sort((a, b) => a.index - b.index || compareText(a.title, b.title));
    const targetColumns = templateColumns(target);
    const pairs = pairUp(templateColumns(base), targetColumns, {
        id: (column) => column.id,
        key: (column) => columnKey(column.title),
        samePlace: (a, b) => a.index === b.index && a.type === b.type,
    });
    const productColumns = [...copy.columns].sort((a, b) => a.index - b.index);
    const titled = new Map(productColumns.map((column) => [columnKey(column.title), column]));
    const primary = productColumns.find((column) => column.primary);
    const newTitles = new Set(targetColumns.map((column) => columnKey(column.title)));
    /** Product column → the new template's column it is the copy of. */
    const owner = new Map<ProductColumnShape, ColumnShape>();
    /** The new template's column → the product's column that is (or will be) its copy. */
    const copyOf = new Map<ColumnShape, ProductColumnShape | ColumnShape>();
    const onCopy = { sheet, sheetId: copy.sheetId };

    // Columns of both versions: find the product's copy of each before comparing any, so a rename sees every title taken.
    const kept: Array<{ base: ColumnShape; target: ColumnShape; product: ProductColumnShape }> = [];
    for (const { base: b, target: t } of pairs) {
        if (!b || !t) continue;
        const byNew = titled.get(columnKey(t.title));
        const byOld = titled.get(columnKey(b.title));
        if (t.primary && b.primary && primary) {
            kept.push({ base: b, target: t, product: primary });
            owner.set(primary, t);
            copyOf.set(t, primary);
            continue;
        }
        if (byNew && byOld && byNew !== byOld && !newTitles.has(columnKey(b.title))) {
            // Renamed in the template onto a title the customer gave a column of their own.
            draft.conflicts.push({
                kind: "titleTaken",
                sheet,
                column: b.title,
                position: t.index,
                aspect: "title",
                oldTemplate: { title: b.title },
                newTemplate: { title: t.title },
                product: { title: byNew.title },
            });
            for (const claimed of [byNew, byOld]) owner.set(claimed, t);
            copyOf.set(t, byOld);
            continue;
        }
        const product = [byNew, byOld].find((candidate) => candidate !== undefined && !owner.has(candidate));
        if (!product) {
            const changed = changedByTemplate(COLUMN_ASPECTS, b, t, sides);
            if (Object.keys(changed).length > 0) {
                const oldTemplate = pick(columnAttributes(b, base), changed);
                draft.conflicts.push({ kind: "missingInProduct", sheet, column: b.title, position: t.index, oldTemplate, newTemplate: changed });
            }
            continue;
        }
        owner.set(product, t);
        copyOf.set(t, product);
        kept.push({ base: b, target: t, product });
    }

    const titleAfter = new Map<ProductColumnShape, string>(productColumns.map((column) => [column, column.title]));
    for (const { base: b, target: t, product } of kept) {
        const { apply, conflicts } = threeWay(COLUMN_ASPECTS, b, t, product, sides);
        for (const compared of conflicts) draft.conflicts.push(columnConflict("edited", sheet, b.title, t.index, compared));
        const set: Attributes = {};
        const was: Attributes = {};
        for (const compared of apply) {
            if (overwritesData(compared, product.hasData)) {
                draft.conflicts.push(columnConflict("overwritesData", sheet, b.title, t.index, compared));
                continue;
            }
            if (compared.aspect === "title" && takenByAnother(productColumns, owner, product, String(compared.target.title), columnKey)) {
                draft.conflicts.push(columnConflict("titleTaken", sheet, b.title, t.index, compared));
                continue;
            }
            Object.assign(set, compared.target);
            Object.assign(was, compared.product);
            if (compared.aspect === "title") titleAfter.set(product, String(compared.target.title));
        }
        if (Object.keys(set).length > 0) {
            draft.changes.push({ kind: "updateColumn", ...onCopy, position: t.index, columnId: product.id, title: product.title, set, was });
        }
    }

    // Columns the new template no longer has, the product's copy of each found by the old title.
    const deleted = new Set<ProductColumnShape>();
    for (const { base: b, target: t } of pairs) {
        if (!b || t) continue;
        const product = titled.get(columnKey(b.title));
        if (!product || owner.has(product)) continue;
        const deleting = removeUnused && !product.hasData && !product.primary;
        draft.removed.push({ sheet, kind: "column", title: product.title, position: b.index, hasData: product.hasData, deleted: deleting });
        if (deleting) {
            deleted.add(product);
            draft.changes.push({ kind: "deleteColumn", ...onCopy, position: b.index, columnId: product.id, title: product.title });
        }
    }

    // Columns new in the template, in its order: each after the product's copy of the template column before it.
    const order: Array<ProductColumnShape | ColumnShape> = productColumns.filter((column) => !deleted.has(column));
    for (const { base: b, target: t } of pairs) {
        if (b || !t) continue;
        const existing = titled.get(columnKey(t.title));
        if (existing && !owner.has(existing)) {
            owner.set(existing, t);
            copyOf.set(t, existing);
            // Added by an earlier run of this convergence, or the customer's own column of that title.
            const [newTemplate, product] = [columnAttributes(t, target), columnAttributes(existing, asIs)];
            if (!same(newTemplate, product)) draft.conflicts.push(titleTaken(sheet, { column: t.title, position: t.index }, newTemplate, product));
            continue;
        }
        const holder = [...titleAfter].find(([column, title]) => !deleted.has(column) && columnKey(title) === columnKey(t.title))?.[0];
        if (holder) {
            draft.conflicts.push(titleTaken(sheet, { column: t.title, position: t.index }, columnAttributes(t, target), columnAttributes(holder, asIs)));
            continue;
        }
        const before = targetColumns.slice(0, targetColumns.indexOf(t)).reverse();
        const anchor = before.map((column) => copyOf.get(column)).find((column) => column !== undefined && order.includes(column));
        const index = anchor === undefined ? 0 : order.indexOf(anchor) + 1;
        const column: ColumnShape = { ...t, id: undefined, index, formula: t.formula === undefined ? undefined : target.inProduct(t.formula) };
        order.splice(index, 0, column);
        copyOf.set(t, column);
        draft.changes.push({ kind: "addColumn", ...onCopy, position: t.index, column });
    }
}

/** The product's side: its formulas are in its own terms already. */
const asIs: Pick<TemplateSide, "inProduct"> = { inProduct: (formula) => formula };

function columnAttributes(column: ColumnShape, side: Pick<TemplateSide, "inProduct">): Attributes {
    return Object.assign({}, ...COLUMN_ASPECTS.map(([, names]) => attributesOf(column, names, side.inProduct))) as Attributes;
}

function fieldAttributes(field: SummaryFieldShape, side: Pick<TemplateSide, "inProduct">): Attributes {
    return Object.assign({}, ...FIELD_ASPECTS.map(([, names]) => attributesOf(field, names, side.inProduct))) as Attributes;
}

function pick(attributes: Attributes, like: Attributes): Attributes {
    return Object.fromEntries(Object.keys(like).map((name) => [name, attributes[name] ?? null]));
}

/** Another of the product's columns or fields has that title, and keeps it (it is no template's renamed away from it). */
function takenByAnother<T extends { title: string }>(items: readonly T[], owner: ReadonlyMap<T, { title: string }>, self: T, title: string, key: (title: string) => string): boolean {
    return items.some((item) => {
        if (item === self || key(item.title) !== key(title)) return false;
        const template = owner.get(item);
        return template === undefined || key(template.title) === key(item.title);
    });
}

/** A column or field the template adds under a title the product gives one of its own (an earlier run's, if it is the template's). */
function titleTaken(sheet: string, what: { column: string; position: number } | { field: string }, newTemplate: Attributes, product: Attributes): ConvergenceConflict {
    return { kind: "titleTaken", sheet, ...what, newTemplate, product };
}

function columnConflict(kind: ConflictKind, sheet: string, column: string, at: number, compared: AspectCompared): ConvergenceConflict {
    return { kind, sheet, column, position: at, aspect: compared.aspect, oldTemplate: compared.base, newTemplate: compared.target, product: compared.product };
}

function planSummaryFields(
    draft: PlanDraft,
    sheet: string,
    base: TemplateSide,
    target: TemplateSide,
    copy: ProductSheetShape,
    removeUnused: boolean,
    productCode: string,
): void {
    const sides = { base, target };
    const fields = (side: TemplateSide) => [...side.sheet.summaryFields].sort((a, b) => compareText(a.title, b.title));
    const pairs = pairUp(fields(base), fields(target), { id: (field) => field.id, key: (field) => fieldKey(field.title) });
    const titled = new Map(copy.summaryFields.map((field) => [fieldKey(field.title), field]));
    const newTitles = new Set(target.sheet.summaryFields.map((field) => fieldKey(field.title)));
    /** Product field → the new template's field it is the copy of. */
    const owner = new Map<ProductSummaryFieldShape, SummaryFieldShape>();
    const onCopy = { sheet, sheetId: copy.sheetId };
    const kept: Array<{ base: SummaryFieldShape; target: SummaryFieldShape; product: ProductSummaryFieldShape }> = [];

    for (const { base: b, target: t } of pairs) {
        if (!b || !t) continue;
        const byNew = titled.get(t.title);
        const byOld = titled.get(b.title);
        if (byNew && byOld && byNew !== byOld && !newTitles.has(b.title)) {
            draft.conflicts.push({
                kind: "titleTaken",
                sheet,
                field: b.title,
                aspect: "title",
                oldTemplate: { title: b.title },
                newTemplate: { title: t.title },
                product: { title: byNew.title },
            });
            for (const claimed of [byNew, byOld]) owner.set(claimed, t);
            continue;
        }
        const product = [byNew, byOld].find((candidate) => candidate !== undefined && !owner.has(candidate));
        if (!product) {
            const changed = changedByTemplate(FIELD_ASPECTS, b, t, sides);
            if (Object.keys(changed).length > 0) {
                draft.conflicts.push({ kind: "missingInProduct", sheet, field: b.title, oldTemplate: pick(fieldAttributes(b, base), changed), newTemplate: changed });
            }
            continue;
        }
        owner.set(product, t);
        kept.push({ base: b, target: t, product });
    }

    const titleAfter = new Map<ProductSummaryFieldShape, string>(copy.summaryFields.map((field) => [field, field.title]));
    for (const { base: b, target: t, product } of kept) {
        const { apply, conflicts } = threeWay(FIELD_ASPECTS, b, t, product, sides);
        for (const compared of conflicts) draft.conflicts.push(fieldConflict("edited", sheet, b.title, compared));
        const set: Attributes = {};
        const was: Attributes = {};
        for (const compared of apply) {
            if (overwritesData(compared, product.hasData)) {
                draft.conflicts.push(fieldConflict("overwritesData", sheet, b.title, compared));
                continue;
            }
            const title = String(compared.target.title);
            if (compared.aspect === "title" && takenByAnother(copy.summaryFields, owner, product, title, fieldKey)) {
                draft.conflicts.push(fieldConflict("titleTaken", sheet, b.title, compared));
                continue;
            }
            Object.assign(set, compared.target);
            Object.assign(was, compared.product);
            if (compared.aspect === "title") titleAfter.set(product, title);
        }
        if (Object.keys(set).length > 0) draft.changes.push({ kind: "updateSummaryField", ...onCopy, fieldId: product.id, title: product.title, set, was });
    }

    for (const { base: b, target: t } of pairs) {
        if (!b || t) continue;
        const product = titled.get(b.title);
        if (!product || owner.has(product)) continue;
        const deleting = removeUnused && !product.hasData;
        draft.removed.push({ sheet, kind: "summaryField", title: product.title, hasData: product.hasData, deleted: deleting });
        if (deleting) {
            titleAfter.delete(product);
            draft.changes.push({ kind: "deleteSummaryField", ...onCopy, fieldId: product.id, title: product.title });
        }
    }

    for (const { base: b, target: t } of pairs) {
        if (b || !t) continue;
        const existing = titled.get(t.title);
        if (existing && !owner.has(existing)) {
            owner.set(existing, t);
            // The code the app stamps is never the template's: a Product Code field added already is compared without it.
            const [newTemplate, product] = [fieldAttributes(t, target), fieldAttributes(existing, asIs)];
            if (!same(newTemplate, product)) draft.conflicts.push(titleTaken(sheet, { field: t.title }, newTemplate, product));
            continue;
        }
        const holder = [...titleAfter].find(([, title]) => title === t.title)?.[0];
        if (holder) {
            draft.conflicts.push(titleTaken(sheet, { field: t.title }, fieldAttributes(t, target), fieldAttributes(holder, asIs)));
            continue;
        }
        // A Product Code field new to the sheet gets the code, as provisioning stamps it.
        const value = t.title === PRODUCT_CODE_FIELD ? productCode : t.value;
        const field: SummaryFieldShape = { ...t, id: undefined, value, formula: t.formula === undefined ? undefined : target.inProduct(t.formula) };
        draft.changes.push({ kind: "addSummaryField", ...onCopy, field });
    }
}

function fieldConflict(kind: ConflictKind, sheet: string, field: string, compared: AspectCompared): ConvergenceConflict {
    return { kind, sheet, field, aspect: compared.aspect, oldTemplate: compared.base, newTemplate: compared.target, product: compared.product };
}

function byName(sheets: readonly SheetShape[]): SheetShape[] {
    return [...sheets].sort((a, b) => compareText(a.name, b.name));
}

const CHANGE_ORDER: Record<ConvergenceChange["kind"], [phase: number, rank: number]> = {
    addSheet: [0, 0],
    renameSheet: [1, 0],
    addReferences: [2, 0],
    deleteColumn: [3, 0],
    updateColumn: [3, 1],
    addColumn: [3, 2],
    deleteSummaryField: [4, 0],
    updateSummaryField: [4, 1],
    addSummaryField: [4, 2],
};

function titleOfChange(change: ConvergenceChange): string {
    switch (change.kind) {
        case "addColumn":
            return change.column.title;
        case "addSummaryField":
            return change.field.title;
        case "updateColumn":
        case "deleteColumn":
        case "updateSummaryField":
        case "deleteSummaryField":
            return change.title;
        default:
            return "";
    }
}

function changeOrder(a: ConvergenceChange, b: ConvergenceChange): number {
    const [phaseA, rankA] = CHANGE_ORDER[a.kind];
    const [phaseB, rankB] = CHANGE_ORDER[b.kind];
    const positionOf = (change: ConvergenceChange) => ("position" in change ? change.position : -1);
    return compareText(a.sheet, b.sheet) || phaseA - phaseB || positionOf(a) - positionOf(b) || compareText(titleOfChange(a), titleOfChange(b)) || rankA - rankB;
}

function conflictOrder(a: ConvergenceConflict, b: ConvergenceConflict): number {
    const phase = (conflict: ConvergenceConflict) => (conflict.column !== undefined ? 1 : conflict.field !== undefined ? 2 : 0);
    return (
        compareText(a.sheet, b.sheet) ||
        phase(a) - phase(b) ||
        (a.position ?? -1) - (b.position ?? -1) ||
        compareText(a.column ?? a.field ?? "", b.column ?? b.field ?? "") ||
        compareText(a.aspect ?? "", b.aspect ?? "") ||
        compareText(a.kind, b.kind)
    );
}

function removedOrder(a: RemovedFromTemplate, b: RemovedFromTemplate): number {
    const rank = { sheet: 0, column: 1, summaryField: 2 };
    return compareText(a.sheet, b.sheet) || rank[a.kind] - rank[b.kind] || (a.position ?? -1) - (b.position ?? -1) || compareText(a.title, b.title);
}

/**
 * The Smartsheet calls the plan's changes cost, as the apply makes them. One per column change
 * (`addColumn`, `updateColumn`, `deleteColumn`) and one per summary field change (Smartsheet
 * takes fields in bulk, but the apply carries out each change on its own, claimed and looked for);
 * `updateSheet` per rename. An added sheet costs what it
 * costs provisioning: `copySheet`; the remap's `createCrossSheetReference` per reference, one
 * `updateRows` for its cell formulas, `updateColumn` per column formula and one
 * `updateSummaryFields` for its summary formulas and the code (or, without summary formulas,
 * `stampSummary`'s `getSummary` and `updateSummaryFields`), with `getSummary` for the summary it
 * rewrites and `getSheet` for each copy it reads whole — the holder with cell or column formulas,
 * and each copy a new reference reads (`blueprintReads`: once each, whichever changes need it);
 * registering the Document Register reads the Filing Index and updates the product's row (every
 * product provisioned has one). Not counted: the reads that built the product's shape for this
 * plan (one `getSheet` and one `getSummary` per copy), which an apply that plans afresh spends again.
 */
export function callsOf(changes: readonly ConvergenceChange[]): SmartsheetCalls {
    const counts = new Map<string, number>();
    const add = (operation: string, count = 1) => {
        if (count > 0) counts.set(operation, (counts.get(operation) ?? 0) + count);
    };
    const readWhole = new Set<string>();
    for (const change of changes) {
        switch (change.kind) {
            case "addSheet":
                add("copySheet");
                add("createCrossSheetReference", change.references.length);
                for (const reference of change.references) readWhole.add(reference.sourceTemplate);
                if (change.cellFormulas || change.columnFormulas.length > 0) readWhole.add(change.sheet);
                if (change.cellFormulas) add("updateRows");
                add("updateColumn", change.columnFormulas.length);
                if (change.summaryFormulas || change.stampsCode) {
                    add("getSummary");
                    add("updateSummaryFields");
                }
                if (change.registers) {
                    add("getSheet");
                    add("updateRows");
                }
                break;
            case "renameSheet":
                add("updateSheet");
                break;
            case "addReferences":
                add("createCrossSheetReference", change.references.length);
                for (const reference of change.references) readWhole.add(reference.sourceTemplate);
                break;
            case "addColumn":
            case "updateColumn":
            case "deleteColumn":
                add(change.kind);
                break;
            // One request per field: each change is carried out (claimed, looked for, adopted) on its own.
            case "addSummaryField":
                add("addSummaryFields");
                break;
            case "updateSummaryField":
                add("updateSummaryFields");
                break;
            case "deleteSummaryField":
                add("deleteSummaryFields");
                break;
        }
    }
    add("getSheet", readWhole.size);
    return callsFrom(counts);
}

/** Several plans' calls together: the total of a convergence over many products. */
export function sumCalls(calls: readonly SmartsheetCalls[]): SmartsheetCalls {
    const counts = new Map<string, number>();
    for (const { byOperation } of calls) for (const [operation, count] of Object.entries(byOperation)) counts.set(operation, (counts.get(operation) ?? 0) + count);
    return callsFrom(counts);
}

function callsFrom(counts: ReadonlyMap<string, number>): SmartsheetCalls {
    const byOperation = Object.fromEntries([...counts].sort(([a], [b]) => compareText(a, b)));
    return { total: [...counts.values()].reduce((sum, count) => sum + count, 0), byOperation };
}
