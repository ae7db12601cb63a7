import type { JobRow } from "../jobs/JobRow";
import { failureKind, messageOf } from "../failures";
import type { SmartsheetPort } from "../smartsheet/SmartsheetPort";
import { addSheetRefusal, write } from "./applyChange";
import { executionOrder } from "./convergeSteps";
import { describeCalls, describePlan } from "./describePlan";
import { sumCalls, type ConvergencePlan, type SmartsheetCalls } from "./plan";
import { fromVersion, planProduct, planProducts, type ConvergeDeps, type ConvergePlanQuery } from "./planProducts";
import { ConvergeInputError } from "./ConvergeInputError";
import { COPY_INCLUDE } from "../provisioning/copyStage";

export interface TrialReport {
    site: string;
    productCode: string;
    jobKey: string;
    from: string;
    to: string;
    /** The plan as made on the scratch copies (the product's own, copied with their data). */
    plan: ConvergencePlan;
    /** Write calls made on the scratch copies, by operation, against the plan's prediction. */
    callsMade: SmartsheetCalls;
    /** What the audit found on the scratch copies after the plan was carried out (none: the trial passed). */
    problems: string[];
    scratchFolder: { id: number; name: string; removed: boolean; removeError?: string };
    passed: boolean;
    lines: string[];
}

/**
 * A convergence tried on a copy first, as Control Center requires of a global update: the
 * product asked for (or, without one, the product whose plan changes most) is copied with its
 * data into a scratch folder beside the products, the plan made on the copies is carried out
 * there, the copies audited against the target version (planned again: nothing left to do, only
 * the conflicts of the first plan left), and the scratch folder removed — also when the trial
 * fails. The product itself is not touched. Runs within the request (some 35 calls for a
 * product of seven sheets).
 */
export async function trialConvergence(deps: ConvergeDeps, query: ConvergePlanQuery): Promise<TrialReport> {
    const plans = await planProducts(deps, query);
    const candidates = plans.products.filter((product) => product.plan.changes.length > 0 || product.plan.conflicts.length > 0);
    if (candidates.length === 0) {
        throw new ConvergeInputError(
            query.product !== undefined
                ? `Product ${query.product} is up to date with ${plans.targets.map((target) => target.version).join(", ")}: nothing to try.`
                : `Every product is up to date with the template (${plans.targets.map((target) => `${target.site}: ${target.version}`).join(", ")}): nothing to try.`,
        );
    }
    const chosen = [...candidates].sort((a, b) => b.plan.changes.length - a.plan.changes.length || (a.productCode < b.productCode ? -1 : 1))[0]!;
    const added = chosen.plan.changes.find((change) => change.kind === "addSheet");
    if (added) throw new ConvergeInputError(addSheetRefusal(added.sheet));
    const site = deps.sites.named(chosen.site)!;
    const [pk, rk] = chosen.jobKey.split("-") as [string, string];
    const row = (await deps.jobs.require({ pk, rk })).row;
    const stored = await deps.blueprints.list();
    const target = stored.found.find((known) => known.version === chosen.to);
    const from = fromVersion(row, site, stored.found, chosen.to);
    if (!target?.shape || !from) throw new ConvergeInputError(`Template version ${chosen.to} or the product's own is not stored with its shape; plan again (converge --dry-run) first.`);

    const smartsheet = site.smartsheet.withOwnTally();
    const name = `Sheetwright trial ${chosen.to.slice(0, 8)} ${deps.now().getTime().toString(36)}`;
    const scratch = await smartsheet.createFolder(site.productsFolderId, name);
    const report: Omit<TrialReport, "lines" | "passed"> = {
        site: site.name,
        productCode: row.productCode,
        jobKey: chosen.jobKey,
        from: from.version,
        to: chosen.to,
        plan: chosen.plan,
        callsMade: { total: 0, byOperation: {} },
        problems: [],
        scratchFolder: { id: scratch.id, name, removed: false },
    };
    try {
        const trialRow = await copyInto(smartsheet, row, scratch.id);
        const { plan } = await planProduct(smartsheet, trialRow, from, target.shape);
        report.plan = plan;
        const writes = site.smartsheet.withOwnTally();
        const changes = plan.changes;
        const sourceSheetIds = new Map(Object.entries(trialRow.copies).map(([template, copy]) => [template, copy.sheetId]));
        for (const index of executionOrder(changes)) {
            const change = changes[index]!;
            const templateReferences = new Map((target.sheets.find((sheet) => sheet.name === change.sheet)?.references ?? []).map((reference) => [reference.name, reference] as const));
            await write(writes, { to: chosen.to, index, change, templateReferences, sourceSheetIds });
        }
        const spent = writes.calls();
        report.callsMade = sumCalls([{ total: spent.total, byOperation: Object.fromEntries(Object.entries(spent.byOperation).filter(([, count]) => count > 0)) }]);
        const after = await planProduct(smartsheet, trialRow, from, target.shape);
        report.problems.push(...after.plan.changes.map((change) => `${change.kind} of "${change.sheet}" is not in effect after the trial`));
        const before = new Set(plan.conflicts.map((conflict) => JSON.stringify(conflict)));
        report.problems.push(...after.plan.conflicts.filter((conflict) => !before.has(JSON.stringify(conflict))).map((conflict) => `a conflict the plan did not have: ${conflict.kind} on "${conflict.sheet}"`));
        if (JSON.stringify(report.callsMade.byOperation) !== JSON.stringify(plan.calls.byOperation)) {
            report.problems.push(`the writes made (${describeCalls(report.callsMade)}) are not the plan's (${describeCalls(plan.calls)})`);
        }
    } catch (error) {
        if (failureKind(error) === "bug") throw error;
        report.problems.push(`the trial stopped: ${messageOf(error)}`);
    } finally {
        try {
            await smartsheet.deleteFolder(scratch.id);
            report.scratchFolder.removed = true;
        } catch (error) {
            report.scratchFolder.removeError = messageOf(error);
        }
    }
    const passed = report.problems.length === 0;
    return { ...report, passed, lines: describeTrial({ ...report, passed }) };
}

/** The product's copies copied, data and all, into the scratch folder under the same names: the row a trial plans from. */
async function copyInto(smartsheet: SmartsheetPort, row: JobRow, folderId: number): Promise<JobRow> {
    const copies: JobRow["copies"] = {};
    for (const [template, copy] of Object.entries(row.copies)) {
        const made = await smartsheet.copySheet(copy.sheetId, { destinationFolderId: folderId, newName: copy.name, include: COPY_INCLUDE });
        copies[template] = { templateSheetId: copy.templateSheetId, sheetId: made.id, name: made.name, permalink: made.permalink };
    }
    return { ...row, folderId, copies };
}

function describeTrial(report: Omit<TrialReport, "lines">): string[] {
    return [
        `trial of product ${report.productCode} (site ${report.site}, job ${report.jobKey}) from version ${report.from} to ${report.to}, on copies in scratch folder "${report.scratchFolder.name}"`,
        ...describePlan(report.plan).map((line) => `  ${line}`),
        `  made: ${describeCalls(report.callsMade)}`,
        ...report.problems.map((problem) => `  problem: ${problem}`),
        report.scratchFolder.removed
            ? `  scratch folder removed`
            : `  scratch folder ${report.scratchFolder.id} NOT removed (${report.scratchFolder.removeError ?? "unknown"}): delete it by hand`,
        report.passed ? "trial passed: the plan does what it says on a copy of the product" : `trial FAILED: ${report.problems.length} problem${report.problems.length === 1 ? "" : "s"}`,
    ];
}
