import { z } from "zod";
import { formatJobKey, type ConvergenceRun, type JobKey, type JobRow } from "../jobs/JobRow";
import { JobConcurrencyError, JobStateConflictError } from "../jobs/JobStore";
import { JobLife } from "../jobs/jobLife";
import { NeedsPersonError, SupersededError } from "../provisioning/errors";
import type { ProvisioningDeps } from "../provisioning/ProvisioningDeps";
import { runStep, type StepContext } from "../provisioning/runStep";
import { messageOf } from "../failures";
import { applyChange } from "./applyChange";
import { addSheetToProduct } from "./addSheet";
import { describeConflict } from "./describePlan";
import { ConvergenceChange, ConvergenceConflict, ConvergencePlan } from "./plan";
import { convergeInstanceId, type ClaimInput, type ClaimOutcome, type ConvergeOutcome, type ConvergeStepInput } from "./contracts";
import { fromVersion, planProduct } from "./planProducts";
import { referencesIn } from "../provisioning/Blueprint";

/** A Table property holds 32K characters (64 KiB of UTF-16); the run, its frozen plan with it, keeps within this. */
const MAX_RUN_CHARACTERS = 30_000;

/** The run on the row, owned by this instance. */
function runOf(row: JobRow): ConvergenceRun {
    if (!row.convergence) throw new SupersededError(`Job ${row.intakeSheetId}-${row.intakeRowId} has no convergence.`);
    return row.convergence;
}

/** The run's frozen plan, parsed (the row holds it as JSON the job module does not know). */
export function planOf(run: ConvergenceRun): ConvergencePlan | undefined {
    return run.plan === undefined ? undefined : ConvergencePlan.parse(run.plan);
}

/** The run's changes in index order: the plan's, then those a `take-template` decision added. */
export function changesOf(run: ConvergenceRun): ConvergenceChange[] {
    return [...(planOf(run)?.changes ?? []), ...z.array(ConvergenceChange).parse(run.resolved)];
}

/** Conflicts a person has not decided yet. */
export function undecidedOf(run: ConvergenceRun): ConvergenceConflict[] {
    return run.decision ? [] : (planOf(run)?.conflicts ?? []);
}

/**
 * The order a sheet's changes are carried out in: its new name and new references first (a new
 * formula may use them), then the updates and deletions of its columns and fields (a rename
 * frees a title a new column may take; an added column's index counts the deletions), then its
 * additions in position order. Sheets in the plan's order.
 */
export function executionOrder(changes: readonly ConvergenceChange[]): number[] {
    const rank: Record<ConvergenceChange["kind"], number> = {
        addSheet: 0,
        renameSheet: 1,
        addReferences: 2,
        updateColumn: 3,
        deleteColumn: 3,
        updateSummaryField: 4,
        deleteSummaryField: 4,
        addColumn: 5,
        addSummaryField: 6,
    };
    const sheets = [...new Set(changes.map((change) => change.sheet))];
    const position = (change: ConvergenceChange) => ("position" in change ? change.position : 0);
    return changes
        .map((change, index) => ({ change, index }))
        .sort(
            (a, b) =>
                sheets.indexOf(a.change.sheet) - sheets.indexOf(b.change.sheet) ||
                rank[a.change.kind] - rank[b.change.kind] ||
                position(a.change) - position(b.change) ||
                a.index - b.index,
        )
        .map(({ index }) => index);
}

/** Conflict kinds a `take-template` decision can resolve: the template's attributes written over the product's. */
export const TAKEABLE = new Set<ConvergenceConflict["kind"]>(["edited", "overwritesData"]);

/**
 * A step of one product's convergence: the job row must be done and its convergence owned by
 * this instance (`convergence.instanceId`); otherwise the step is superseded. Progress is on the
 * row before the step ends, as provisioning's steps keep it.
 */
