import { formatJobKey, type RemapPlan } from "../../jobs/JobRow";
import type { FolderChild, Sheet, SummaryField } from "../../smartsheet/model";
import { blueprintVersion, readOutsideSheets, readSheetForAnalysis, type SheetRead } from "../Blueprint";
import { analyseTemplate, listTemplateSheets } from "../blueprintSource";
import type { StepInput, StepOutcome } from "../contracts";
import { NeedsPersonError } from "../errors";
import type { ReferenceProblem } from "../productReferences";
import type { ProvisioningDeps } from "../ProvisioningDeps";
import { runStep, type StepContext } from "../runStep";
import { copyOf, planRemap } from "./plan";
import { blueprintReads, copiesToRemap, problemsOfCopiesNotRead, referenceTargets, unnamedSheetIds } from "./sources";
import { carryOutRemap } from "./writes";

/**
 * Copies keep their cross-sheet references pointing at the template's sheets. For every copy
 * whose formulas use such a reference, create the same reference (deterministic name) to the
 * product's own copy of that sheet and rewrite its cell, column and summary-field formulas to
 * use it (see `planRemap`). Each sheet it needs is read once; a reference that already exists
 * is adopted.
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
 * A summary the plan has a request for already is not read again (see `carryOutRemap`). The
 * template as listed adds nothing to the blueprint's sheets at the same version, so a re-run
 * that trusts the plan has no listing to give (`listing` empty).
 */
async function remapFromBlueprint(deps: ProvisioningDeps, context: StepContext, plan: RemapPlan, listing: readonly FolderChild[]): Promise<ReferenceProblem[]> {
    const { row, smartsheet } = context;
    const blueprint = await context.blueprint(row);
    const targets = referenceTargets(row, listing, blueprint.sheets, blueprint.outsideSheets);
    const beyondTheProduct = problemsOfCopiesNotRead(row, blueprint, targets);
    if (beyondTheProduct.length > 0) throw new NeedsPersonError(beyondTheProduct.map((problem) => problem.message).join(" "));

    const toRead = blueprintReads(row, blueprint, plan);
    const sheets = new Map<string, Sheet>();
    for (const template of toRead.sheets) sheets.set(template, await smartsheet.getSheet(copyOf(row, template), { include: ["crossSheetReferences"] }));
    const summaries = new Map<string, SummaryField[]>();
    for (const template of toRead.summaries) summaries.set(template, await smartsheet.getSummaryFields(copyOf(row, template)));

    const planned = planRemap(row, {
        holders: toRead.holders,
        sheets,
        summaries,
        plannedSummaries: new Map(Object.entries(plan.summaries)),
        blueprintReferences: new Map(blueprint.sheets.map((sheet) => [sheet.name, sheet.references])),
        targets,
    });
    if ("problems" in planned) return planned.problems;
    await carryOutRemap(deps, context, planned.remap, { recordRequests: true });
    await context.update((latest) => ({ ...latest, remapped: [...latest.templates] }));
    return [];
}

/**
 * A template sheet changed since the job's analysis: what the copies hold is the truth. Every
 * copy is read and analysed like a template sheet (see `copiesToRemap`).
 */
async function remapFromCopies(deps: ProvisioningDeps, context: StepContext, listing: readonly FolderChild[]): Promise<void> {
    const { row, smartsheet } = context;
    const template = await analyseTemplate(deps, smartsheet, context.site.templateFolderId, listing);
    const copies = new Map<string, SheetRead>();
    for (const name of row.templates) copies.set(name, await readSheetForAnalysis(smartsheet, copyOf(row, name)));
    const todo = copiesToRemap(row, template.reads, copies);

    const unnamed = unnamedSheetIds(copies, referenceTargets(row, listing, template.blueprint.sheets, template.blueprint.outsideSheets));
    const outside = [
        ...template.blueprint.outsideSheets,
        ...(await readOutsideSheets(smartsheet, unnamed, [...listing.map((sheet) => sheet.name), ...row.templates])),
    ];
    const planned = planRemap(row, {
        holders: todo,
        sheets: new Map([...copies].map(([name, read]) => [name, read.sheet])),
        summaries: new Map([...copies].map(([name, read]) => [name, read.summary])),
        plannedSummaries: new Map(),
        blueprintReferences: new Map(),
        targets: referenceTargets(row, listing, template.blueprint.sheets, outside),
    });
    if ("problems" in planned) throw new NeedsPersonError(planned.problems.map((problem) => problem.message).join(" "));
    await carryOutRemap(deps, context, planned.remap, { recordRequests: false });
    // From now on the job provisions from the template as it is (stampSummary finds fields added since the sweep).
    await context.update((latest) => ({
        ...latest,
        remapped: [...latest.templates],
        copiesAnalysed: true,
        blueprintVersion: template.blueprint.version,
        blueprintSettled: template.blueprint.settled,
    }));
}
