import type { ScheduleContext, SimSheetView, SimView } from "./actions";
import type { ConvergenceAction, ConvergenceDecision, CustomerEdit, TemplateChange } from "./plan";

/**
 * The people's side of a template convergence, done through the simulator's REST API and the
 * app's HTTP API as a person would: the template changed, `POST /api/converge`, a second template
 * change while the convergence runs, customers editing their products' copies, and an unpark with
 * a decision once a product parks on a conflict. What each did (and whether it landed) is kept in
 * `ConvergenceRecord`, for the auditor.
 */

/** What a change adds or makes, and where, so the auditor can look for it. */
export const TEMPLATE_CHANGES = {
    addColumn: { sheet: "Risk Register", title: "Severity", index: 2 },
    columnFormula: {
        sheet: "Change Log",
        column: "Approval Status",
        formula: '=IF(COUNTIF({Approvals Decision}, "Pending") > 0, "Awaiting approval", "All approved")',
        /** What only the changed formula says. */
        marker: '"All approved"',
    },
    addSummaryField: { sheet: "Specifications", title: "Review Cycle", objectValue: "Quarterly" },
} as const;

/** The second change (mid-convergence): none of it may reach a product converging to the first. */
export const SECOND_CHANGES = {
    addColumn: { sheet: "Suppliers", title: "Escalation Owner", index: 1 },
    columnFormula: {
        sheet: "Change Log",
        column: "Approval Status",
        formula: '=IF(COUNTIF({Approvals Decision}, "Pending") > 0, "Second wording", "Second wording too")',
        marker: '"Second wording',
    },
    addSummaryField: { sheet: "Translations", title: "Audit Cycle", objectValue: "Yearly" },
} as const;

/** What customers write: a value, a wording of their own in a formula, a column of their own. */
export const CUSTOMER = {
    cell: { sheet: "Risk Register", column: "Mitigation", row: 1 },
    formula: { sheet: "Change Log", column: "Approval Status", from: '"Awaiting approval"', to: '"Waiting on approvals"' },
    ownColumn: { sheet: "Specifications", title: "Customer Notes", index: 4 },
} as const;

/** A customer's edit of a product's copy, as it stands once made. */
export interface CustomerEditMade {
    /** The product's intake row (its job's row key). */
    rowId: number;
    code: string;
    edit: CustomerEdit;
    /** The template sheet whose copy was edited, and the copy. */
    sheet: string;
    sheetId: number;
    column: string;
    /** The column's id (the customer's own column: the one it got). */
    columnId: number;
    /** `cellValue`: the row. */
    cellRowId?: number;
    /** `cellValue`: the value written; `columnFormula`: the formula. */
    value?: string;
    /** Before the apply (may conflict), or while the convergence ran. */
    when: "before" | "during";
}

/** What the harness knows of a schedule's convergence. */
export class ConvergenceRecord {
    /** Versions the applies answered with (each fleet's). */
    readonly targets = new Set<string>();
    /** Every apply's answer, in order: its status, and the versions it named. */
    readonly applies: Array<{ status: number | null; versions: string[] }> = [];
    /** The first template change, as made. */
    readonly changes: TemplateChange[] = [];
    /** The second, mid-convergence: made once the applies had answered. */
    readonly changesAgain: TemplateChange[] = [];
    readonly customerEdits: CustomerEditMade[] = [];
    /** Job key → the decisions a person unparked it with (in order). */
    readonly decisions = new Map<string, ConvergenceDecision[]>();
    /** Job rows done when the convergence was applied: every one is converged or parked at rest. */
    readonly convergedRows: number[] = [];
    /** Set once the first apply has answered. */
    applied = false;
    /** Applies sent and not yet answered. */
    pendingApplies = 0;
}

export async function convergenceAction(context: ScheduleContext, action: ConvergenceAction): Promise<string> {
    switch (action.kind) {
        case "changeTemplate":
            return changeTemplate(context, action.changes, TEMPLATE_CHANGES, context.convergence.changes);
        case "editTemplateAgain": {
            // The running convergence was started on the first version: wait (bounded) until every apply has answered.
            for (let waited = 0; (!context.convergence.applied || context.convergence.pendingApplies > 0) && waited < 40_000; waited += 200) await sleep(200);
            return changeTemplate(context, [action.change], SECOND_CHANGES, context.convergence.changesAgain);
        }
        case "convergeApply": {
            const count = action.concurrent ? 2 : 1;
            context.convergence.pendingApplies += count;
            try {
                return (await Promise.all(Array.from({ length: count }, () => applyUntilAnswered(context)))).join("; ");
            } finally {
                context.convergence.pendingApplies -= count;
            }
        }
        case "customerEditsProduct":
            return customerEdit(context, action);
        case "unparkDecision":
            return unparkWithDecision(context, action.jobKey ?? "", action.decision);
    }
}

