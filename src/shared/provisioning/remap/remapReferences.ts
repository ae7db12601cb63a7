import { formatJobKey, type JobRow, type PlannedSummaryWrite, type RemapPlan } from "../../jobs/JobRow";
import { referenceName } from "../../naming/productNames";
import { AmbiguousWriteError, isSmartsheetError } from "../../smartsheet/errors";
import type { FolderChild, Sheet, SummaryField } from "../../smartsheet/model";
import type { NewCrossSheetReference, RowUpdate, SmartsheetPort, SummaryFieldUpdate } from "../../smartsheet/SmartsheetPort";
import {
    analyseSheet,
    blueprintVersion,
    type Blueprint,
    holders,
    PRODUCT_CODE_FIELD,
    readOutsideSheets,
    readSheetForAnalysis,
    type OutsideSheet,
    type RemappableSheets,
    type SheetRead,
    type TemplateReference,
    type TemplateSheet,
} from "../Blueprint";
import { analyseTemplate, listTemplateSheets } from "../blueprintSource";
import type { StepInput, StepOutcome } from "../contracts";
import { NeedsPersonError } from "../errors";
import { formulasOf, referenceProblem, referenceProblems, rowsLineUp, type ReferenceProblem, type ReferenceTargets } from "../productReferences";
import type { ProvisioningDeps } from "../ProvisioningDeps";
import { runStep, type StepContext } from "../runStep";
import { underClaim } from "../underClaim";

/** Smartsheet's "The resource you tried to create already exists." */
const ALREADY_EXISTS = 1129;

/**
 * Copies keep their cross-sheet references pointing at the template's sheets. For every copy
 * whose formulas use such a reference, create the same reference (deterministic name) to the
 * product's own copy of that sheet — columns matched by title, rows by row number — and
 * rewrite its cell, column and summary-field formulas to use it. Each sheet it needs is read
 * once; a reference that already exists is adopted.
 *
 * The job's blueprint describes the copies only if no template sheet changed since the sweep
 * analysed it (one listing of the template folder tells) and the analysis was settled (see
 * `Blueprint.settled`). Otherwise the product's own copies are
 * analysed — they may come from either version — and the template is analysed again for later
 * jobs. Either way nothing is written before every formula of the sheets read is known to use
 * only the product's own sheets or shared sheets outside the template.
 *
 * The copies do not change once made, and so neither does that decision: the blueprint's is
 * recorded on the row (`RemapPlan`) before the copies are read, and a re-run of the step trusts
 * it instead of listing the template again.
 */
export function remapReferences(deps: ProvisioningDeps, input: StepInput): Promise<StepOutcome> {
    return runStep(deps, input, "remapReferences", async (context) => {
        const { row, smartsheet } = context;
        if (row.templates.every((template) => row.remapped.includes(template))) return;
        const job = formatJobKey(input.jobKey);
        let plan = row.blueprintSettled && row.remapPlan?.blueprintVersion === row.blueprintVersion ? row.remapPlan : undefined;
        let listing: FolderChild[] | undefined;
        if (!plan) {
            listing = await listTemplateSheets(smartsheet, context.site.templateFolderId);
            const version = blueprintVersion(listing);
            if (version === row.blueprintVersion && row.blueprintSettled) {
                const decided: RemapPlan = { blueprintVersion: version, summaries: {} };
                await context.update((latest) => ({ ...latest, remapPlan: decided }));
                plan = decided;
            } else if (version === row.blueprintVersion) {
                deps.log.info(
                    `job ${job}: the template was analysed within moments of an edit (version ${version}), so the analysis may predate ` +
                        `an edit in the same second; the product is analysed from its copies`,
                );
            } else {
                deps.log.info(
                    `job ${job}: the template changed mid-job (version ${row.blueprintVersion ?? "none"} → ${version}); ` +
                        `the product is analysed from its copies`,
                );
            }
        }
        if (plan) {
            const problems = await remapFromBlueprint(deps, context, plan, listing ?? []);
            if (problems.length === 0) return;
            deps.log.warn(
                `job ${job}: the copies do not match the template's analysis (${problems[0]!.message}); the product is analysed from its copies`,
            );
            await context.update((latest) => ({ ...latest, remapPlan: undefined }));
        }
        await remapFromCopies(deps, context, listing ?? (await listTemplateSheets(smartsheet, context.site.templateFolderId)));
    });
}

