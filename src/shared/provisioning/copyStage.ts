import type { JobRow, SheetCopy } from "../jobs/JobRow";
import type { Blueprint } from "./Blueprint";
import { composeProductNames } from "../naming/productNames";
import type { FolderChild } from "../smartsheet/model";
import type { CopyInclude } from "../smartsheet/SmartsheetPort";
import { ClaimKey } from "./claimKeys";
import type { CopyInput, StepInput, StepOutcome } from "./contracts";
import { NeedsPersonError } from "./errors";
import type { ProvisioningDeps } from "./ProvisioningDeps";
import { runStep } from "./runStep";
import { templateSheetNamed } from "./templateRules";
import { claimIsLive, foldUnsettled, underClaim } from "./underClaim";

/** Everything of a template sheet a product needs: its data and its cross-sheet references. */
/** What a copy of a template sheet takes with it (provisioning, and convergence adding a sheet). */
export const COPY_INCLUDE: CopyInclude[] = ["data", "cellLinks", "filters", "forms", "rules"];

export function namesOf(row: JobRow) {
    return composeProductNames(row.productCode, row.productName, row.templates);
}

/** The oldest of several same-named children: the one a first run would have made. */
export function oldest(children: FolderChild[]): FolderChild | undefined {
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
                key: ClaimKey.lineFolder,
                leaves: "folder",
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
            key: ClaimKey.folder,
            leaves: "folder",
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
                folderAdopted: !row.claims[ClaimKey.folder],
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
        const source = templateSheetNamed(blueprint.sheets, template);
        if (!source) throw new NeedsPersonError(`The template has no sheet named "${template}" any more.`);
        const names = namesOf(row).sheets;
        const name = names[template];
        if (!name) throw new NeedsPersonError(`"${template}" is not one of this job's template sheets.`);

        const copyNamed = (sheets: FolderChild[], of: string): SheetCopy | undefined => {
            const templateSheetId = templateSheetNamed(blueprint.sheets, of)?.templateSheetId;
            const found = oldest(sheets.filter((child) => child.name === names[of]));
            return found && templateSheetId ? { templateSheetId, sheetId: found.id, name: found.name, permalink: found.permalink } : undefined;
        };
        // What a look found: recorded for every template at once, so the other copies' re-runs need not list the folder again.
        let looked: FolderChild[] = [];
        /**
         * When a look's own listing may begin: once this copy's claim has run out (`notBefore`), and
         * once the claims of the product's other unrecorded copies that run out within a poll after it
         * have too (waiting a poll at most), so that one listing settles all of those copies' looks.
         */
        const listingFrom = async (notBefore: number): Promise<number> => {
            const latest = await context.update(() => undefined);
            const runOut = latest.templates
                .filter((other) => other !== template && !latest.copies[other])
                .map((other) => latest.claims[ClaimKey.copy(other)])
                .map((claim) => (claim ? Date.parse(claim.claimedAt) + deps.timing.claimTtlMs : -Infinity))
                .filter((end) => end > notBefore && end <= notBefore + deps.timing.claimPollMs);
            const from = Math.max(notBefore, ...runOut);
            const wait = from - deps.now().getTime();
            if (wait > 0) await deps.sleep(wait);
            return from;
        };
        await underClaim<SheetCopy>(deps, context, {
            key: ClaimKey.copy(template),
            leaves: "sheet",
            recorded: (latest) => latest.copies[template],
            alwaysLook: row.folderAdopted,
            look: async (notBefore, claimedAt) => {
                // The copies' re-runs look one after another as their claims run out. A listing another of them began after
                // this copy's claim shows the copy if it had landed by then (what a listing shows is there; only what it does
                // not show may have landed since): found there, it takes no listing of its own.
                const earlier = claimedAt === undefined ? undefined : deps.listings.since(folderId, "sheets", claimedAt);
                if (earlier) {
                    const sheets = (await earlier.catch(() => [])).filter((child) => child.resourceType === "sheet");
                    const found = copyNamed(sheets, template);
                    if (found) {
                        looked = sheets;
                        return found;
                    }
                }
                const from = await listingFrom(notBefore);
                const children = await deps.listings.list(folderId, "sheets", from, () => smartsheet.listFolderChildren(folderId, ["sheets"]));
                looked = children.filter((child) => child.resourceType === "sheet");
                return copyNamed(looked, template);
            },
            write: async () => {
                const copy = await smartsheet.copySheet(source.templateSheetId, {
                    destinationFolderId: folderId,
                    newName: name,
                    include: COPY_INCLUDE,
                });
                return { templateSheetId: source.templateSheetId, sheetId: copy.id, name: copy.name, permalink: copy.permalink };
            },
            record: (latest, copy) => adoptFound({ ...latest, copies: { ...latest.copies, [template]: copy } }, looked, copyNamed),
        });
    });

    /**
     * The other templates' copies a look found, recorded as this job's unless another run is
     * writing one now. A claim of a run that is gone is folded into the late-write horizon, as
     * that copy's own re-run would have done.
     */
    function adoptFound(latest: JobRow, sheets: FolderChild[], copyNamed: (sheets: FolderChild[], of: string) => SheetCopy | undefined): JobRow {
        let next = latest;
        for (const other of latest.templates) {
            const key = ClaimKey.copy(other);
            const claim = next.claims[key];
            if (next.copies[other] || claimIsLive(deps, claim)) continue;
            const found = copyNamed(sheets, other);
            if (!found) continue;
            next = { ...next, copies: { ...next.copies, [other]: found } };
            if (claim) {
                const { [key]: _, ...claims } = next.claims;
                next = claim.writing ? { ...foldUnsettled(next, claim, deps.timing.lateWriteHorizonMs), claims } : { ...next, claims };
            }
        }
        return next;
    }
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
            const source = templateSheetNamed(blueprint.sheets, template);
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