async function convergeStep(
    deps: ProvisioningDeps,
    input: ConvergeStepInput,
    name: string,
    body: (context: StepContext, run: ConvergenceRun) => Promise<Omit<Extract<ConvergeOutcome, { outcome: "done" }>, "outcome">>,
): Promise<ConvergeOutcome> {
    let answer: Omit<Extract<ConvergeOutcome, { outcome: "done" }>, "outcome"> = { pending: 0, undecided: 0 };
    const outcome = await runStep(
        deps,
        input,
        name,
        async (context) => {
            answer = await body(context, runOf(context.row));
        },
        { from: JobLife.whileDone.from, owner: (row) => row.convergence?.instanceId, background: true },
    );
    if (outcome.outcome === "done") return { outcome: "done", ...answer };
    return outcome.outcome === "superseded" ? { outcome: "superseded", reason: outcome.reason } : { outcome: "permanent", reason: outcome.reason };
}

const touched = (deps: ProvisioningDeps, run: ConvergenceRun, patch: Partial<ConvergenceRun>): ConvergenceRun => ({ ...run, ...patch, lastProgressAt: deps.now().toISOString() });

/**
 * The fleet's step: every done product of the site (or the one asked for) not on `to` yet, its
 * convergence claimed on its job row for the child instance that will carry it out. A product
 * whose convergence another run is at (progress within STALE_AFTER_MINUTES), or parked for a
 * decision, is left alone and said so; one whose run stalled is taken over (the next attempt).
 */
export async function claimConvergences(deps: ProvisioningDeps, input: ClaimInput): Promise<ClaimOutcome> {
    const site = deps.sites.named(input.site);
    if (!site) throw new NeedsPersonError(`There is no site "${input.site}" any more.`);
    const staleMs = deps.config.STALE_AFTER_MINUTES * 60_000;
    const listing = await deps.jobs.listByState(String(site.intakeSheetId), "done");
    const outcome: ClaimOutcome = { claimed: [], leftAlone: [] };
    for (const invalid of listing.invalid) outcome.leftAlone.push({ jobKey: invalid.jobKey, productCode: "?", why: `its row does not parse (${invalid.reason})` });
    const rows = listing.found.map(({ row }) => row).filter((row) => input.product === undefined || row.productCode === input.product);
    rows.sort((a, b) => (a.productCode < b.productCode ? -1 : a.productCode > b.productCode ? 1 : a.intakeRowId < b.intakeRowId ? -1 : 1));
    for (const listed of rows) {
        const key: JobKey = { pk: listed.intakeSheetId, rk: listed.intakeRowId };
        let why: string | undefined;
        let instanceId: string | undefined;
        try {
            await deps.jobs.update(
                key,
                (row) => {
                    why = undefined;
                    instanceId = undefined;
                    const run = row.convergence;
                    if (row.blueprintVersion === input.to && (!run || run.state === "done")) {
                        why = `on version ${input.to} already`;
                        return undefined;
                    }
                    if (run && run.state === "planned" && run.to === input.to && run.fleet === input.fleetInstanceId) {
                        // This fleet's claim step run again (its first answer was never recorded): the same claim, so the fleet starts it.
                        instanceId = run.instanceId;
                        return undefined;
                    }
                    if (run && run.state !== "done") {
                        const fresh = deps.now().getTime() - Date.parse(run.lastProgressAt) < staleMs;
                        if (run.state === "parked") {
                            why = `parked on its convergence to ${run.to}: ${run.parkReason ?? "a conflict"} (unpark it with a decision)`;
                            return undefined;
                        }
                        if (fresh) {
                            why = `${run.instanceId} is converging it to ${run.to}`;
                            return undefined;
                        }
                    }
                    const attempt = run && run.to === input.to && run.state !== "done" ? run.attempt + 1 : 1;
                    instanceId = convergeInstanceId(key, input.to, attempt);
                    const now = deps.now().toISOString();
                    return {
                        ...row,
                        convergence: {
                            to: input.to,
                            attempt,
                            instanceId,
                            state: "planned",
                            requestedAt: now,
                            requestedBy: input.requestedBy,
                            fleet: input.fleetInstanceId,
                            lastProgressAt: now,
                            applied: [],
                            resolved: [],
                        },
                    };
                },
                { from: JobLife.whileDone.from },
            );
        } catch (error) {
            if (error instanceof JobStateConflictError) {
                why = `it is ${error.actual} now`;
            } else if (error instanceof JobConcurrencyError) {
                why = "its row kept changing while it was claimed; apply again";
            } else {
                throw error;
            }
        }
        if (why !== undefined || instanceId === undefined) {
            outcome.leftAlone.push({ jobKey: formatJobKey(key), productCode: listed.productCode, why: why ?? "left alone" });
            continue;
        }
        deps.log.info(`job ${formatJobKey(key)} convergence → planned (to ${input.to}, ${instanceId}, fleet ${input.fleetInstanceId})`);

        outcome.claimed.push({ jobKey: key, instanceId });
    }
    return outcome;
}