/**
 * Every copy was made after the job's analysis of the template: its blueprint says what to remap.
 * A summary the plan has a request for already is not read again (see `writeSummary`). The
 * template as listed adds nothing to the blueprint's sheets at the same version, so a re-run
 * that trusts the plan has no listing to give (`listing` empty).
 */
async function remapFromBlueprint(deps: ProvisioningDeps, context: StepContext, plan: RemapPlan, listing: readonly FolderChild[]): Promise<ReferenceProblem[]> {
    const { row, smartsheet } = context;
    const blueprint = await context.blueprint(row);
    const targets = referenceTargets(row, listing, blueprint.sheets, blueprint.outsideSheets);
    const beyondTheProduct = problemsOfCopiesNotRead(row, blueprint, targets);
    if (beyondTheProduct.length > 0) throw new NeedsPersonError(beyondTheProduct.map((problem) => problem.message).join(" "));
    const todo = holders(blueprint).filter((holder) => !row.remapped.includes(holder.name));

    const toRead = new Set<string>();
    const summariesToRead = new Set<string>();
    for (const holder of todo) {
        if (holder.cellFormulas.length > 0 || holder.columnFormulas.length > 0) toRead.add(holder.name);
        if (holder.summaryFormulas.length > 0 && !plan.summaries[holder.name]) summariesToRead.add(holder.name);
        for (const reference of holder.references) if (reference.sourceTemplate) toRead.add(reference.sourceTemplate);
    }
    const sheets = new Map<string, Sheet>();
    for (const template of toRead) sheets.set(template, await smartsheet.getSheet(copyOf(row, template), { include: ["crossSheetReferences"] }));
    const summaries = new Map<string, SummaryField[]>();
    for (const template of summariesToRead) summaries.set(template, await smartsheet.getSummaryFields(copyOf(row, template)));

    const problems = await remapAndCheck(deps, context, {
        holders: todo,
        sheets,
        summaries,
        plannedSummaries: new Map(Object.entries(plan.summaries)),
        recordPlan: true,
        blueprintReferences: new Map(blueprint.sheets.map((sheet) => [sheet.name, sheet.references])),
        targets,
    });
    if (problems.length === 0) await context.update((latest) => ({ ...latest, remapped: [...latest.templates] }));
    return problems;
}

/**
 * The blueprint describes every copy, also those the remap does not read: each reference their
 * formulas use that the remap does not point at the product's own sheets (one into a template
 * sheet is, in a holder) must reach a shared sheet, never another product's, a template sheet or
 * a sheet nobody named. The blueprint's analysis decides it, so this costs no call.
 */
function problemsOfCopiesNotRead(row: JobRow, blueprint: Blueprint, targets: ReferenceTargets): ReferenceProblem[] {
    return blueprint.sheets.flatMap((sheet) => {
        const references = new Map(sheet.references.map((reference) => [reference.name, reference]));
        const used = sheet.formulaReferences ?? [...references.keys()];
        return used.flatMap((name) => {
            const reference = references.get(name);
            // Holders' references into the template get the product's own; a name with no reference is the read copies' check.
            if (!reference || reference.sourceTemplate) return [];
            return referenceProblem(row.copies[sheet.name]?.name ?? sheet.name, name, reference.sourceSheetId, targets) ?? [];
        });
    });
}

/**
 * A template sheet changed since the job's analysis: what the copies hold is the truth. Every
 * copy is read and analysed like a template sheet (its references still carry the template's
 * row and column ids, which the template as it is now turns into row numbers and titles).
 */
