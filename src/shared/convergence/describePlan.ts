import {
    sumCalls,
    type Attributes,
    type ConvergenceChange,
    type ConvergenceConflict,
    type ConvergencePlan,
    type RemovedFromTemplate,
    type SmartsheetCalls,
} from "./plan";

/**
 * A plan as lines for the CLI and the jobs API, one per change, conflict and removal, then the
 * calls it costs: `sheet "Risk Register": add column "Owner" (CONTACT_LIST) at 4`.
 */
export function describePlan(plan: ConvergencePlan): string[] {
    return [
        ...plan.changes.map(describeChange),
        ...plan.conflicts.map((conflict) => `conflict: ${describeConflict(conflict)}`),
        ...plan.removedFromTemplate.map(describeRemoved),
        `calls: ${describeCalls(plan.calls)}`,
    ];
}

/** Each product's plan under its code, then the total over all of them. */
export function describePlans(plans: ReadonlyArray<{ productCode: string; plan: ConvergencePlan }>): string[] {
    const lines: string[] = [];
    for (const { productCode, plan } of plans) {
        lines.push(`product ${productCode}: ${counted(plan.changes.length, "change")}, ${counted(plan.conflicts.length, "conflict")}`);
        lines.push(...describePlan(plan).map((line) => `  ${line}`));
    }
    const changes = plans.reduce((sum, { plan }) => sum + plan.changes.length, 0);
    const conflicts = plans.reduce((sum, { plan }) => sum + plan.conflicts.length, 0);
    const parked = plans.filter(({ plan }) => plan.conflicts.length > 0).length;
    lines.push(
        `total: ${counted(plans.length, "product")}, ${counted(changes, "change")}, ${counted(conflicts, "conflict")} ` +
            `(${counted(parked, "product")} to park); calls: ${describeCalls(sumCalls(plans.map(({ plan }) => plan.calls)))}`,
    );
    return lines;
}

/** What a person deciding `keep-product` or `take-template` needs: where, and what each side has. */
export function describeConflict(conflict: ConvergenceConflict): string {
    const where = [
        `sheet "${conflict.sheet}"`,
        conflict.column !== undefined ? `column "${conflict.column}"` : undefined,
        conflict.field !== undefined ? `summary field "${conflict.field}"` : undefined,
    ]
        .filter(Boolean)
        .join(", ");
    const holder = conflict.column !== undefined ? "column" : "field";
    const aspect = conflict.aspect === undefined ? "" : ` ${conflict.aspect}`;
    const attributes = shownApart(conflict.oldTemplate, conflict.newTemplate, conflict.product);
    switch (conflict.kind) {
        case "edited":
            return (
                `${where},${aspect}: the template had ${attributes(conflict.oldTemplate)}, now has ${attributes(conflict.newTemplate)}; ` +
                `the product has ${attributes(conflict.product)}`
            );
        case "overwritesData":
            return `${where},${aspect}: the template's ${attributes(conflict.newTemplate)} would overwrite what the product's ${holder === "column" ? "cells hold" : "field holds"}`;
        case "titleTaken":
            if (conflict.oldTemplate) {
                return `${where}: the template renamed it to ${attributes(conflict.newTemplate)}, a title the product gives a ${holder} of its own (${attributes(conflict.product)})`;
            }
            return `${where}: the template adds it (${attributes(conflict.newTemplate)}), and the product has one of its own under that title (${attributes(conflict.product)})`;
        case "missingInProduct":
            return `${where}: the template changed it (from ${attributes(conflict.oldTemplate)} to ${attributes(conflict.newTemplate)}), and the product has no such ${holder}`;
        case "sheetMissing":
            return `${where}: the product has no copy of it`;
        case "nameDoesNotFit":
            return `${where}: ${conflict.detail ?? "the product's sheet names do not fit"}`;
    }
}

