import { formatJobKey, keyOf, LateWriteKind, type JobRow, type LateWriteRemoval } from "../jobs/JobRow";
import { JobLife, lineOf } from "../jobs/jobLife";
import { jobEvents } from "../telemetry/jobEvents";
import type { FolderChild } from "../smartsheet/model";
import { namesOf } from "./copyStage";
import { NeedsPersonError } from "./errors";
import type { StepInput, StepOutcome } from "./contracts";
import type { ProvisioningDeps } from "./ProvisioningDeps";
import { cellText, FilingIndexColumns } from "./registerStage";
import { runStep, type StepContext } from "./runStep";
import { referencesKeptAsTheyAre } from "./templateRules";
import { foldUnsettled } from "./underClaim";
import { columnIdsByTitle } from "../smartsheet/columns";

/**
 * The last step before `done`. A write that went unanswered can still be carried out by
 * Smartsheet until its late-write horizon has passed — after a step looked, found nothing and
 * wrote again — so a job that had one is audited once the horizon is over: one product folder
 * in the line folder, each of the seven names once in the product folder, one Filing Index row
 * for the code. What the row does not record is removed (never what it does), each removal
 * recorded on the row before it is made and logged as a transition. A job whose every write was
 * answered has nothing that can land late, and this step costs it no Smartsheet call. Every
 * job's copies are also checked for formulas reaching outside the product (see
 * `assertReferencesStayInTheProduct`), which parks the job instead of letting it be done.
 *
 * Until the horizon has passed this returns `waitUntil` and marks the job quiet until then: the
 * orchestration waits on a durable timer and runs the audit again.
 */
export function auditProduct(deps: ProvisioningDeps, input: StepInput): Promise<StepOutcome> {
    return runStep(deps, input, "auditProduct", async (context) => {
        const { claimTtlMs, lateWriteHorizonMs } = deps.timing;
        const now = deps.now().getTime();
        // Claims still on the row: a live write is waited for; any other may still land. A claim
        // stays on the row, no longer writing, so the step it belongs to still looks before it writes again.
        const row = await context.update((latest) => {
            let next = latest;
            for (const [key, claim] of Object.entries(latest.claims)) {
                if (!claim.writing || now - Date.parse(claim.claimedAt) < claimTtlMs) continue;
                next = { ...foldUnsettled(next, claim, lateWriteHorizonMs), claims: { ...next.claims, [key]: { ...claim, writing: false } } };
            }
            return next === latest ? undefined : next;
        });
        await assertReferencesStayInTheProduct(deps, context, row);
        const liveUntil = Object.values(row.claims)
            .filter((claim) => claim.writing)
            .map((claim) => Date.parse(claim.claimedAt) + claimTtlMs);
        if (row.lateWritesUntil === undefined && liveUntil.length === 0) return;

        const until = Math.max(row.lateWritesUntil ? Date.parse(row.lateWritesUntil) : now, ...liveUntil);
        if (until > now) {
            const waitUntil = new Date(until).toISOString();
            await context.update((latest) => ({ ...latest, quietUntil: waitUntil }));
            deps.log.info(`job ${formatJobKey(input.jobKey)}: an unanswered write may still land; auditing the product after ${waitUntil}`);
            return { waitUntil };
        }

        const removals = await findLateWrites(deps, context, row);
        const at = deps.now().toISOString();
        // Recorded before anything is deleted, so a crash in between still leaves the fact on the row.
        await context.update((latest) => {
            const known = new Set(latest.lateWritesRemoved.map((removed) => `${removed.kind}:${removed.id}`));
            const fresh = removals.filter((removal) => !known.has(`${removal.kind}:${removal.id}`)).map((removal) => ({ ...removal, removedAt: at }));
            return { ...latest, lateWritesRemoved: [...latest.lateWritesRemoved, ...fresh] };
        });
        for (const removal of removals) {
            await removeLateWrite(context, removal);
            deps.log.warn(
                lineOf(JobLife.work, input.jobKey, row.state, `final audit removed a late-landed ${removal.kind} ${removal.id} "${removal.name}"`),
            );
            jobEvents.transition(deps.telemetry, row, deps.sites, { from: row.state, to: row.state, reason: `final audit removed a late-landed ${removal.kind} ${removal.id}` });
        }
        await context.update((latest) => ({ ...latest, lateWritesUntil: undefined, lateWriteKinds: undefined, quietUntil: undefined }));
        deps.log.info(`job ${formatJobKey(input.jobKey)}: final audit done, ${removals.length} late writes removed`);
    });
}

/**
 * No copy may end `done` with a formula reaching outside the product: at a template sheet, at
 * another product's sheet, at a sheet nobody named. The job's blueprint describes the copies
 * unless the remap analysed the copies themselves (then it read and checked every one): it names
 * the copies whose formulas may, and only those are read, so what a person fixed in a copy after
 * a parking counts. A product whose template holds no such reference costs this no call.
 */