/** `POST /api/converge`, sent again (as a person would) while the host is down or answers 5xx. */
async function applyUntilAnswered(context: ScheduleContext): Promise<string> {
    const deadline = Date.now() + 30_000;
    let last = "";
    while (Date.now() < deadline) {
        try {
            const answer = await context.stack.api("converge", { method: "POST", body: JSON.stringify({ by: "chaos" }), signal: AbortSignal.timeout(15_000) });
            const text = await answer.text();
            if (answer.status === 202) {
                const body = JSON.parse(text) as { fleets: Array<{ version: string; instanceId: string; started: boolean }> };
                const versions = body.fleets.map((fleet) => fleet.version);
                context.convergence.applies.push({ status: 202, versions });
                for (const version of versions) context.convergence.targets.add(version);
                context.convergence.applied = true;
                return `202 ${body.fleets.map((fleet) => `${fleet.version} ${fleet.started ? "started" : "running already"}`).join(", ")}`;
            }
            context.convergence.applies.push({ status: answer.status, versions: [] });
            last = `${answer.status} ${text.slice(0, 200)}`;
            if (answer.status < 500) return last;
        } catch (error) {
            last = `no answer (${error instanceof Error ? error.message : String(error)})`;
        }
        await sleep(1_000);
    }
    return `never answered 202; last: ${last}`;
}

type ChangeSet = typeof TEMPLATE_CHANGES | typeof SECOND_CHANGES;

/** A template change as a person makes it, a second after the last analysis (Smartsheet's `modifiedAt` counts whole seconds). */
async function changeTemplate(context: ScheduleContext, changes: readonly TemplateChange[], set: ChangeSet, made: TemplateChange[]): Promise<string> {
    const { stack } = context;
    await sleep(1_050 - (Date.now() % 1_000));
    const view = await context.simView();
    const template = (name: string) => {
        const found = view.sheets.find((sheet) => sheet.folderId === view.templateFolderId && sheet.name === name);
        if (!found) throw new Error(`the template has no sheet "${name}"`);
        return found;
    };
    const outcomes: string[] = [];
    for (const change of changes) {
        try {
            if (change === "addColumn") {
                const { sheet, title, index } = set.addColumn;
                await stack.smartsheet("POST", `sheets/${template(sheet).id}/columns`, { title, type: "TEXT_NUMBER", index });
            } else if (change === "columnFormula") {
                const { sheet, column, formula } = set.columnFormula;
                const holder = template(sheet);
                await stack.smartsheet("PUT", `sheets/${holder.id}/columns/${columnIdOf(holder, column)}`, { formula });
            } else {
                const { sheet, title, objectValue } = set.addSummaryField;
                await stack.smartsheet("POST", `sheets/${template(sheet).id}/summary/fields`, [{ title, type: "TEXT_NUMBER", objectValue }]);
            }
            made.push(change);
            outcomes.push(`${change} made`);
        } catch (error) {
            // A fault may have refused it, or made it and answered an error: the template as it is decides.
            const after = await context.simView();
            const landed = changeLanded(after, change, set);
            if (landed) made.push(change);
            outcomes.push(`${change} answered an error (${error instanceof Error ? error.message.slice(0, 120) : String(error)}); ${landed ? "made anyway" : "not made"}`);
        }
    }
    return outcomes.join(", ");
}

function changeLanded(view: SimView, change: TemplateChange, set: ChangeSet): boolean {
    const template = (name: string) => view.sheets.find((sheet) => sheet.folderId === view.templateFolderId && sheet.name === name);
    if (change === "addColumn") return template(set.addColumn.sheet)?.columns.some((column) => column.title === set.addColumn.title) ?? false;
    if (change === "columnFormula") return template(set.columnFormula.sheet)?.columns.find((column) => column.title === set.columnFormula.column)?.formula === set.columnFormula.formula;
    return template(set.addSummaryField.sheet)?.summaryFields?.some((field) => field.title === set.addSummaryField.title) ?? false;
}