async function remapFromCopies(deps: ProvisioningDeps, context: StepContext, listing: readonly FolderChild[]): Promise<void> {
    const { row, smartsheet } = context;
    const template = await analyseTemplate(deps, smartsheet, context.site.templateFolderId, listing);
    const copies = new Map<string, SheetRead>();
    for (const name of row.templates) copies.set(name, await readSheetForAnalysis(smartsheet, copyOf(row, name)));

    const jobTemplateOf = new Map(row.templates.map((name) => [row.copies[name]!.templateSheetId, name]));
    const remappable: RemappableSheets = new Map(
        [...template.reads].flatMap(([id, read]) => {
            const name = jobTemplateOf.get(id);
            return name === undefined ? [] : [[id, { name, sheet: read.sheet }] as const];
        }),
    );
    const analysed = row.templates.map((name) =>
        analyseSheet({ name, templateSheetId: row.copies[name]!.templateSheetId }, copies.get(name)!, remappable),
    );
    const todo = analysed.filter((sheet) => !row.remapped.includes(sheet.name) && sheet.references.some((reference) => reference.sourceTemplate));
    for (const holder of todo) assertRowsLineUp(row, holder, remappable, copies);

    const known = new Map(template.blueprint.outsideSheets.map((sheet) => [sheet.sheetId, sheet]));
    const targets = referenceTargets(row, listing, template.blueprint.sheets, template.blueprint.outsideSheets);
    const unnamed = [...copies.values()].flatMap(({ sheet }) =>
        (sheet.crossSheetReferences ?? [])
            .map((reference) => reference.sourceSheetId)
            .filter((id) => !targets.productSheetIds.has(id) && !targets.templateSheets.has(id) && !known.has(id)),
    );
    const outside = [...known.values(), ...(await readOutsideSheets(smartsheet, unnamed, [...listing.map((sheet) => sheet.name), ...row.templates]))];

    const summaries = new Map([...copies].map(([name, read]) => [name, read.summary]));
    const problems = await remapAndCheck(deps, context, {
        holders: todo,
        sheets: new Map([...copies].map(([name, read]) => [name, read.sheet])),
        summaries,
        plannedSummaries: new Map(),
        recordPlan: false,
        blueprintReferences: new Map(),
        targets: referenceTargets(row, listing, template.blueprint.sheets, outside),
    });
    if (problems.length > 0) throw new NeedsPersonError(problems.map((problem) => problem.message).join(" "));
    // From now on the job provisions from the template as it is (stampSummary finds fields added since the sweep).
    await context.update((latest) => ({
        ...latest,
        remapped: [...latest.templates],
        copiesAnalysed: true,
        blueprintVersion: template.blueprint.version,
        blueprintSettled: template.blueprint.settled,
    }));
}

interface RemapInputs {
    /** Copies to remap, by the job's template sheet names. */
    holders: TemplateSheet[];
    /** Copies read whole, with their references. */
    sheets: ReadonlyMap<string, Sheet>;
    /** Summaries read (their field ids are recorded on the row). */
    summaries: ReadonlyMap<string, SummaryField[]>;
    /** Summary requests an earlier run planned, for copies whose summary was not read now. */
    plannedSummaries: ReadonlyMap<string, PlannedSummaryWrite>;
    /** Add the summary requests worked out now to the row's `RemapPlan` (the blueprint's decision is on it). */
    recordPlan: boolean;
    /** The references of copies not read whole, as the blueprint knows them. */
    blueprintReferences: ReadonlyMap<string, readonly TemplateReference[]>;
    targets: ReferenceTargets;
}

/**
 * Works out the product's references, checks every formula of the sheets read as it will be
 * once rewritten, and only then writes: the summary field ids and requests (on the row, before
 * anything is sent), the references, the formulas, `remapped`. Returns the problems instead of
 * writing when there are any.
 */