async function assertReferencesStayInTheProduct(deps: ProvisioningDeps, context: StepContext, row: JobRow): Promise<void> {
    // The orchestration audits only after the remap; until then there is no product to vouch for.
    const remapDone = row.templates.every((template) => row.copies[template] && row.remapped.includes(template));
    if (row.copiesAnalysed || !row.blueprintVersion || !remapDone) return;
    const blueprint = await deps.blueprints.get(row.blueprintVersion);
    if (!blueprint) {
        deps.log.warn(
            `job ${formatJobKey(keyOf(row))}: blueprint ${row.blueprintVersion} is missing from the table; the final audit cannot tell which copies ` +
                `may refer outside the product and checks none`,
        );
        return;
    }
    const shared = new Set(blueprint.outsideSheets.filter((sheet) => !sheet.ofAProduct).map((sheet) => sheet.sheetId));
    const suspects = row.templates.filter((template) => {
        const analysed = blueprint.sheets.find((sheet) => sheet.templateSheetId === row.copies[template]?.templateSheetId);
        if (!analysed) return true;
        // A reference into the template was given the product's own by the remap, and its formulas rewritten.
        return referencesKeptAsTheyAre(analysed).some((reference) => !shared.has(reference.sourceSheetId));
    });
    const own = new Set(Object.values(row.copies).map((copy) => copy.sheetId));
    const nameOf = new Map<number, string>([
        ...blueprint.sheets.map((sheet) => [sheet.templateSheetId, `the template sheet "${sheet.name}"`] as const),
        ...blueprint.outsideSheets.map((sheet) => [sheet.sheetId, `"${sheet.name}"${sheet.ofAProduct ? ", a sheet of another product" : ""}`] as const),
    ]);
    const found: string[] = [];
    for (const template of suspects) {
        const copy = row.copies[template]!;
        const sheet = await context.smartsheet.getSheet(copy.sheetId, { include: ["crossSheetReferences"] });
        const summary = sheet.hasSummaryFields === false ? [] : await context.smartsheet.getSummaryFields(copy.sheetId);
        const sources = new Map((sheet.crossSheetReferences ?? []).map((reference) => [reference.name, reference.sourceSheetId]));
        const formulas = [
            ...sheet.rows.flatMap((candidate) => candidate.cells.map((cell) => cell.formula)),
            ...sheet.columns.map((column) => column.formula),
            ...summary.map((field) => field.formula),
        ];
        const outside = new Set<string>();
        for (const formula of formulas) {
            for (const [, name] of formula?.matchAll(/\{([^{}]+)\}/g) ?? []) {
                const source = sources.get(name!);
                if (source !== undefined && !own.has(source) && !shared.has(source)) outside.add(`{${name}} → ${nameOf.get(source) ?? `sheet ${source}`}`);
            }
        }
        if (outside.size > 0) found.push(`"${copy.name}" has formulas using ${[...outside].join(", ")}`);
    }
    if (found.length === 0) return;
    throw new NeedsPersonError(
        `The final audit found formulas reaching outside the product: ${found.join("; ")}. Remove those formulas from the copies ` +
            `(and the references from the template sheets they were copied from), then unpark the job.`,
    );
}

type Removal = Omit<LateWriteRemoval, "removedAt">;

/** Gone already (a duplicate run of this audit, or a delete that was done although its answer got lost) counts as removed: the port says so. */
async function removeLateWrite(context: StepContext, removal: Removal): Promise<void> {
    if (removal.kind === "folder") await context.smartsheet.deleteFolder(removal.id);
    else if (removal.kind === "sheet") await context.smartsheet.deleteSheet(removal.id);
    else await context.smartsheet.deleteRows(context.site.filingIndexSheetId, [removal.id]);
}

/**
 * Everything of this product's making that its row does not record. Only what Smartsheet made
 * after this job first claimed a write can be its making (clock skew allowed for); a same-named
 * folder, sheet or Filing Index row from before — made by hand, say — is left to a person.
 */
async function findLateWrites(deps: ProvisioningDeps, context: StepContext, row: JobRow): Promise<Removal[]> {
    const { smartsheet } = context;
    const names = namesOf(row);
    const removals: Removal[] = [];
    // Smartsheet's times are whole seconds: one more second, or a copy made in the claim's second would look older.
    const since = row.firstClaimAt ? Date.parse(row.firstClaimAt) - deps.timing.clockSkewMs - 1000 : Infinity;
    const ours = (createdAt: string | undefined) => createdAt !== undefined && Date.parse(createdAt) >= since;
    // Only what the unanswered writes could have made is looked through (a row from before kinds were recorded: all).
    const mayHaveMade = (kind: LateWriteKind) => (row.lateWriteKinds ?? LateWriteKind.options).includes(kind);
    const unrecorded = (children: FolderChild[], name: string, keep: number | undefined) =>
        children.filter((child) => child.name === name && child.id !== keep && ours(child.createdAt));

    if (mayHaveMade("folder") && row.lineFolderId && row.folderId) {
        const folders = (await smartsheet.listFolderChildren(row.lineFolderId, ["folders"])).filter((child) => child.resourceType === "folder");
        for (const extra of unrecorded(folders, names.folder, row.folderId)) removals.push({ kind: "folder", id: extra.id, name: extra.name });
    }
    if (mayHaveMade("sheet") && row.folderId) {
        const sheets = (await smartsheet.listFolderChildren(row.folderId, ["sheets"])).filter((child) => child.resourceType === "sheet");
        for (const template of row.templates) {
            const name = names.sheets[template]!;
            for (const extra of unrecorded(sheets, name, row.copies[template]?.sheetId)) removals.push({ kind: "sheet", id: extra.id, name });
        }
    }
    if (mayHaveMade("filingRow") && row.registered && row.registerRowId) {
        const index = await smartsheet.getSheet(context.site.filingIndexSheetId);
        const codeColumn = columnIdsByTitle(index, { code: FilingIndexColumns.productCode }).ids.code;
        for (const candidate of index.rows) {
            const code = cellText(candidate.cells.find((cell) => cell.columnId === codeColumn)?.value);
            if (code === row.productCode && candidate.id !== row.registerRowId && ours(candidate.createdAt)) removals.push({ kind: "filingRow", id: candidate.id, name: code });
        }
    }
    return removals;
}
