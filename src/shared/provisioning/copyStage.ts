import type { JobRow, SheetCopy } from "../jobs/JobRow";
import type { Blueprint } from "./Blueprint";
import { composeProductNames } from "../naming/productNames";
import type { FolderChild } from "../smartsheet/model";
import type { CopyInclude } from "../smartsheet/SmartsheetPort";
import type { CopyInput, StepInput, StepOutcome } from "./contracts";
import { NeedsPersonError } from "./errors";
import type { ProvisioningDeps } from "./ProvisioningDeps";
import { runStep } from "./runStep";
import { underClaim } from "./underClaim";

/** Everything of a template sheet a product needs: its data and its cross-sheet references. */
const COPY_INCLUDE: CopyInclude[] = ["data", "cellLinks", "filters", "forms", "rules"];

export function namesOf(row: JobRow) {
    return composeProductNames(row.productCode, row.productName, row.templates);
}

/** The oldest of several same-named children: the one a first run would have made. */
function oldest(children: FolderChild[]): FolderChild | undefined {
    return [...children].sort((a, b) => (a.createdAt ?? "").localeCompare(b.createdAt ?? "") || a.id - b.id)[0];
}

/** The product-line folder (by name under the products folder) and the product's folder in it. */
export function ensureProductFolder(deps: ProvisioningDeps, input: StepInput): Promise<StepOutcome> {
    return runStep(deps, input, "ensureProductFolder", async (context) => {
        if (context.row.folderId) return;
        const { smartsheet } = context;
        let lineFolderId = context.row.lineFolderId;
        if (!lineFolderId) {
            const line = context.row.productLine;
            const productsFolderId = context.site.productsFolderId;
            const folder = await underClaim(deps, context, {
                key: "lineFolder",
                recorded: (row) => row.lineFolderId,
                alwaysLook: true,
                look: async () =>
                    oldest((await smartsheet.listFolderChildren(productsFolderId, ["folders"])).filter((child) => child.name === line))?.id,
                write: async () => (await smartsheet.createFolder(productsFolderId, line)).id,
                record: (row, id) => ({ ...row, lineFolderId: id }),
            });
            lineFolderId = folder;
        }

        const folderName = namesOf(context.row).folder;
        const lineId = lineFolderId;
        await underClaim<{ id: number; permalink?: string }>(deps, context, {
            key: "folder",
            recorded: (row) => (row.folderId ? { id: row.folderId, permalink: row.folderLink } : undefined),
            // A folder of that name may be there from before this job (made by hand, say): adopt it.
            alwaysLook: true,
            look: async () => {
                const found = oldest(
                    (await smartsheet.listFolderChildren(lineId, ["folders"])).filter(
                        (child) => child.resourceType === "folder" && child.name === folderName,
                    ),
                );
                return found ? { id: found.id, permalink: found.permalink } : undefined;
            },
            write: () => smartsheet.createFolder(lineId, folderName),
            record: (row, folder) => ({
                ...row,
                folderId: folder.id,
                folderLink: folder.permalink,
                // Found without a claim of ours: someone else made it, and it may hold sheets already.
                folderAdopted: !row.claims["folder"],
            }),
        });
    });
}

/** One template sheet copied into the product folder under its final name, exactly once. */
export function copyTemplateSheet(deps: ProvisioningDeps, input: CopyInput): Promise<StepOutcome> {
    return runStep(deps, input, "copyTemplateSheet", async (context) => {
        const { row, smartsheet } = context;
        const template = input.template;
        if (row.copies[template]) return;
        const folderId = row.folderId;
        if (!folderId) throw new Error(`The product folder is not recorded yet; ensureProductFolder runs first.`);
        const blueprint = await context.blueprint(row);
        const source = blueprint.sheets.find((sheet) => sheet.name === template);
        if (!source) throw new NeedsPersonError(`The template has no sheet named "${template}" any more.`);
        const name = namesOf(row).sheets[template];
        if (!name) throw new NeedsPersonError(`"${template}" is not one of this job's template sheets.`);

        await underClaim<SheetCopy>(deps, context, {
            key: `copy:${template}`,
            recorded: (latest) => latest.copies[template],
            alwaysLook: row.folderAdopted,
            look: async () => {
                const found = oldest(
                    (await smartsheet.listFolderChildren(folderId, ["sheets"])).filter(
                        (child) => child.resourceType === "sheet" && child.name === name,
                    ),
                );
                return found ? { templateSheetId: source.templateSheetId, sheetId: found.id, name, permalink: found.permalink } : undefined;
            },
            write: async () => {
                const copy = await smartsheet.copySheet(source.templateSheetId, {
                    destinationFolderId: folderId,
                    newName: name,
                    include: COPY_INCLUDE,
                });
                return { templateSheetId: source.templateSheetId, sheetId: copy.id, name: copy.name, permalink: copy.permalink };
            },
            record: (latest, copy) => ({ ...latest, copies: { ...latest.copies, [template]: copy } }),
        });
    });
}

/**
 * The folder holds exactly one sheet under each expected name. A duplicate that slipped
 * through (an ambiguous copy that did happen) is deleted, keeping the copy recorded on the row
 * (else the oldest); a recorded copy that is gone is reported missing, to be copied again.
 */
export function verifyCopies(deps: ProvisioningDeps, input: StepInput): Promise<StepOutcome> {
    return runStep(deps, input, "verifyCopies", async (context) => {
        const { row, smartsheet } = context;
        if (!row.folderId) throw new Error("The product folder is not recorded yet; ensureProductFolder runs first.");
        const names = namesOf(row);
        const children = (await smartsheet.listFolderChildren(row.folderId, ["sheets"])).filter((child) => child.resourceType === "sheet");

        let blueprint: Blueprint | undefined;
        const templateSheetIdOf = async (template: string) => {
            const recorded = row.copies[template]?.templateSheetId;
            if (recorded) return recorded;
            blueprint ??= await context.blueprint(row);
            const source = blueprint.sheets.find((sheet) => sheet.name === template);
            if (!source) throw new NeedsPersonError(`The template has no sheet named "${template}" any more.`);
            return source.templateSheetId;
        };

        const copies: Record<string, SheetCopy> = {};
        const extras: FolderChild[] = [];
        const missing: string[] = [];
        for (const template of row.templates) {
            const name = names.sheets[template]!;
            const matches = children.filter((child) => child.name === name);
            const recorded = row.copies[template];
            const keep = matches.find((child) => child.id === recorded?.sheetId) ?? oldest(matches);
            if (!keep) {
                missing.push(template);
                continue;
            }
            copies[template] = {
                templateSheetId: await templateSheetIdOf(template),
                sheetId: keep.id,
                name,
                permalink: keep.permalink ?? recorded?.permalink,
            };
            extras.push(...matches.filter((child) => child.id !== keep.id));
        }

        // Recorded before deleting, so a crash in between still leaves the fact on the row.
        const now = deps.now().toISOString();
        await context.update((latest) => {
            const known = new Set(latest.duplicatesRemoved.map((removed) => removed.sheetId));
            const removed = extras.filter((extra) => !known.has(extra.id)).map((extra) => ({ sheetId: extra.id, name: extra.name, removedAt: now }));
            return { ...latest, copies, duplicatesRemoved: [...latest.duplicatesRemoved, ...removed] };
        });
        for (const extra of extras) {
            await smartsheet.deleteSheet(extra.id);
            deps.log.warn(`job ${row.intakeSheetId}-${row.intakeRowId}: deleted duplicate sheet ${extra.id} "${extra.name}"`);
        }
        return { missing };
    });
}