async function remapAndCheck(deps: ProvisioningDeps, context: StepContext, plan: RemapInputs): Promise<ReferenceProblem[]> {
    const { row, smartsheet } = context;
    const newReferences = new Map<string, NewCrossSheetReference[]>();
    const renames = new Map<string, Map<string, string>>();
    for (const holder of plan.holders) {
        const created: NewCrossSheetReference[] = [];
        const renamed = new Map<string, string>();
        for (const reference of holder.references) {
            if (!reference.sourceTemplate) continue;
            const target = plan.sheets.get(reference.sourceTemplate)!;
            const name = referenceName(row.productCode, reference.name);
            created.push({ name, ...rangeIn(target, reference, holder.name) });
            renamed.set(reference.name, name);
        }
        newReferences.set(holder.name, created);
        renames.set(holder.name, renamed);
    }
    const rewriterOf = (template: string) => {
        const renamed = renames.get(template) ?? new Map<string, string>();
        return (formula: string) => formula.replace(/\{([^{}]+)\}/g, (whole, name: string) => (renamed.has(name) ? `{${renamed.get(name)}}` : whole));
    };

    const problems: ReferenceProblem[] = [];
    for (const template of new Set([...plan.sheets.keys(), ...plan.summaries.keys()])) {
        const sheet = plan.sheets.get(template);
        const existing = sheet ? (sheet.crossSheetReferences ?? []) : (plan.blueprintReferences.get(template) ?? []);
        const references = new Map<string, number>([
            ...existing.map((reference) => [reference.name, reference.sourceSheetId] as const),
            ...(newReferences.get(template) ?? []).map((reference) => [reference.name, reference.sourceSheetId] as const),
        ]);
        const rewrite = rewriterOf(template);
        problems.push(
            ...referenceProblems(
                { sheetName: row.copies[template]?.name ?? template, formulas: formulasOf(sheet, plan.summaries.get(template)).map(rewrite), references },
                plan.targets,
            ),
        );
    }
    if (problems.length > 0) return problems;

    const summaryWrites = new Map(plan.plannedSummaries);
    const plannedNow = new Map<string, PlannedSummaryWrite>();
    for (const holder of plan.holders) {
        const summary = plan.summaries.get(holder.name);
        if (!summary || holder.summaryFormulas.length === 0) continue;
        const write = summaryWriteOf(holder, summary, rewriterOf(holder.name), row.productCode);
        summaryWrites.set(holder.name, write);
        plannedNow.set(holder.name, write);
    }
    await recordSummaries(context, plan.summaries, plan.recordPlan ? plannedNow : new Map());

    for (const holder of plan.holders) {
        await createReferences(deps, context, holder.name, newReferences.get(holder.name)!, plan.sheets.get(holder.name));
        await rewriteSheetFormulas(smartsheet, copyOf(row, holder.name), holder, plan.sheets.get(holder.name), rewriterOf(holder.name));
        const summaryWrite = summaryWrites.get(holder.name);
        if (summaryWrite && summaryWrite.updates.length > 0) {
            await writeSummary(deps, context, holder.name, summaryWrite);
            continue;
        }
        await context.update((latest) => ({
            ...latest,
            remapped: [...new Set([...latest.remapped, holder.name])],
            codeStampedOn: summaryWrite?.stampsCode ? [...new Set([...latest.codeStampedOn, holder.name])] : latest.codeStampedOn,
        }));
    }
    return [];
}

/** Template sheets (listed now, analysed, or copied for this job) by id, the product's copies, the outside sheets. */
function referenceTargets(
    row: JobRow,
    listing: readonly FolderChild[],
    analysed: readonly TemplateSheet[],
    outsideSheets: readonly OutsideSheet[],
): ReferenceTargets {
    const templateSheets = new Map<number, string>([
        ...analysed.map((sheet) => [sheet.templateSheetId, sheet.name] as const),
        ...listing.map((sheet) => [sheet.id, sheet.name] as const),
        ...Object.entries(row.copies).map(([name, copy]) => [copy.templateSheetId, name] as const),
    ]);
    return {
        productSheetIds: new Set(Object.values(row.copies).map((copy) => copy.sheetId)),
        templateSheets,
        outsideSheets: new Map(outsideSheets.map((sheet) => [sheet.sheetId, sheet])),
    };
}

/** A row range is matched by row number: the target copy must have its rows where the template has them now. */
function assertRowsLineUp(row: JobRow, holder: TemplateSheet, remappable: RemappableSheets, copies: ReadonlyMap<string, SheetRead>): void {
    for (const reference of holder.references) {
        if (!reference.sourceTemplate || (reference.startRowNumber === undefined && reference.endRowNumber === undefined)) continue;
        const templateSheet = remappable.get(reference.sourceSheetId)!.sheet;
        const copy = copies.get(reference.sourceTemplate)!.sheet;
        if (!rowsLineUp(templateSheet, copy, [reference.startRowNumber, reference.endRowNumber])) {
            throw new NeedsPersonError(
                `"${row.copies[holder.name]?.name ?? holder.name}" refers to rows ${reference.startRowNumber}–${reference.endRowNumber} of ` +
                    `"${reference.sourceTemplate}" through {${reference.name}}, but the rows of that template sheet moved after the product's copy ` +
                    `of it was made; point {${referenceName(row.productCode, reference.name)}} at the right rows of "${copy.name}" by hand ` +
                    `(or delete the product's sheets so they are copied again), then unpark the job.`,
            );
        }
    }
}

