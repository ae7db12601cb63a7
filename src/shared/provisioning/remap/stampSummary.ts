import type { JobRow } from "../../jobs/JobRow";
import type { SummaryField } from "../../smartsheet/model";
import { ClaimKey } from "../claimKeys";
import type { StepInput, StepOutcome } from "../contracts";
import type { ProvisioningDeps } from "../ProvisioningDeps";
import { runStep, type StepContext } from "../runStep";
import { PRODUCT_CODE_FIELD, takesProductCode } from "../templateRules";
import { underClaim } from "../underClaim";

/** The `Product Code` summary field of every copy that has one gets the product's code (unless the remap stamped it with its formulas). */
export function stampSummary(deps: ProvisioningDeps, input: StepInput): Promise<StepOutcome> {
    return runStep(deps, input, "stampSummary", async (context: StepContext) => {
        const { row, smartsheet } = context;
        if (row.summaryStamped) return;
        const blueprint = await context.blueprint(row);
        // After a template change mid-job the blueprint is newer than the job's list of sheets: match by template sheet id.
        const withField = new Set(blueprint.sheets.filter(takesProductCode).map((sheet) => sheet.templateSheetId));
        for (const template of row.templates) {
            const copy = row.copies[template];
            if (!copy) throw new Error(`The copy of "${template}" is not recorded; the copy stage has to finish first.`);
            if (row.codeStampedOn.includes(template)) continue;
            if (!withField.has(copy.templateSheetId) && !row.summaryFieldIds[template]?.[PRODUCT_CODE_FIELD]) continue;
            const codeField = (fields: SummaryField[]) => fields.find((field) => field.title === PRODUCT_CODE_FIELD);
            await underClaim(deps, context, {
                key: ClaimKey.stamp(template),
                // Titles are unique in a summary: a field added twice is answered as there already, never doubled.
                leaves: "nothing",
                recorded: (latest) => (latest.codeStampedOn.includes(template) ? template : undefined),
                // An earlier run's stamp may have landed: the field showing the code already is as good as stamping it.
                look: async () => {
                    const field = codeField(await smartsheet.getSummaryFields(copy.sheetId));
                    return field && String(field.objectValue ?? field.displayValue ?? "") === row.productCode ? template : undefined;
                },
                write: async () => {
                    const fieldId = row.summaryFieldIds[template]?.[PRODUCT_CODE_FIELD] ?? codeField(await smartsheet.getSummaryFields(copy.sheetId))?.id;
                    if (fieldId) {
                        await smartsheet.updateSummaryFields(copy.sheetId, [{ id: fieldId, objectValue: row.productCode }]);
                    } else {
                        await smartsheet.addSummaryFields(copy.sheetId, [{ title: PRODUCT_CODE_FIELD, type: "TEXT_NUMBER", objectValue: row.productCode }]);
                    }
                    return template;
                },
                record: (latest) => ({ ...latest, codeStampedOn: [...new Set([...latest.codeStampedOn, template])] }),
            });
        }
        await context.update((latest: JobRow) => ({ ...latest, summaryStamped: true }));
    });
}