function describeChange(change: ConvergenceChange): string {
    const sheet = `sheet "${change.sheet}"`;
    switch (change.kind) {
        case "addSheet": {
            const remap = change.references.length > 0 ? `, ${counted(change.references.length, "reference")} remapped` : "";
            const stamp = change.stampsCode ? ", product code stamped" : "";
            const register = change.registers ? ", registered in the Filing Index" : "";
            return `${sheet}: add sheet "${change.name}" (a copy of the template sheet${remap}${stamp}${register})`;
        }
        case "renameSheet":
            return `${sheet}: rename "${change.from}" to "${change.to}"`;
        case "addReferences":
            return `${sheet}: add ${change.references.map((reference) => `{${reference.name}} → "${reference.sourceTemplate}"`).join(", ")}`;
        case "addColumn": {
            const { column } = change;
            const extras = [
                column.options.length > 0 ? `options ${JSON.stringify(column.options)}` : undefined,
                column.formula !== undefined ? `formula ${JSON.stringify(column.formula)}` : undefined,
            ].filter(Boolean);
            return `${sheet}: add column "${column.title}" (${column.systemColumnType ?? column.type}) at ${column.index}${extras.length > 0 ? ` with ${extras.join(", ")}` : ""}`;
        }
        case "updateColumn":
            return `${sheet}: update column "${change.title}": ${differences(change.was, change.set)}`;
        case "deleteColumn":
            return `${sheet}: delete column "${change.title}" (removed from the template, holds no data)`;
        case "addSummaryField": {
            const { field } = change;
            const content = field.formula ?? field.value;
            return `${sheet}: add summary field "${field.title}" (${field.type ?? "TEXT_NUMBER"})${content === undefined ? "" : ` = ${JSON.stringify(content)}`}`;
        }
        case "updateSummaryField":
            return `${sheet}: update summary field "${change.title}": ${differences(change.was, change.set)}`;
        case "deleteSummaryField":
            return `${sheet}: delete summary field "${change.title}" (removed from the template, holds no data)`;
    }
}

function describeRemoved(removed: RemovedFromTemplate): string {
    const what = removed.kind === "sheet" ? `sheet "${removed.title}"` : `${removed.kind === "column" ? "column" : "summary field"} "${removed.title}"`;
    const fate = removed.deleted ? "no data, deleted" : removed.kind === "sheet" ? "kept" : removed.hasData ? "holds data, kept" : "no data, kept unless removal is opted in";
    return `removed from the template: sheet "${removed.sheet}", ${what} (${fate})`;
}

export function describeCalls(calls: SmartsheetCalls): string {
    const operations = Object.entries(calls.byOperation).map(([operation, count]) => `${operation} ${count}`);
    return operations.length === 0 ? "none" : `${operations.join(", ")} (${calls.total} in all)`;
}

/** `formula "=A" → "=B"`, for the attributes that change. */
function differences(was: Attributes, set: Attributes): string {
    return Object.keys(set)
        .filter((name) => JSON.stringify(was[name] ?? null) !== JSON.stringify(set[name]))
        .map((name) => `${name} ${value(was[name])} → ${value(set[name])}`)
        .join(", ");
}

/** Renders a side of a conflict by the attributes in which the sides differ (all of them, where they do not). */
function shownApart(...sides: Array<Attributes | undefined>): (of: Attributes | undefined) => string {
    const present = sides.filter((side): side is Attributes => side !== undefined);
    const names = [...new Set(present.flatMap((side) => Object.keys(side)))];
    const differing = names.filter((name) => new Set(present.map((side) => JSON.stringify(side[name] ?? null))).size > 1);
    const shown = differing.length > 0 ? differing : names;
    return (of) => (of === undefined ? "nothing" : shown.filter((name) => name in of).map((name) => `${name} ${value(of[name])}`).join(", "));
}

function value(content: Attributes[string] | undefined): string {
    return content === null || content === undefined ? "none" : JSON.stringify(content);
}

function counted(count: number, noun: string): string {
    return `${count} ${noun}${count === 1 ? "" : "s"}`;
}