/**
 * The product's plan, made once and frozen on the row before the first write: its copies read,
 * compared three-way between the version it is on and `to`. A re-run (a redelivery, the next
 * attempt after an unpark) carries out the frozen plan. A decision `take-template` adds, once,
 * the updates that write the template's attributes over the conflicts it can resolve.
 */
export function beginConvergence(deps: ProvisioningDeps, input: ConvergeStepInput): Promise<ConvergeOutcome> {
    return convergeStep(deps, input, "beginConvergence", async (context, run) => {
        let current = run;
        if (current.plan === undefined) {
            const stored = await deps.blueprints.list();
            const target = stored.found.find((known) => known.version === current.to);
            if (!target?.shape) throw new NeedsPersonError(`Template version ${current.to} is not stored with its shape; apply again to the template as it is now.`);
            const from = fromVersion(context.row, context.site, stored.found, current.to);
            if (!from) throw new NeedsPersonError(`No stored version of template folder ${context.site.templateFolderId} has a shape to plan product ${context.row.productCode} from.`);
            const { plan } = await planProduct(context.smartsheet, context.row, from, target.shape);
            const size = JSON.stringify({ ...current, plan }).length;
            if (size > MAX_RUN_CHARACTERS) {
                throw new NeedsPersonError(
                    `The product's convergence plan is ${size} characters with its run, more than the job row's property holds (${MAX_RUN_CHARACTERS}): ` +
                        `${plan.changes.length} changes and ${plan.conflicts.length} conflicts at once. Converge to a version with fewer changes first (--to), then on.`,
                );
            }
            const row = await context.update((latest) => {
                const latestRun = runOf(latest);
                if (latestRun.plan !== undefined) return undefined;
                return { ...latest, convergence: touched(deps, latestRun, { plan, from: from.version, state: "applying" }) };
            });
            current = runOf(row);
            deps.log.info(
                `job ${formatJobKey(input.jobKey)} convergence → applying (to ${current.to}: ${plan.changes.length} changes, ${plan.conflicts.length} conflicts, ${plan.calls.total} calls planned)`,
            );
        }
        if (current.decision === "take-template" && current.resolved.length === 0) current = await resolveForTemplate(deps, context, current);
        const pending = changesOf(current).filter((_, index) => !current.applied.includes(index)).length;
        return { pending, undecided: undecidedOf(current).length };
    });
}

