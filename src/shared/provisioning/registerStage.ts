import { columnIdsByTitle } from "../smartsheet/columns";
import type { Sheet } from "../smartsheet/model";
import type { CellWrite } from "../smartsheet/SmartsheetPort";
import { ClaimKey } from "./claimKeys";
import type { StepInput, StepOutcome } from "./contracts";
import { NeedsPersonError } from "./errors";
import type { ProvisioningDeps } from "./ProvisioningDeps";
import { runStep } from "./runStep";
import { DOCUMENT_REGISTER } from "./templateRules";
import { underClaim } from "./underClaim";

export const FilingIndexColumns = {
    productCode: "Product Code",
    registerSheetId: "Register Sheet Id",
    registerLink: "Register Link",
    folderId: "Folder Id",
} as const;

/**
 * Exactly one Filing Index row for the product code, pointing at the product's Document
 * Register and folder: updated if present, added if not.
 */
export function registerDocumentRegister(deps: ProvisioningDeps, input: StepInput): Promise<StepOutcome> {
    return runStep(deps, input, "registerDocumentRegister", async (context) => {
        const { row, smartsheet } = context;
        if (row.registered) return;
        const register = row.copies[DOCUMENT_REGISTER];
        if (!register) throw new NeedsPersonError(`The template has no "${DOCUMENT_REGISTER}" sheet to register.`);
        if (!row.folderId) throw new Error("The product folder is not recorded yet; the copy stage has to finish first.");
        const indexSheetId = context.site.filingIndexSheetId;

        const index = await smartsheet.getSheet(indexSheetId);
        const column = columnsOf(index);
        const cells: CellWrite[] = [
            { columnId: column.productCode, value: row.productCode },
            { columnId: column.registerSheetId, value: String(register.sheetId) },
            { columnId: column.registerLink, value: register.permalink ?? "" },
            { columnId: column.folderId, value: String(row.folderId) },
        ];
        const rowsFor = (sheet: Sheet) =>
            sheet.rows.filter((candidate) => cellText(candidate.cells.find((cell) => cell.columnId === column.productCode)?.value) === row.productCode);

        const existing = rowsFor(index);
        if (existing.length > 1) {
            deps.log.warn(`Filing Index has ${existing.length} rows for ${row.productCode}; updating one, leaving the others to a person`);
        }
        const target = existing.find((candidate) => candidate.id === row.registerRowId) ?? existing[0];
        if (target) {
            const differs = cells.some(
                (cell) => "value" in cell && cellText(target.cells.find((current) => current.columnId === cell.columnId)?.value) !== cell.value,
            );
            if (differs) await smartsheet.updateRows(indexSheetId, [{ id: target.id, cells }]);
            await context.update((latest) => ({ ...latest, registered: true, registerRowId: target.id }));
            return;
        }

        await underClaim(deps, context, {
            key: ClaimKey.register,
            leaves: "filingRow",
            recorded: (latest) => (latest.registered ? latest.registerRowId ?? 0 : undefined),
            look: async () => rowsFor(await smartsheet.getSheet(indexSheetId))[0]?.id,
            write: async () => {
                const [added] = await smartsheet.addRows(indexSheetId, [{ toBottom: true, cells }]);
                if (!added) throw new Error("Smartsheet added no row to the Filing Index.");
                return added.id;
            },
            record: (latest, rowId) => ({ ...latest, registered: true, registerRowId: rowId || undefined }),
        });
    });
}

function columnsOf(index: Sheet): Record<keyof typeof FilingIndexColumns, number> {
    const { ids, missing } = columnIdsByTitle(index, FilingIndexColumns);
    if (missing.length > 0) throw new NeedsPersonError(`The Filing Index sheet has no "${missing[0]}" column; add it back.`);
    return ids as Record<keyof typeof FilingIndexColumns, number>;
}

export function cellText(value: string | number | boolean | undefined): string {
    return value === undefined ? "" : String(value).trim();
}