/**
 * The field ids of the summaries read, and the summary requests worked out from them for the
 * row's plan (when it holds the blueprint's decision): recorded before the remap's first write.
 */
async function recordSummaries(
    context: StepContext,
    summaries: ReadonlyMap<string, SummaryField[]>,
    planned: ReadonlyMap<string, PlannedSummaryWrite>,
): Promise<void> {
    if (summaries.size === 0 && planned.size === 0) return;
    await context.update((latest) => ({
        ...latest,
        summaryFieldIds: {
            ...latest.summaryFieldIds,
            ...Object.fromEntries([...summaries].map(([template, fields]) => [template, Object.fromEntries(fields.map((field) => [field.title, field.id]))])),
        },
        remapPlan:
            latest.remapPlan && planned.size > 0
                ? { ...latest.remapPlan, summaries: { ...latest.remapPlan.summaries, ...Object.fromEntries(planned) } }
                : latest.remapPlan,
    }));
}

function copyOf(row: JobRow, template: string): number {
    const copy = row.copies[template];
    if (!copy) throw new Error(`The copy of "${template}" is not recorded; the copy stage has to finish first.`);
    return copy.sheetId;
}

function rangeIn(target: Sheet, reference: TemplateReference, holder: string): Omit<NewCrossSheetReference, "name"> {
    const columnId = (title: string | undefined) => {
        if (title === undefined) return undefined;
        const column = target.columns.find((candidate) => candidate.title === title);
        if (!column) {
            throw new NeedsPersonError(`"${holder}" refers to column "${title}" of "${target.name}", which the copy does not have.`);
        }
        return column.id;
    };
    const rowId = (rowNumber: number | undefined) => {
        if (rowNumber === undefined) return undefined;
        const found = target.rows.find((candidate) => candidate.rowNumber === rowNumber);
        if (!found) throw new NeedsPersonError(`"${holder}" refers to row ${rowNumber} of "${target.name}", which the copy does not have.`);
        return found.id;
    };
    return {
        sourceSheetId: target.id,
        startColumnId: columnId(reference.startColumnTitle),
        endColumnId: columnId(reference.endColumnTitle),
        startRowId: rowId(reference.startRowNumber),
        endRowId: rowId(reference.endRowNumber),
    };
}

/**
 * The product's references in one copy, none sent twice. A copy read whole shows the references
 * an earlier run made. One not read (its formulas are all in its summary) is written under a
 * claim: a re-run that finds the claim reads the copy's references before it writes.
 */
async function createReferences(
    deps: ProvisioningDeps,
    context: StepContext,
    holder: string,
    wanted: readonly NewCrossSheetReference[],
    read: Sheet | undefined,
): Promise<void> {
    const { smartsheet } = context;
    const sheetId = copyOf(context.row, holder);
    let made = new Set((read?.crossSheetReferences ?? []).map((reference) => reference.name));
    const missing = () => wanted.filter((reference) => !made.has(reference.name));
    const createMissing = async () => {
        for (const reference of missing()) await createReference(deps, smartsheet, sheetId, reference);
    };
    if (read || missing().length === 0) return createMissing();
    await underClaim(deps, context, {
        key: `references:${holder}`,
        // Reference names are unique per sheet: one landing late makes nothing twice.
        leaves: "nothing",
        recorded: (latest) => (latest.referencesMadeIn.includes(holder) ? holder : undefined),
        look: async () => {
            const sheet = await smartsheet.getSheet(sheetId, { include: ["crossSheetReferences"] });
            made = new Set((sheet.crossSheetReferences ?? []).map((reference) => reference.name));
            return missing().length === 0 ? holder : undefined;
        },
        write: async () => {
            await createMissing();
            return holder;
        },
        record: (latest) => ({ ...latest, referencesMadeIn: [...new Set([...latest.referencesMadeIn, holder])] }),
    });
}

/** Reference names are unique per sheet, so re-sending a create is safe: "exists" means done. */
async function createReference(deps: ProvisioningDeps, smartsheet: SmartsheetPort, sheetId: number, reference: NewCrossSheetReference) {
    for (let attempt = 1; ; attempt++) {
        try {
            await smartsheet.createCrossSheetReference(sheetId, reference);
            return;
        } catch (error) {
            if (isSmartsheetError(error) && error.errorCode === ALREADY_EXISTS) return;
            if (!(error instanceof AmbiguousWriteError) || attempt >= 3) throw error;
            await deps.sleep(deps.timing.settleMs);
        }
    }
}