/** The updates a `take-template` decision makes: each conflict it can resolve, the template's attributes over the product's column or field. */
async function resolveForTemplate(deps: ProvisioningDeps, context: StepContext, run: ConvergenceRun): Promise<ConvergenceRun> {
    const plan = planOf(run)!;
    const resolved: ConvergenceChange[] = [];
    for (const conflict of plan.conflicts) {
        if (!TAKEABLE.has(conflict.kind) || !conflict.newTemplate) continue;
        const copy = context.row.copies[conflict.sheet];
        if (!copy) continue;
        if (conflict.column !== undefined) {
            const column = (await context.smartsheet.getColumns(copy.sheetId)).find((found) => found.title === conflict.column);
            if (!column) throw new NeedsPersonError(`Column "${conflict.column}" of "${conflict.sheet}" is gone from the product; plan the convergence again.`);
            resolved.push({ kind: "updateColumn", sheet: conflict.sheet, sheetId: copy.sheetId, position: conflict.position ?? column.index, columnId: column.id, title: column.title, set: conflict.newTemplate, was: conflict.product ?? {} });
        } else if (conflict.field !== undefined) {
            const field = (await context.smartsheet.getSummaryFields(copy.sheetId)).find((found) => found.title === conflict.field);
            if (!field) throw new NeedsPersonError(`Summary field "${conflict.field}" of "${conflict.sheet}" is gone from the product; plan the convergence again.`);
            resolved.push({ kind: "updateSummaryField", sheet: conflict.sheet, sheetId: copy.sheetId, fieldId: field.id, title: field.title, set: conflict.newTemplate, was: conflict.product ?? {} });
        }
    }
    const row = await context.update((latest) => {
        const latestRun = runOf(latest);
        return latestRun.resolved.length > 0 ? undefined : { ...latest, convergence: touched(deps, latestRun, { resolved }) };
    });
    return runOf(row);
}

/** Carries out every change of the frozen plan not carried out yet, in execution order, each once (`applyChange`). */
export function applyConvergence(deps: ProvisioningDeps, input: ConvergeStepInput): Promise<ConvergeOutcome> {
    return convergeStep(deps, input, "applyConvergence", async (context, run) => {
        const plan = planOf(run);
        if (!plan) throw new NeedsPersonError("The convergence has no plan yet; begin it first.");
        const changes = changesOf(run);
        const target = await deps.blueprints.get(run.to);
        if (!target) throw new NeedsPersonError(`Template version ${run.to} is no longer stored; apply again to the template as it is now.`);
        for (const index of executionOrder(changes)) {
            const latest = await context.update(() => undefined);
            if (latest.convergence?.applied.includes(index)) continue;
            const change = changes[index]!;
            if (change.kind === "addSheet") {
                await addSheetToProduct(deps, context, change, target);
                await context.update((next) =>
                    next.convergence ? { ...next, convergence: touched(deps, next.convergence, { applied: [...new Set([...next.convergence.applied, index])] }) } : undefined,
                );
                continue;
            }
            const templateReferences = new Map((target.sheets.find((sheet) => sheet.name === change.sheet)?.references ?? []).map((reference) => [reference.name, reference] as const));
            // The product's copies as the row has them now: an added sheet is one of them once copied.
            const sourceSheetIds = new Map(Object.entries(latest.copies).map(([template, copy]) => [template, copy.sheetId]));
            await applyChange(deps, context, { to: run.to, index, change, templateReferences, sourceSheetIds });
        }
        return { pending: 0, undecided: undecidedOf(run).length };
    });
}

/**
 * The product waits for a person: its conflicts (or the reason) on the row, one error line that
 * names them (the log line is the alert), and the instance ends. Unpark with a decision starts
 * the next attempt.
 */