/** A customer edits a copy of their product (found through its job row's `copies`), and the edit is kept when it landed. */
async function customerEdit(context: ScheduleContext, action: Extract<ConvergenceAction, { kind: "customerEditsProduct" }>): Promise<string> {
    const { stack } = context;
    const rowId = context.rowIds[action.product];
    if (rowId === undefined) return "no such product";
    const job = await context.job(rowId);
    if (!job || job.state !== "done") return `product ${rowId} is not done (${String(job?.state ?? "no job")}); nothing to edit`;
    const copies = JSON.parse(String(job.copies ?? "{}")) as Record<string, { sheetId: number }>;
    const code = String(job.productCode);
    const when = context.convergence.applied ? "during" : "before";
    const view = await context.simView();
    const copyOf = (template: string): SimSheetView | undefined => {
        const id = copies[template]?.sheetId;
        return id === undefined ? undefined : view.sheets.find((sheet) => sheet.id === id);
    };
    let made: CustomerEditMade | undefined;
    let outcome = "";
    try {
        if (action.edit === "cellValue") {
            const sheet = copyOf(CUSTOMER.cell.sheet);
            const row = sheet?.rows[CUSTOMER.cell.row];
            if (!sheet || !row) return `no copy of ${CUSTOMER.cell.sheet} with a row ${CUSTOMER.cell.row}`;
            const columnId = columnIdOf(sheet, CUSTOMER.cell.column);
            const value = `Customer's own plan ${context.plan.seed % 1000}-${context.convergence.customerEdits.length + 1}`;
            made = { rowId, code, edit: action.edit, sheet: CUSTOMER.cell.sheet, sheetId: sheet.id, column: CUSTOMER.cell.column, columnId, cellRowId: row.id, value, when };
            await stack.smartsheet("PUT", `sheets/${sheet.id}/rows`, [{ id: row.id, cells: [{ columnId, value }] }]);
        } else if (action.edit === "columnFormula") {
            const sheet = copyOf(CUSTOMER.formula.sheet);
            if (!sheet) return `no copy of ${CUSTOMER.formula.sheet}`;
            const column = sheet.columns.find((candidate) => candidate.title === CUSTOMER.formula.column);
            if (!column?.formula?.includes(CUSTOMER.formula.from)) return `"${CUSTOMER.formula.column}" has no formula saying ${CUSTOMER.formula.from} (${JSON.stringify(column?.formula ?? null)}); not edited`;
            const formula = column.formula.replace(CUSTOMER.formula.from, CUSTOMER.formula.to);
            made = { rowId, code, edit: action.edit, sheet: CUSTOMER.formula.sheet, sheetId: sheet.id, column: column.title, columnId: column.id, value: formula, when };
            await stack.smartsheet("PUT", `sheets/${sheet.id}/columns/${column.id}`, { formula });
        } else {
            // The template's own new title (a conflict apply cannot settle), or one only the customer uses.
            const { sheet: template, title, index } = action.takesTemplateTitle ? { ...TEMPLATE_CHANGES.addColumn, index: 4 } : CUSTOMER.ownColumn;
            const sheet = copyOf(template);
            if (!sheet) return `no copy of ${template}`;
            if (sheet.columns.some((column) => column.title === title)) return `"${sheet.name}" has a column "${title}" already; not added`;
            made = { rowId, code, edit: action.edit, sheet: template, sheetId: sheet.id, column: title, columnId: 0, when };
            await stack.smartsheet("POST", `sheets/${sheet.id}/columns`, { title, type: "TEXT_NUMBER", index: Math.min(index, sheet.columns.length) });
        }
        outcome = "made";
    } catch (error) {
        outcome = `answered an error (${error instanceof Error ? error.message.slice(0, 160) : String(error)})`;
    }
    if (!made) return `${code} ${action.edit}: not edited, ${outcome}`;
    // The simulator's state decides whether it landed (a fault may make a write and answer an error).
    const after = await context.simView();
    const sheet = after.sheets.find((candidate) => candidate.id === made!.sheetId);
    const column = sheet?.columns.find((candidate) => (made!.edit === "ownColumn" ? candidate.title === made!.column : candidate.id === made!.columnId));
    const landed =
        made.edit === "cellValue"
            ? sheet?.rows.find((row) => row.id === made!.cellRowId)?.cells?.find((cell) => cell.columnId === made!.columnId)?.value === made.value
            : made.edit === "columnFormula"
              ? column?.formula === made.value
              : column !== undefined;
    if (landed) {
        if (made.edit === "ownColumn") made.columnId = column!.id;
        context.convergence.customerEdits.push(made);
    }
    return `${code} ${made.edit} of "${made.sheet}" ${made.column} ${when} the apply: ${outcome}${landed ? "" : ", not landed"}`;
}

/**
 * A person unparks a product parked on its convergence with the plan's decision; take-template
 * refused (a conflict it cannot settle, a title taken) is followed by keep-product, as the app's
 * answer tells them to.
 */
export async function unparkWithDecision(context: ScheduleContext, jobKey: string, decision: ConvergenceDecision): Promise<string> {
    const send = async (chosen: ConvergenceDecision) => {
        const answer = await context.stack.api(`jobs/${jobKey}/unpark`, {
            method: "POST",
            body: JSON.stringify({ by: "chaos", note: "a person decides", decision: chosen }),
            signal: AbortSignal.timeout(15_000),
        });
        const text = await answer.text();
        if (answer.status === 202) context.convergence.decisions.set(jobKey, [...(context.convergence.decisions.get(jobKey) ?? []), chosen]);
        return { status: answer.status, text };
    };
    const first = await send(decision);
    if (first.status === 400 && decision === "take-template") {
        const second = await send("keep-product");
        return `${jobKey} take-template refused (${first.text.slice(0, 160)}); keep-product answered ${second.status}`;
    }
    return `${jobKey} ${decision} answered ${first.status}${first.status === 202 ? "" : ` ${first.text.slice(0, 160)}`}`;
}

function columnIdOf(sheet: SimSheetView, title: string): number {
    const column = sheet.columns.find((candidate) => candidate.title === title);
    if (!column) throw new Error(`sheet "${sheet.name}" has no column "${title}"`);
    return column.id;
}

function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
}