/** A copy's cell and column formulas, from the copy as read whole: those that do not read as rewritten already. */
async function rewriteSheetFormulas(
    smartsheet: SmartsheetPort,
    sheetId: number,
    holder: TemplateSheet,
    sheet: Sheet | undefined,
    rewrite: (formula: string) => string,
): Promise<void> {
    if (!sheet) return;
    if (holder.cellFormulas.length > 0) {
        const rows = new Map<number, RowUpdate>();
        for (const cell of holder.cellFormulas) {
            const row = sheet.rows.find((candidate) => candidate.rowNumber === cell.rowNumber);
            const column = sheet.columns.find((candidate) => candidate.title === cell.columnTitle);
            if (!row || !column) continue;
            const formula = rewrite(cell.formula);
            if (row.cells.find((candidate) => candidate.columnId === column.id)?.formula === formula) continue;
            const update = rows.get(row.id) ?? { id: row.id, cells: [] };
            update.cells.push({ columnId: column.id, formula });
            rows.set(row.id, update);
        }
        if (rows.size > 0) await smartsheet.updateRows(sheetId, [...rows.values()]);
    }
    for (const columnFormula of holder.columnFormulas) {
        const column = sheet.columns.find((candidate) => candidate.title === columnFormula.columnTitle);
        const formula = rewrite(columnFormula.formula);
        if (column && column.formula !== formula) await smartsheet.updateColumn(sheetId, column.id, { formula });
    }
}

/** The one request that rewrites a copy's summary formulas as read (those not rewritten already), with the product code in it. */
function summaryWriteOf(holder: TemplateSheet, summary: readonly SummaryField[], rewrite: (formula: string) => string, productCode: string): PlannedSummaryWrite {
    const codeField = summary.find((field) => field.title === PRODUCT_CODE_FIELD && !field.formula);
    const updates: SummaryFieldUpdate[] = [];
    for (const summaryFormula of holder.summaryFormulas) {
        const field = summary.find((candidate) => candidate.title === summaryFormula.title);
        const formula = rewrite(summaryFormula.formula);
        if (field && field.formula !== formula) updates.push({ id: field.id, formula });
    }
    // Nothing left to rewrite: an earlier run's request landed, and the code with it.
    if (updates.length === 0) return { updates, stampsCode: codeField !== undefined && String(codeField.objectValue ?? codeField.displayValue ?? "") === productCode };
    // One request per summary: the product code goes with the formulas instead of in a call of its own.
    if (codeField) updates.push({ id: codeField.id, objectValue: productCode });
    return { updates, stampsCode: codeField !== undefined };
}

/**
 * A copy's summary request — its last write — under a claim, and the copy recorded remapped. A
 * re-run that finds the claim reads the summary to see whether the request landed (one request:
 * all of it or none of it); one that finds no claim knows it was never sent, and sends it as
 * planned without reading the summary.
 */
async function writeSummary(deps: ProvisioningDeps, context: StepContext, holder: string, write: PlannedSummaryWrite): Promise<void> {
    const { smartsheet } = context;
    const sheetId = copyOf(context.row, holder);
    await underClaim<{ codeStamped: boolean }>(deps, context, {
        key: `summary:${holder}`,
        // It only sets formulas and a value: landing late, it sets the same ones again.
        leaves: "nothing",
        recorded: (latest) => (latest.remapped.includes(holder) ? { codeStamped: latest.codeStampedOn.includes(holder) } : undefined),
        look: async () => {
            const fields = await smartsheet.getSummaryFields(sheetId);
            const landed = write.updates.every((update) => !("formula" in update) || fields.find((field) => field.id === update.id)?.formula === update.formula);
            return landed ? { codeStamped: write.stampsCode } : undefined;
        },
        write: async () => {
            await smartsheet.updateSummaryFields(sheetId, write.updates);
            return { codeStamped: write.stampsCode };
        },
        record: (latest, { codeStamped }) => ({
            ...latest,
            remapped: [...new Set([...latest.remapped, holder])],
            codeStampedOn: codeStamped ? [...new Set([...latest.codeStampedOn, holder])] : latest.codeStampedOn,
        }),
    });
}
