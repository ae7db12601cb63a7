import type { PlannedSummaryWrite } from "../../jobs/JobRow";
import { AmbiguousWriteError } from "../../smartsheet/errors";
import type { NewCrossSheetReference, SmartsheetPort } from "../../smartsheet/SmartsheetPort";
import { ClaimKey } from "../claimKeys";
import type { ProvisioningDeps } from "../ProvisioningDeps";
import type { StepContext } from "../runStep";
import { underClaim } from "../underClaim";
import type { CopyRemap, ProductRemap } from "./plan";

/**
 * Carries out a remap: the summary field ids and (with `recordRequests`, when the row's
 * `RemapPlan` holds the blueprint's decision) the summary requests go on the row before anything
 * is sent; then each copy's references, formulas and summary, and the copy recorded remapped.
 */
export async function carryOutRemap(deps: ProvisioningDeps, context: StepContext, remap: ProductRemap, { recordRequests }: { recordRequests: boolean }): Promise<void> {
    const requests = recordRequests ? remap.summaryRequests : {};
    if (Object.keys(remap.summaryFieldIds).length > 0 || Object.keys(requests).length > 0) {
        await context.update((latest) => ({
            ...latest,
            summaryFieldIds: { ...latest.summaryFieldIds, ...remap.summaryFieldIds },
            remapPlan:
                latest.remapPlan && Object.keys(requests).length > 0
                    ? { ...latest.remapPlan, summaries: { ...latest.remapPlan.summaries, ...requests } }
                    : latest.remapPlan,
        }));
    }
    for (const copy of remap.copies) {
        await createReferences(deps, context, copy);
        if (copy.rows.length > 0) await context.smartsheet.updateRows(copy.sheetId, copy.rows);
        for (const column of copy.columns) await context.smartsheet.updateColumn(copy.sheetId, column.columnId, { formula: column.formula });
        if (copy.summary && copy.summary.updates.length > 0) {
            await writeSummary(deps, context, copy.template, copy.sheetId, copy.summary);
            continue;
        }
        const stampsCode = copy.summary?.stampsCode;
        await context.update((latest) => ({
            ...latest,
            remapped: [...new Set([...latest.remapped, copy.template])],
            codeStampedOn: stampsCode ? [...new Set([...latest.codeStampedOn, copy.template])] : latest.codeStampedOn,
        }));
    }
}

/**
 * The product's references in one copy, none sent twice. A copy read whole shows the references
 * an earlier run made. One not read (its formulas are all in its summary) is written under a
 * claim: a re-run that finds the claim reads the copy's references before it writes.
 */
async function createReferences(deps: ProvisioningDeps, context: StepContext, copy: CopyRemap): Promise<void> {
    const { smartsheet } = context;
    let made = copy.referencesOnCopy ?? new Set<string>();
    const missing = () => copy.references.filter((reference) => !made.has(reference.name));
    const createMissing = async () => {
        for (const reference of missing()) await createReference(deps, smartsheet, copy.sheetId, reference);
    };
    if (copy.referencesOnCopy || missing().length === 0) return createMissing();
    await underClaim(deps, context, {
        key: ClaimKey.references(copy.template),
        // Reference names are unique per sheet: one landing late makes nothing twice.
        leaves: "nothing",
        recorded: (latest) => (latest.referencesMadeIn.includes(copy.template) ? copy.template : undefined),
        look: async () => {
            const sheet = await smartsheet.getSheet(copy.sheetId, { include: ["crossSheetReferences"] });
            made = new Set((sheet.crossSheetReferences ?? []).map((reference) => reference.name));
            return missing().length === 0 ? copy.template : undefined;
        },
        write: async () => {
            await createMissing();
            return copy.template;
        },
        record: (latest) => ({ ...latest, referencesMadeIn: [...new Set([...latest.referencesMadeIn, copy.template])] }),
    });
}

/** Reference names are unique per sheet, so re-sending a create is safe: one there already (`created: false`) means done. */
async function createReference(deps: ProvisioningDeps, smartsheet: SmartsheetPort, sheetId: number, reference: NewCrossSheetReference) {
    for (let attempt = 1; ; attempt++) {
        try {
            await smartsheet.createCrossSheetReference(sheetId, reference);
            return;
        } catch (error) {
            if (!(error instanceof AmbiguousWriteError) || attempt >= 3) throw error;
            await deps.sleep(deps.timing.settleMs);
        }
    }
}

/**
 * A copy's summary request — its last write — under a claim, and the copy recorded remapped. A
 * re-run that finds the claim reads the summary to see whether the request landed (one request:
 * all of it or none of it); one that finds no claim knows it was never sent, and sends it as
 * planned without reading the summary.
 */
async function writeSummary(deps: ProvisioningDeps, context: StepContext, holder: string, sheetId: number, write: PlannedSummaryWrite): Promise<void> {
    const { smartsheet } = context;
    await underClaim<{ codeStamped: boolean }>(deps, context, {
        key: ClaimKey.summary(holder),
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
