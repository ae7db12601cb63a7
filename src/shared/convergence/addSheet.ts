import type { SheetCopy } from "../jobs/JobRow";
import type { Blueprint } from "../provisioning/Blueprint";
import { ClaimKey } from "../provisioning/claimKeys";
import { COPY_INCLUDE, oldest } from "../provisioning/copyStage";
import { NeedsPersonError } from "../provisioning/errors";
import type { ProvisioningDeps } from "../provisioning/ProvisioningDeps";
import { copyOf, planRemap } from "../provisioning/remap/plan";
import { referenceTargets } from "../provisioning/remap/sources";
import { carryOutRemap } from "../provisioning/remap/writes";
import type { StepContext } from "../provisioning/runStep";
import { isRemapped, PRODUCT_CODE_FIELD } from "../provisioning/templateRules";
import { underClaim } from "../provisioning/underClaim";
import type { Sheet, SummaryField } from "../smartsheet/model";
import type { ConvergenceChange } from "./plan";

type AddSheet = Extract<ConvergenceChange, { kind: "addSheet" }>;

/**
 * A sheet the template gained, added to the product as provisioning adds one: copied into the
 * product's folder under its composed name, once (claimed like provisioning's copies, adopted by
 * name, a copy landing late removed by the convergence's audit); its references remapped into the
 * product and its formulas rewritten with provisioning's own remap plan and writes; the product
 * code stamped. The row records the copy as one of the product's (`copies`, `templates`).
 */
export async function addSheetToProduct(deps: ProvisioningDeps, context: StepContext, change: AddSheet, target: Blueprint): Promise<void> {
    if (change.registers) {
        throw new NeedsPersonError(
            `The template's new sheet "${change.sheet}" is the Document Register, which the product's Filing Index row points at: ` +
                `a product has one already; register the new one by hand, or leave the sheet out of the template.`,
        );
    }
    const holder = target.sheets.find((sheet) => sheet.name === change.sheet);
    if (!holder) throw new NeedsPersonError(`Template version ${target.version} has no sheet "${change.sheet}" any more; plan the convergence again.`);
    const { smartsheet } = context;
    const folderId = context.row.folderId;
    if (folderId === undefined) throw new NeedsPersonError(`The product's row records no folder to add "${change.sheet}" to.`);

    await underClaim<SheetCopy>(deps, context, {
        key: ClaimKey.copy(change.sheet),
        leaves: "sheet",
        recorded: (latest) => latest.copies[change.sheet],
        look: async () => {
            const found = oldest((await smartsheet.listFolderChildren(folderId, ["sheets"])).filter((child) => child.resourceType === "sheet" && child.name === change.name));
            return found ? { templateSheetId: change.templateSheetId, sheetId: found.id, name: found.name, permalink: found.permalink } : undefined;
        },
        write: async () => {
            const copy = await smartsheet.copySheet(change.templateSheetId, { destinationFolderId: folderId, newName: change.name, include: COPY_INCLUDE });
            return { templateSheetId: change.templateSheetId, sheetId: copy.id, name: copy.name, permalink: copy.permalink };
        },
        record: (latest, copy) => ({
            ...latest,
            copies: { ...latest.copies, [change.sheet]: copy },
            templates: latest.templates.includes(change.sheet) ? latest.templates : [...latest.templates, change.sheet],
        }),
    });

    let row = await context.update(() => undefined);
    if (!row.remapped.includes(change.sheet)) {
        const sources = new Set(holder.references.filter(isRemapped).map((reference) => reference.sourceTemplate));
        const sheets = new Map<string, Sheet>();
        for (const template of [change.sheet, ...sources]) {
            if (!row.copies[template]) throw new NeedsPersonError(`The product has no copy of "${template}", which the new sheet "${change.sheet}" reads.`);
            sheets.set(template, await smartsheet.getSheet(copyOf(row, template), { include: ["crossSheetReferences"] }));
        }
        const summaries = new Map<string, SummaryField[]>([[change.sheet, await smartsheet.getSummaryFields(copyOf(row, change.sheet))]]);
        const planned = planRemap(row, {
            holders: [holder],
            sheets,
            summaries,
            plannedSummaries: new Map(),
            blueprintReferences: new Map(target.sheets.map((sheet) => [sheet.name, sheet.references])),
            targets: referenceTargets(row, [], target.sheets, target.outsideSheets),
        });
        if ("problems" in planned) throw new NeedsPersonError(planned.problems.map((problem) => problem.message).join(" "));
        await carryOutRemap(deps, context, planned.remap, { recordRequests: false });
        row = await context.update(() => undefined);
    }

    if (change.stampsCode && !row.codeStampedOn.includes(change.sheet)) {
        const field = (await smartsheet.getSummaryFields(copyOf(row, change.sheet))).find((candidate) => candidate.title === PRODUCT_CODE_FIELD && !candidate.formula);
        if (field && String(field.objectValue ?? "") !== row.productCode) await smartsheet.updateSummaryFields(copyOf(row, change.sheet), [{ id: field.id, objectValue: row.productCode }]);
        await context.update((latest) => ({ ...latest, codeStampedOn: [...new Set([...latest.codeStampedOn, change.sheet])] }));
    }
}