export function parkConvergence(deps: ProvisioningDeps, input: ConvergeStepInput & { reason: string }): Promise<ConvergeOutcome> {
    return convergeStep(deps, input, "parkConvergence", async (context, run) => {
        if (run.state === "parked") return { pending: 0, undecided: undecidedOf(run).length };
        const parkedAt = deps.now().toISOString();
        let parkedNow = false;
        await context.update((latest) => {
            const latestRun = runOf(latest);
            parkedNow = false;
            if (latestRun.state === "parked") return undefined;
            parkedNow = true;
            return { ...latest, convergence: touched(deps, latestRun, { state: "parked", parkReason: input.reason, parkedAt }) };
        });
        if (!parkedNow) return { pending: 0, undecided: undecidedOf(run).length };
        const jobKey = formatJobKey(input.jobKey);
        deps.log.error(`job ${jobKey} convergence applying → parked (product ${context.row.productCode}, to ${run.to}): ${input.reason}`);
        // Told once, by the run that parked it (a conditional write): the log line above is the alert when the webhook fails.
        try {
            await deps.alerts?.send({
                event: "convergence.parked",
                site: deps.sites.ofIntakeSheet(input.jobKey.pk)?.name,
                jobKey,
                productCode: context.row.productCode,
                productName: context.row.productName,
                to: run.to,
                reason: input.reason,
                parkedAt,
            });
        } catch (error) {
            deps.log.error(`job ${jobKey}: the convergence.parked alert did not go through (${messageOf(error)}); the line above is the alert`);
        }
        return { pending: 0, undecided: undecidedOf(run).length };
    });
}

/**
 * After the writes that may still land have landed (the row's late-write horizon), the product
 * against the target version: planned again from the version it came from, it must owe nothing
 * (every change in effect) and keep only the conflicts a `keep-product` decision kept; each copy's
 * references read the product's own sheets, none the template's.
 */
export function auditConvergence(deps: ProvisioningDeps, input: ConvergeStepInput): Promise<ConvergeOutcome> {
    return convergeStep(deps, input, "auditConvergence", async (context, run) => {
        const until = context.row.lateWritesUntil ? Date.parse(context.row.lateWritesUntil) : undefined;
        if (until !== undefined && until > deps.now().getTime()) return { pending: 0, undecided: 0, waitUntil: new Date(until).toISOString() };
        const stored = await deps.blueprints.list();
        const target = stored.found.find((known) => known.version === run.to);
        const from = stored.found.find((known) => known.version === run.from);
        if (!target?.shape || !from?.shape) throw new NeedsPersonError(`Template version ${!target?.shape ? run.to : run.from} is no longer stored with its shape; the product cannot be audited against it.`);
        const { plan, reads } = await planProduct(context.smartsheet, context.row, { version: from.version, shape: from.shape }, target.shape);
        const kept = run.decision === "keep-product" ? (planOf(run)?.conflicts ?? []) : [];
        const keptKeys = new Set(kept.map(conflictKey));
        const problems = [
            ...plan.changes.map((change) => `${change.kind} of "${change.sheet}" is not in effect`),
            ...plan.conflicts.filter((conflict) => !keptKeys.has(conflictKey(conflict))).map((conflict) => `unexpected conflict: ${describeConflict(conflict)}`),
        ];
        // A copy of an added sheet that landed late (its first answer lost): removed, as provisioning's final audit removes one.
        if (context.row.folderId !== undefined) {
            const added = new Set(changesOf(run).filter((change) => change.kind === "addSheet").map((change) => change.sheet));
            const children = (await context.smartsheet.listFolderChildren(context.row.folderId, ["sheets"])).filter((child) => child.resourceType === "sheet");
            for (const [template, copy] of Object.entries(context.row.copies)) {
                for (const twin of children.filter((child) => child.name === copy.name && child.id !== copy.sheetId)) {
                    if (!added.has(template)) {
                        problems.push(`two sheets named "${copy.name}" in the product's folder`);
                        continue;
                    }
                    await context.smartsheet.deleteSheet(twin.id);
                    deps.log.warn(`job ${formatJobKey(input.jobKey)}: removed ${twin.id}, a second copy of the added sheet "${template}" (a copy that landed late)`);
                }
            }
        }
        // What a formula of the product reads must be the product's own (a copy keeps the template's references beside its own: unused, they read nothing).
        const templateSheetIds = new Set(target.shape.sheets.map((sheet) => sheet.sheetId));
        // The re-plan's reads of the copies, each with its references and summary: nothing is read twice.
        for (const [template, copy] of Object.entries(context.row.copies)) {
            const read = reads.find((candidate) => candidate.sheet.id === copy.sheetId);
            if (!read) {
                problems.push(`the product's copy of "${template}" (${copy.sheetId}) is not in its folder under its name`);
                continue;
            }
            const { sheet, summary } = read;
            const sources = new Map((sheet.crossSheetReferences ?? []).map((reference) => [reference.name, reference.sourceSheetId] as const));
            const formulas = [
                ...sheet.columns.map((column) => column.formula),
                ...sheet.rows.flatMap((row) => row.cells.map((cell) => cell.formula)),
                ...summary.map((field) => field.formula),
            ].filter((formula): formula is string => formula !== undefined);
            for (const name of new Set(formulas.flatMap((formula) => referencesIn(formula)))) {
                const source = sources.get(name);
                if (source === undefined) problems.push(`a formula of "${template}" uses {${name}}, which the sheet has no reference for`);
                else if (templateSheetIds.has(source)) problems.push(`a formula of "${template}" uses {${name}}, which reads a template sheet`);
            }
            const titles = sheet.columns.map((column) => column.title);
            for (const title of new Set(titles)) if (titles.filter((other) => other === title).length > 1) problems.push(`column "${title}" of "${template}" twice`);
        }
        if (problems.length > 0) throw new NeedsPersonError(`The audit of the convergence to ${run.to} found: ${problems.slice(0, 10).join("; ")}${problems.length > 10 ? ` and ${problems.length - 10} more` : ""}.`);
        return { pending: 0, undecided: 0 };
    });
}

function conflictKey(conflict: ConvergenceConflict): string {
    return JSON.stringify([conflict.kind, conflict.sheet, conflict.column ?? null, conflict.field ?? null, conflict.aspect ?? null]);
}

/** The product is on the target version: its row says so (`blueprintVersion`, the record in `convergences`). */
export function completeConvergence(deps: ProvisioningDeps, input: ConvergeStepInput): Promise<ConvergeOutcome> {
    return convergeStep(deps, input, "completeConvergence", async (context, run) => {
        if (run.state === "done") return { pending: 0, undecided: 0 };
        const now = deps.now();
        await context.update((latest) => {
            const latestRun = runOf(latest);
            if (latestRun.state === "done") return undefined;
            const horizonPassed = latest.lateWritesUntil !== undefined && Date.parse(latest.lateWritesUntil) <= now.getTime();
            return {
                ...latest,
                blueprintVersion: latestRun.to,
                lateWritesUntil: horizonPassed ? undefined : latest.lateWritesUntil,
                lateWriteKinds: horizonPassed ? undefined : latest.lateWriteKinds,
                convergence: touched(deps, latestRun, { state: "done", parkReason: undefined }),
                convergences: [
                    ...latest.convergences,
                    {
                        from: latestRun.from,
                        to: latestRun.to,
                        at: now.toISOString(),
                        changes: latestRun.applied.length,
                        kept: latestRun.decision === "keep-product" ? (planOf(latestRun)?.conflicts.length ?? 0) : 0,
                        decision: latestRun.decision,
                        decidedBy: latestRun.decidedBy,
                    },
                ],
            };
        });
        deps.log.info(`job ${formatJobKey(input.jobKey)} convergence applying → done (product ${context.row.productCode}: ${run.from ?? "?"} → ${run.to}, ${run.applied.length} changes)`);
        return { pending: 0, undecided: 0 };
    });
}

/** Every step of a product's convergence, by the activity name it is registered and called under. */
export const convergenceSteps = {
    beginConvergence,
    applyConvergence,
    parkConvergence,
    auditConvergence,
    completeConvergence,
} as const;

export type ConvergenceStepName = keyof typeof convergenceSteps;
