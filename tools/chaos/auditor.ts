import { TableClient } from "@azure/data-tables";
import { z } from "zod";
import { expectedNames } from "./composedNames";
import { RAW_CONTROL } from "./inert";
import { FORGED_LINE_MARKER, type ConvergenceDecision, type TemplateChange } from "./plan";
import { SECOND_CHANGES, TEMPLATE_CHANGES, type CustomerEditMade } from "./convergenceActions";

/**
 * The auditor judges a finished schedule from the outside: the simulator's state over its admin
 * API, the Jobs table read with the Tables SDK, and the alerts the webhook received. It imports
 * nothing from the app, so a bug shared by the pipeline and its checks cannot hide here.
 */

export const FINDING_CATEGORIES = ["duplicates", "lost", "orphans", "silent", "invariantFailures"] as const;
export type FindingCategory = (typeof FINDING_CATEGORIES)[number];

export interface Finding {
    category: FindingCategory;
    subject: string;
    detail: string;
}

/** An intake row the harness created, and what the plan did to it. */
export interface AuditedRequest {
    rowId: number;
    code: string;
    /** The sweep should provision it (else reject it). */
    valid: boolean;
    /** The plan deleted the row: its status is not checked, and it may have no job. */
    deleted: boolean;
    /** Approved was unticked before the sweep made a job: none is owed. */
    withdrawn: boolean;
    /** The plan locked the row (the app may not write it): its status is not checked. */
    locked?: boolean;
    /** The plan made its orchestrations' status unreadable on one host: its job may stay open. */
    statusUnreadable?: boolean;
    /** Approved once the schedule was at rest (after the approvals snapshot), for the fast path's check. */
    typedAtRest?: boolean;
}

/** What the auditor needs of a schedule with Smartsheet's webhooks on. */
export interface AuditedWebhooks {
    intakeSheetId: number;
    /** The token the app calls Smartsheet with: its webhooks are the app's. */
    appToken: string;
    /** `host:port` of the first host, where the app's webhook calls back. */
    callbackHost: string;
    /** Callbacks the harness forged: the webhook id each named (the app's own, or not), and what the receiver answered (null: the host was down). */
    forged: ReadonlyArray<{ webhookId: number; appsOwnId: boolean; status: number | null }>;
    /** Requests approved at rest with no sweep fired, and how long each waited for a job row (null: longer than the interval). */
    approvedAtRest: ReadonlyArray<{ rowId: number; jobAfterMs: number | null }>;
    safetyNetIntervalMs: number;
}

/** Output an ops person reads (the jobs CLI, the hosts' logs), as it was written. */
export interface AuditedOutput {
    source: string;
    text: string;
}

/** The intake sheet and the Jobs table's job rows as they were one sweep interval after a sweep (faults cleared). */
export interface ApprovalSnapshot {
    /** The simulator's state of the intake sheet then (`GET /__sim/state`, one sheet). */
    intake: unknown;
    jobRowIds: readonly number[];
    /** Of those, the jobs still queued: the intake row owes them `Queued` (a running job's cell is its steps' until Done). */
    queuedRowIds?: readonly number[];
}

export interface AuditInput {
    simAdminUrl: string;
    storageConnectionString: string;
    jobsTable: string;
    requests: readonly AuditedRequest[];
    alerts: readonly unknown[];
    /** The plan made Smartsheet refuse for good (403/1004, a template referring outside itself): parking is a fair outcome. */
    permanentFaultsPlanned: boolean;
    /** Each app token's limit: no rolling window of its calls in the simulator's log may hold more. */
    rateLimit?: { requests: number; windowMs: number; tokens: readonly string[] };
    outputs?: readonly AuditedOutput[];
    /** A host's clock was off by more than the app allows: that host's log (`source`) must warn of it, with its figure. */
    skewedHost?: { source: string; offsetMs: number };
    /** Template references outside the template the plan made: to a shared sheet, or to a sheet of an earlier product. */
    outsideReferences?: ReadonlyArray<{ variant: "shared" | "otherProduct"; name: string; sourceSheetId: number; productFolderId?: number }>;
    approvals?: ApprovalSnapshot;
    webhooks?: AuditedWebhooks;
    convergence?: AuditedConvergence;
}

/** What the harness did of a template convergence, and what the app answered it. */
export interface AuditedConvergence {
    /** The versions the applies answered with: every product done at the apply ends on one of them, or parked. */
    targets: readonly string[];
    applies: ReadonlyArray<{ status: number | null; versions: readonly string[] }>;
    /** The template change converged to, as made. */
    changes: readonly TemplateChange[];
    /** The second change, made once the applies had answered: it reaches no product. */
    changesAgain: readonly TemplateChange[];
    /** The customers' edits that landed. */
    customerEdits: readonly CustomerEditMade[];
    /** Job key → the decisions a person unparked it with (answered 202). */
    decisions: Readonly<Record<string, readonly ConvergenceDecision[]>>;
    /** Intake rows whose jobs were done when the convergence was applied. */
    convergedRows: readonly number[];
}

/** How a schedule's convergence ended, per product done at the apply. */
export interface ConvergenceTally {
    targets: string[];
    converged: number;
    parked: number;
    lost: number;
    /** Products a person unparked with a decision (some of them converged since). */
    unparked: number;
}

export interface AuditResult {
    findings: Finding[];
    states: Record<"done" | "parked" | "rejected" | "open", number>;
    convergence?: ConvergenceTally;
}

const Id = z.number().int();
const SimSheet = z.object({
    id: Id,
    name: z.string(),
    folderId: Id,
    columns: z.array(z.object({ id: Id, title: z.string(), formula: z.string().optional() })),
    rows: z.array(
        z.object({
            id: Id,
            cells: z.array(z.object({ columnId: Id, value: z.unknown().optional(), formula: z.string().optional() })),
        }),
    ),
    crossSheetReferences: z.array(z.object({ name: z.string(), sourceSheetId: Id })),
    summaryFields: z.array(
        z.object({ title: z.string(), objectValue: z.unknown().optional(), displayValue: z.string().optional(), formula: z.string().optional() }),
    ),
});
export type SimSheet = z.infer<typeof SimSheet>;
const SimState = z.object({
    intakeSheetId: Id,
    templateFolderId: Id,
    productsFolderId: Id,
    filingIndexSheetId: Id,
    folders: z.array(z.object({ id: Id, name: z.string(), parentId: Id.nullable() })),
    sheets: z.array(SimSheet),
});
export type SimState = z.infer<typeof SimState>;

const JobEntity = z.object({
    partitionKey: z.string(),
    rowKey: z.string(),
    kind: z.literal("job"),
    state: z.enum(["queued", "running", "parked", "done", "rejected"]),
    productCode: z.string(),
    productName: z.string(),
    productLine: z.string(),
    parkReason: z.string().optional(),
    parkedAt: z.string().optional(),
    rejectReason: z.string().optional(),
    blueprintVersion: z.string().optional(),
    /** JSON text, as the Table holds it. */
    convergence: z.string().optional(),
});
export type JobEntity = z.infer<typeof JobEntity>;

const RowRefusedAlert = z.object({ event: z.literal("intake.rowRefused"), intakeRowId: z.union([z.string(), z.number()]) });
const ParkAlert = z.object({ event: z.literal("job.parked"), jobKey: z.string(), parkedAt: z.string().optional() });
const CallLog = z.object({ log: z.array(z.object({ at: z.string(), token: z.string().optional(), op: z.string() })) });

/** The simulator's state as the auditor reads it (`GET /__sim/state`). */
export async function readWorld(simAdminUrl: string): Promise<World> {
    return new World(SimState.parse(await (await fetch(new URL("state", simAdminUrl))).json()));
}

export async function audit(input: AuditInput): Promise<AuditResult> {
    const state = SimState.parse(await (await fetch(new URL("state", input.simAdminUrl))).json());
    const jobs = await readJobs(input.storageConnectionString, input.jobsTable);
    const findings: Finding[] = [];
    const found = (category: FindingCategory, subject: string, detail: string) => findings.push({ category, subject, detail });
    if (input.rateLimit) await checkRateWindows(input.simAdminUrl, input.rateLimit, found);
    for (const output of input.outputs ?? []) checkInert(output, found);
    if (input.skewedHost) checkSkewWarned(input.skewedHost, input.outputs ?? [], found);
    if (input.approvals) checkApprovalsAnswered(input.approvals, input.requests.filter((request) => !request.typedAtRest), found);
    if (input.webhooks) await checkWebhooks(input.simAdminUrl, input.webhooks, input.outputs ?? [], found);
    checkAlertsPerParking(input.alerts, found);
    const world = new World(state);
    checkLockedRows(world, state.intakeSheetId, input.requests, jobs, input.alerts, input.outputs ?? [], found);
    const templates = world.sheetsIn(state.templateFolderId);
    const templateNames = templates.map((sheet) => sheet.name);
    const states = { done: 0, parked: 0, rejected: 0, open: 0 };

    const harnessFolders = new Set((input.outsideReferences ?? []).flatMap((reference) => (reference.productFolderId ? [reference.productFolderId] : [])));
    const shared = (input.outsideReferences ?? []).filter((reference) => reference.variant === "shared");
    const jobsByRow = new Map(jobs.map((job) => [Number(job.rowKey), job]));
    for (const request of input.requests) {
        const job = jobsByRow.get(request.rowId);
        if (!job) {
            if (!request.deleted && !request.withdrawn) found("lost", request.code, `approved intake row ${request.rowId} has no job`);
            continue;
        }
        if (request.valid && job.state === "rejected") found("invariantFailures", request.code, `a valid request was rejected: ${job.rejectReason}`);
        if (!request.valid && job.state !== "rejected") found("invariantFailures", request.code, `an invalid request ended ${job.state}, not rejected`);
        if (!request.deleted && !request.locked) checkIntakeStatus(world, state.intakeSheetId, request, job, found);
        else if (request.valid && job.state === "parked" && !input.permanentFaultsPlanned && !/^No progress after/.test(job.parkReason ?? "")) {
            // Deleting the intake row only takes away where the status is written; the product is still finished.
            found("invariantFailures", request.code, `intake row deleted mid-job, and the job parked instead of finishing: ${job.parkReason}`);
        }
    }

    const owned = new Map<number, Set<string>>();
    const unreadable = new Set(input.requests.filter((request) => request.statusUnreadable).map((request) => request.rowId));
    for (const job of jobs) {
        const key = `${job.partitionKey}-${job.rowKey}`;
        const subject = `${job.productCode} (${key})`;
        if (job.state === "queued" || job.state === "running") {
            states.open += 1;
            // Its status cannot be read, so no one can tell whether it still runs: it may stay open, and what it made so
            // far is still its own (chaos seed 26120303, schedule 397: its folder was counted an orphan); the others may not.
            if (!unreadable.has(Number(job.rowKey))) {
                found("lost", subject, `still ${job.state} when the stack was idle`);
                continue;
            }
        } else {
            states[job.state] += 1;
            if (job.state === "parked") checkParking(job, key, input.alerts, subject, found);
            for (const reference of shared) {
                // A formula using a shared sheet is allowed: parking a job for it is a finding.
                if (job.state === "parked" && (job.parkReason ?? "").includes(`{${reference.name}}`)) {
                    found("invariantFailures", subject, `parked for {${reference.name}}, a reference to a shared sheet outside the template, which a product may use: ${job.parkReason}`);
                }
            }
            if (job.state === "rejected") continue;
        }
        const line = world.lineFolder(state.productsFolderId, job.productLine);
        if (!line) {
            found("invariantFailures", subject, `no product-line folder "${job.productLine}"`);
            continue;
        }
        const names = expectedNames(job.productCode, job.productName, templateNames);
        const folders = world.foldersIn(line.id).filter((folder) => folder.name === names.folder);
        for (const folder of folders) owned.set(folder.id, new Set(names.sheets.values()));
        if (folders.length > 1) found("duplicates", subject, `${folders.length} folders named "${names.folder}"`);
        for (const folder of folders) {
            for (const [template, name] of names.sheets) {
                const count = world.sheetsIn(folder.id).filter((sheet) => sheet.name === name).length;
                if (count > 1) found("duplicates", subject, `${count} sheets named "${name}" (copies of ${template})`);
            }
        }
        const filed = world.filingRows(state.filingIndexSheetId, job.productCode).length;
        if (filed > 1) found("duplicates", subject, `${filed} Filing Index rows for ${job.productCode}`);
        if (job.state === "done") checkDoneProduct(world, state, job, names, templates, folders, subject, found);
        if (job.state === "done" && folders[0]) checkSharedReferencesKept(world, folders[0].id, names, shared, subject, found);
    }

    for (const line of world.foldersIn(state.productsFolderId)) {
        for (const sheet of world.sheetsIn(line.id)) found("orphans", line.name, `sheet "${sheet.name}" (${sheet.id}) directly in the line folder`);
        for (const folder of world.foldersIn(line.id)) {
            const names = owned.get(folder.id);
            if (harnessFolders.has(folder.id)) continue;
            if (!names) {
                found("orphans", line.name, `folder "${folder.name}" (${folder.id}) belongs to no job`);
                continue;
            }
            for (const sheet of world.sheetsIn(folder.id)) {
                if (!names.has(sheet.name)) found("orphans", folder.name, `sheet "${sheet.name}" (${sheet.id}) belongs to no job`);
            }
            for (const inner of world.foldersIn(folder.id)) found("orphans", folder.name, `folder "${inner.name}" (${inner.id}) inside a product folder`);
        }
    }
    const convergence = input.convergence ? checkConvergence(world, jobs, input.convergence, templateNames, found) : undefined;
    return { findings, states, ...(convergence ? { convergence } : {}) };
}

/** The convergence's run as the job row holds it (JSON text), loosely: what the auditor reads of it. */
const ConvergenceRun = z.object({
    to: z.string().optional(),
    state: z.string().optional(),
    parkReason: z.string().optional(),
    decision: z.string().optional(),
    plan: z.object({ conflicts: z.array(z.object({ kind: z.string(), sheet: z.string(), column: z.string().optional(), field: z.string().optional() })).default([]) }).optional(),
});

/**
 * A template convergence, judged from the simulator's state and the Jobs table alone. Every
 * product done at the apply ends on one version the apply targeted (its row's `blueprintVersion`,
 * its convergence done) or parked on it with a reason; neither is `lost`. No copy holds a column or
 * summary field title twice. A converged product has what the change added exactly once and the
 * changed formula; no product has anything of the second change made mid-way. A customer's value,
 * formula or own column is as they left it, unless a take-template decision was for that very
 * conflict. (Where a product's formulas reach is checked with every done product.)
 */
export function checkConvergence(world: World, jobs: readonly JobEntity[], input: AuditedConvergence, templateNames: readonly string[], found: Found): ConvergenceTally {
    const tally: ConvergenceTally = { targets: [...input.targets], converged: 0, parked: 0, lost: 0, unparked: Object.values(input.decisions).filter((decisions) => decisions.length > 0).length };
    if (input.targets.length === 0) {
        const answers = input.applies.map((apply) => apply.status ?? "no answer").join(", ");
        found("invariantFailures", "convergence", `no apply was answered 202 with a version (answers: ${answers || "none"})`);
    }
    if (input.targets.length > 1) found("invariantFailures", "convergence", `applies of one template answered different versions: ${input.targets.join(", ")}`);
    const converging = new Set(input.convergedRows);
    for (const job of jobs) {
        if (!converging.has(Number(job.rowKey))) continue;
        const key = `${job.partitionKey}-${job.rowKey}`;
        const subject = `${job.productCode} (${key})`;
        let run: z.infer<typeof ConvergenceRun> | undefined;
        try {
            run = job.convergence ? ConvergenceRun.parse(JSON.parse(job.convergence)) : undefined;
        } catch (error) {
            found("invariantFailures", subject, `its row's convergence is not readable: ${error instanceof Error ? error.message.slice(0, 200) : String(error)}`);
        }
        const converged = job.state === "done" && run?.state === "done" && job.blueprintVersion !== undefined && input.targets.includes(job.blueprintVersion);
        if (converged) tally.converged += 1;
        else if (run?.state === "parked") {
            tally.parked += 1;
            if (!run.parkReason?.trim()) found("silent", subject, "parked on its convergence without a reason");
        } else {
            tally.lost += 1;
            found("lost", subject, `done at the apply, and at rest neither converged to ${input.targets.join(" or ") || "a version"} nor parked: job ${job.state}, blueprintVersion ${job.blueprintVersion ?? "none"}, convergence ${run ? `${run.state ?? "?"} to ${run.to ?? "?"}` : "none"}`);
        }
        const sheets = productSheets(world, job, templateNames);
        for (const [template, copies] of sheets) {
            if (copies.length > 1) continue; // the sheet duplicates are counted with every job
            const copy = copies[0]!;
            for (const [title, count] of counted(copy.columns.map((column) => column.title))) if (count > 1) found("duplicates", subject, `"${copy.name}" (copy of ${template}) has ${count} columns titled "${title}"`);
            for (const [title, count] of counted(copy.summaryFields.map((field) => field.title))) if (count > 1) found("duplicates", subject, `"${copy.name}" (copy of ${template}) has ${count} summary fields titled "${title}"`);
        }
        const copy = (template: string) => (sheets.get(template)?.length === 1 ? sheets.get(template)![0] : undefined);
        const takenTemplate = (sheet: string, column: string) =>
            (input.decisions[key] ?? []).includes("take-template") && (run?.plan?.conflicts ?? []).some((conflict) => conflict.sheet === sheet && conflict.column === column);
        const edits = input.customerEdits.filter((edit) => edit.rowId === Number(job.rowKey));
        if (converged) {
            for (const change of input.changes) {
                if (change === "addColumn") {
                    const { sheet, title } = TEMPLATE_CHANGES.addColumn;
                    const count = copy(sheet)?.columns.filter((column) => column.title === title).length ?? 0;
                    if (count === 0) found("invariantFailures", subject, `converged to ${job.blueprintVersion}, but its copy of ${sheet} has no column "${title}" the template added`);
                } else if (change === "addSummaryField") {
                    const { sheet, title } = TEMPLATE_CHANGES.addSummaryField;
                    const fields = copy(sheet)?.summaryFields.filter((field) => field.title === title || field.title.startsWith(`${title} (`)) ?? [];
                    if (fields.length === 0) found("invariantFailures", subject, `converged to ${job.blueprintVersion}, but its copy of ${sheet} has no summary field "${title}" the template added`);
                    else if (fields.length > 1) found("duplicates", subject, `its copy of ${sheet} has the template's summary field "${title}" ${fields.length} times: ${fields.map((field) => `"${field.title}"`).join(", ")}`);
                } else {
                    const { sheet, column, marker } = TEMPLATE_CHANGES.columnFormula;
                    const kept = edits.some((edit) => edit.edit === "columnFormula" && edit.sheet === sheet && edit.column === column) && !takenTemplate(sheet, column);
                    const formula = copy(sheet)?.columns.find((candidate) => candidate.title === column)?.formula;
                    if (!kept && !formula?.includes(marker)) found("invariantFailures", subject, `converged to ${job.blueprintVersion}, but its copy of ${sheet}'s "${column}" has ${JSON.stringify(formula ?? null)}, not the template's changed formula`);
                }
            }
        }
        for (const change of input.changesAgain) {
            const where = `made after the apply to ${input.targets.join(" or ")}`;
            if (change === "addColumn") {
                const { sheet, title } = SECOND_CHANGES.addColumn;
                if (copy(sheet)?.columns.some((column) => column.title === title)) found("invariantFailures", subject, `its copy of ${sheet} has the column "${title}" of the template's second change, ${where}: the product is on two versions`);
            } else if (change === "addSummaryField") {
                const { sheet, title } = SECOND_CHANGES.addSummaryField;
                if (copy(sheet)?.summaryFields.some((field) => field.title.startsWith(title))) found("invariantFailures", subject, `its copy of ${sheet} has the summary field "${title}" of the template's second change, ${where}: the product is on two versions`);
            } else {
                const { sheet, column, marker } = SECOND_CHANGES.columnFormula;
                const formula = copy(sheet)?.columns.find((candidate) => candidate.title === column)?.formula;
                if (formula?.includes(marker)) found("invariantFailures", subject, `its copy of ${sheet}'s "${column}" has the formula of the template's second change, ${where}: ${formula}`);
            }
        }
        for (const edit of lastOfEach(edits)) checkCustomerEdit(world, edit, takenTemplate(edit.sheet, edit.column), subject, found);
    }
    return tally;
}

/** The customer's last edit of each cell, formula or column: an earlier one the customer overwrote is no longer theirs to find. */
function lastOfEach(edits: readonly CustomerEditMade[]): CustomerEditMade[] {
    const sameTarget = (a: CustomerEditMade, b: CustomerEditMade) => a.sheetId === b.sheetId && a.edit === b.edit && a.columnId === b.columnId && a.cellRowId === b.cellRowId;
    return edits.filter((edit, index) => !edits.slice(index + 1).some((later) => sameTarget(edit, later)));
}

/** A customer's edit as they left it: their value, their formula, their own column (once, under its id). */
function checkCustomerEdit(world: World, edit: CustomerEditMade, takenTemplate: boolean, subject: string, found: Found): void {
    const sheet = world.sheet(edit.sheetId);
    const what = `the customer's ${edit.edit === "cellValue" ? "value" : edit.edit === "columnFormula" ? "formula" : "own column"} in "${edit.column}" of its copy of ${edit.sheet} (${edit.when} the apply)`;
    if (!sheet) return void found("invariantFailures", subject, `${what}: the sheet ${edit.sheetId} is gone`);
    if (edit.edit === "cellValue") {
        const row = sheet.rows.find((candidate) => candidate.id === edit.cellRowId);
        const value = row ? cellText(row, edit.columnId) : undefined;
        if (value !== edit.value && !takenTemplate) found("invariantFailures", subject, `${what} was ${JSON.stringify(edit.value)}, and is now ${row ? JSON.stringify(value) : "gone with its row"}`);
    } else if (edit.edit === "columnFormula") {
        const formula = sheet.columns.find((column) => column.id === edit.columnId)?.formula;
        if (formula !== edit.value && !takenTemplate) found("invariantFailures", subject, `${what} was ${edit.value}, and is now ${JSON.stringify(formula ?? null)}, though no take-template decision was for it`);
    } else {
        const column = sheet.columns.find((candidate) => candidate.id === edit.columnId);
        if (!column || column.title !== edit.column) found("invariantFailures", subject, `${what} (${edit.columnId}) is ${column ? `now titled "${column.title}"` : "gone"}`);
    }
}

/** A job's product sheets by template sheet name (every sheet of its folder(s) with that composed name). */
function productSheets(world: World, job: JobEntity, templateNames: readonly string[]): Map<string, SimSheet[]> {
    const names = expectedNames(job.productCode, job.productName, templateNames);
    const line = world.lineFolder(world.productsFolderId, job.productLine);
    const folders = line ? world.foldersIn(line.id).filter((folder) => folder.name === names.folder) : [];
    const sheets = folders.flatMap((folder) => world.sheetsIn(folder.id));
    return new Map([...names.sheets].map(([template, name]) => [template, sheets.filter((sheet) => sheet.name === name)]));
}

function counted(titles: readonly string[]): Map<string, number> {
    const counts = new Map<string, number>();
    for (const title of titles) counts.set(title, (counts.get(title) ?? 0) + 1);
    return counts;
}

function checkDoneProduct(
    world: World,
    state: SimState,
    job: JobEntity,
    names: ReturnType<typeof expectedNames>,
    templates: readonly SimSheet[],
    folders: ReadonlyArray<{ id: number; name: string }>,
    subject: string,
    found: (category: FindingCategory, subject: string, detail: string) => void,
): void {
    if (folders.length === 0) {
        found("invariantFailures", subject, `done, but no folder named "${names.folder}" under ${job.productLine}`);
        return;
    }
    const folder = folders[0]!;
    const sheets = world.sheetsIn(folder.id).filter((sheet) => [...names.sheets.values()].includes(sheet.name));
    for (const [template, name] of names.sheets) {
        if (!sheets.some((sheet) => sheet.name === name)) found("invariantFailures", subject, `done, but no sheet "${name}" (copy of ${template})`);
    }
    const own = new Set(sheets.map((sheet) => sheet.id));
    for (const sheet of sheets) {
        for (const problem of foreignFormulas(sheet, own, world)) found("invariantFailures", subject, problem);
    }
    // A reference no formula uses reaches nothing (Smartsheet has no delete for it and drops it after two hours): only used ones count.
    for (const template of templates) {
        if (!template.summaryFields.some((field) => field.title === "Product Code")) continue;
        for (const sheet of sheets.filter((candidate) => candidate.name === names.sheets.get(template.name))) {
            const field = sheet.summaryFields.find((candidate) => candidate.title === "Product Code");
            const stamped = field && (field.objectValue === job.productCode || field.displayValue === job.productCode);
            if (!stamped) found("invariantFailures", subject, `"${sheet.name}" has Product Code ${JSON.stringify(field?.objectValue ?? null)}`);
        }
    }
    const filing = world.sheet(state.filingIndexSheetId);
    const codeColumn = filing?.columns.find((column) => column.title === "Product Code");
    const registerColumn = filing?.columns.find((column) => column.title === "Register Sheet Id");
    if (!filing || !codeColumn || !registerColumn) {
        found("invariantFailures", subject, "the Filing Index sheet or its Product Code / Register Sheet Id column is missing");
        return;
    }
    const entries = world.filingRows(state.filingIndexSheetId, job.productCode);
    if (entries.length === 0) found("invariantFailures", subject, `done, but no Filing Index row for ${job.productCode}`);
    const registerName = [...names.sheets.entries()].find(([template]) => template === "Document Register")?.[1];
    const register = sheets.find((sheet) => sheet.name === registerName);
    for (const entry of entries) {
        if (register && cellText(entry, registerColumn.id) !== String(register.id)) {
            found("invariantFailures", subject, `the Filing Index row points at sheet ${cellText(entry, registerColumn.id)}, not the product's Document Register ${register.id}`);
        }
    }
}

/**
 * Where a done product's formulas may reach (the app's designed rule, recomputed from the
 * simulator's state): its own sheets, or a shared sheet — one outside both the template folder and
 * the products folder tree (the Filing Index, say). Never a template sheet, never a sheet of another
 * product, never a sheet that is gone. Only references a formula uses count: Smartsheet cannot
 * delete a reference, and a copy keeps the template's unused ones.
 */
export function foreignFormulas(sheet: SimSheet, own: ReadonlySet<number>, world: World): string[] {
    const formulas = [
        ...sheet.columns.flatMap((column) => (column.formula ? [column.formula] : [])),
        ...sheet.rows.flatMap((row) => row.cells.flatMap((cell) => (cell.formula ? [cell.formula] : []))),
        ...sheet.summaryFields.flatMap((field) => (field.formula ? [field.formula] : [])),
    ];
    const problems = new Set<string>();
    for (const formula of formulas) {
        for (const [, name] of formula.matchAll(/\{([^}]+)\}/g)) {
            const reference = sheet.crossSheetReferences.find((candidate) => candidate.name === name);
            if (!reference) {
                problems.add(`"${sheet.name}": formula ${formula} uses {${name}}, which is no reference of the sheet`);
                continue;
            }
            if (own.has(reference.sourceSheetId)) continue;
            const source = world.sheet(reference.sourceSheetId);
            const where = !source
                ? "a sheet that no longer exists"
                : world.inTree(source.folderId, world.templateFolderId)
                  ? "a template sheet"
                  : world.inTree(source.folderId, world.productsFolderId)
                    ? "a sheet of another product"
                    : undefined;
            if (where) problems.add(`"${sheet.name}": formula ${formula} uses {${name}}, which points at "${source?.name ?? "?"}" (${reference.sourceSheetId}), ${where}, not at the product's own sheets or a shared sheet`);
        }
    }
    return [...problems];
}

/** A done product copied after a reference to a shared sheet was added keeps it as it was: pointing at that sheet. */
function checkSharedReferencesKept(
    world: World,
    folderId: number,
    names: ReturnType<typeof expectedNames>,
    shared: NonNullable<AuditInput["outsideReferences"]>,
    subject: string,
    found: Found,
): void {
    for (const reference of shared) {
        for (const sheet of world.sheetsIn(folderId).filter((candidate) => [...names.sheets.values()].includes(candidate.name))) {
            const kept = sheet.crossSheetReferences.find((candidate) => candidate.name === reference.name);
            if (kept && kept.sourceSheetId !== reference.sourceSheetId) {
                found("invariantFailures", subject, `"${sheet.name}": {${reference.name}} points at sheet ${kept.sourceSheetId}, no longer at the shared sheet ${reference.sourceSheetId} the template points it at`);
            }
        }
    }
}

/** No rolling window of one token's calls holds more than the limit (the simulator's log: every call, refused ones too). */
async function checkRateWindows(simAdminUrl: string, limit: NonNullable<AuditInput["rateLimit"]>, found: Found): Promise<void> {
    const { log } = CallLog.parse(await (await fetch(new URL("calls", simAdminUrl))).json());
    for (const token of limit.tokens) {
        const times = log.filter((call) => call.token === token).map((call) => Date.parse(call.at)).sort((a, b) => a - b);
        let busiest = 0;
        let busiestFrom = 0;
        for (let first = 0, last = 0; last < times.length; last += 1) {
            while (times[last]! - times[first]! >= limit.windowMs) first += 1;
            if (last - first + 1 > busiest) [busiest, busiestFrom] = [last - first + 1, times[first]!];
        }
        if (busiest > limit.requests) {
            found("invariantFailures", `token …${token.slice(-4)}`, `${busiest} calls in the ${limit.windowMs / 1000} s from ${new Date(busiestFrom).toISOString()}, over the limit of ${limit.requests}`);
        }
    }
}

/** Customer text reaches no terminal or log raw: no control, bidi or invisible character, and no line forged by a newline. */
function checkInert(output: AuditedOutput, found: Found): void {
    const lines = output.text.split("\n");
    const raw = lines.filter((line) => RAW_CONTROL.test(line));
    const forged = lines.filter((line) => line.trimStart().startsWith(FORGED_LINE_MARKER));
    for (const line of raw.slice(0, 3)) found("invariantFailures", output.source, `prints a raw control, bidi or invisible character: ${JSON.stringify(line.slice(0, 200))}`);
    if (raw.length > 3) found("invariantFailures", output.source, `and ${raw.length - 3} more lines with raw control characters`);
    for (const line of forged.slice(0, 3)) found("invariantFailures", output.source, `prints a line forged by a newline in customer text: ${JSON.stringify(line.slice(0, 200))}`);
}

/**
 * The skewed host itself warns that its clock is off the storage service's, in the direction and
 * by about the figure it was set off by (within the estimate's ± and a quarter second). Another
 * host's line, or a line without the figure, is not the warning.
 */
function checkSkewWarned(skewed: NonNullable<AuditInput["skewedHost"]>, outputs: readonly AuditedOutput[], found: Found): void {
    const direction = skewed.offsetMs > 0 ? "ahead of" : "behind";
    const lines = outputs.filter((output) => output.source === skewed.source).flatMap((output) => output.text.split("\n"));
    const figures = lines.flatMap((line) => {
        const match = /this instance's clock is (\d+(?:\.\d+)?) s (ahead of|behind) the storage service's \(±(\d+(?:\.\d+)?) s/.exec(line);
        return match ? [{ seconds: Number(match[1]), direction: match[2], uncertainty: Number(match[3]) }] : [];
    });
    const right = figures.some((figure) => figure.direction === direction && Math.abs(figure.seconds * 1000 - Math.abs(skewed.offsetMs)) <= figure.uncertainty * 1000 + 250);
    if (!right) {
        const seen = figures.map((figure) => `${figure.seconds} s ${figure.direction} (±${figure.uncertainty} s)`).join(", ");
        found("silent", "clock skew", `${skewed.source.replace(/ log$/, "")}'s clock was ${skewed.offsetMs} ms off, beyond the allowance, and its log never warned "this instance's clock is ${(Math.abs(skewed.offsetMs) / 1000).toFixed(2)} s ${direction} the storage service's"${seen ? ` (it said: ${seen})` : ""}`);
    }
}

/**
 * A locked row the app needed to write (it refused a status, or its job at rest owes one it does
 * not show) is named to ops exactly once: one `intake.rowRefused` alert for it. None is allowed only
 * when the host logged that the alert did not go through (the webhook failed; the next refusal,
 * after the back-off, sends it); two are a duplicate.
 */
function checkLockedRows(
    world: World,
    intakeSheetId: number,
    requests: readonly AuditedRequest[],
    jobs: readonly JobEntity[],
    alerts: readonly unknown[],
    outputs: readonly AuditedOutput[],
    found: Found,
): void {
    const logLines = outputs.filter((output) => / log$/.test(output.source)).flatMap((output) => output.text.split("\n"));
    const intake = world.sheet(intakeSheetId);
    const statusColumn = intake?.columns.find((column) => column.title === "Status");
    for (const request of requests.filter((candidate) => candidate.locked)) {
        const job = jobs.find((candidate) => Number(candidate.rowKey) === request.rowId);
        const row = intake?.rows.find((candidate) => candidate.id === request.rowId);
        const status = row && statusColumn ? cellText(row, statusColumn.id) : "";
        const owed = job && { done: /^Done$/, rejected: /^Rejected — ./, parked: /^Stalled — ./ }[job.state as "done" | "rejected" | "parked"];
        const refusedLine = logLines.some((line) => line.includes(`intake row ${request.rowId} of site `) && line.includes(" refused "));
        const owesUnwritten = owed !== undefined && !owed.test(status);
        const count = alerts.filter((alert) => {
            const parsed = RowRefusedAlert.safeParse(alert);
            return parsed.success && Number(parsed.data.intakeRowId) === request.rowId;
        }).length;
        if (count > 1) found("duplicates", request.code, `${count} intake.rowRefused alerts for locked intake row ${request.rowId}`);
        if (count === 0 && (refusedLine || owesUnwritten)) {
            const undelivered = logLines.some((line) => line.includes(`the alert that intake row ${request.rowId} refused its status did not go through`));
            if (!undelivered) {
                const why = refusedLine ? "the host logged its refusal" : `its job is ${job!.state} and the row shows ${JSON.stringify(status)}`;
                found("silent", request.code, `locked intake row ${request.rowId} needed a status (${why}), and no intake.rowRefused alert named it`);
            }
        }
        if (!refusedLine && (owesUnwritten || count > 0)) found("silent", request.code, `locked intake row ${request.rowId} ${count > 0 ? "was alerted" : "owes a status"}, but no host log line names its refusal`);
    }
}

/** One sweep interval after a sweep, every approved request has a job or says `Rejected — reason`: a wedged sweep shows here. */
function checkApprovalsAnswered(snapshot: ApprovalSnapshot, requests: readonly AuditedRequest[], found: Found): void {
    const intake = SimSheet.parse(snapshot.intake);
    const status = intake.columns.find((column) => column.title === "Status");
    const withJob = new Set(snapshot.jobRowIds);
    const queued = new Set(snapshot.queuedRowIds ?? snapshot.jobRowIds);
    for (const request of requests.filter((candidate) => !candidate.deleted && !candidate.withdrawn)) {
        const row = intake.rows.find((candidate) => candidate.id === request.rowId);
        const text = row && status ? cellText(row, status.id) : "";
        const answered = /^Rejected — ./.test(text) || (withJob.has(request.rowId) && (text !== "" || request.locked === true || !queued.has(request.rowId)));
        if (!answered) {
            const has = withJob.has(request.rowId) ? "a job row but no status on the intake row" : "no job and no rejection";
            found("invariantFailures", request.code, `one sweep interval after a sweep (faults cleared), approved row ${request.rowId} has ${has} (status ${JSON.stringify(text)})`);
        }
    }
}

/** What the local host answers, without running any function, while it is not running (starting or stopping). */
const HOST_NOT_RUNNING = 503;
const SimWebhooks = z.object({
    webhooks: z.array(z.object({ id: Id, name: z.string(), scopeObjectId: Id, enabled: z.boolean(), status: z.string(), owner: z.string() })),
});

/**
 * With the webhooks on: at rest the app holds exactly one enabled webhook on the intake sheet,
 * named for its site and the host it calls back (whatever was disabled, and however many hosts
 * kept it); every forged callback was refused before it could ask for a sweep (401 for the app's
 * webhook signed with another secret, 403 for a webhook not the app's, or no answer from a host
 * that was down), and no host log line has a sweep asked for by a forged webhook id; every
 * request approved at rest had its job within one safety-net interval, though no sweep was fired.
 */
async function checkWebhooks(simAdminUrl: string, input: AuditedWebhooks, outputs: readonly AuditedOutput[], found: Found): Promise<void> {
    const { webhooks } = SimWebhooks.parse(await (await fetch(new URL("webhooks", simAdminUrl))).json());
    const expectedName = `Sheetwright intake default @ ${input.callbackHost}`;
    const apps = webhooks.filter((hook) => hook.owner === input.appToken && hook.scopeObjectId === input.intakeSheetId);
    const named = apps.filter((hook) => hook.name === expectedName);
    if (apps.length > 1) found("duplicates", "intake webhook", `${apps.length} webhooks of the app on the intake sheet at rest: ${apps.map((hook) => `${hook.id} "${hook.name}" ${hook.status}`).join(", ")}`);
    if (named.length === 0) found("invariantFailures", "intake webhook", `no webhook named "${expectedName}" on the intake sheet at rest (the app's: ${apps.map((hook) => `"${hook.name}"`).join(", ") || "none"})`);
    else if (!named.some((hook) => hook.enabled && hook.status === "ENABLED")) found("invariantFailures", "intake webhook", `the intake webhook is ${named.map((hook) => hook.status).join(", ")} at rest; the keeper re-enables it on the reaper's schedule`);

    // The receiver refuses before it asks for anything: 403 for an id it does not hold as the app's, 401 for one of the app's
    // ids signed with another secret. The app's own id may rightly get 403 too: an instance just restarted, or a webhook
    // Smartsheet has disabled meanwhile (whose callbacks Smartsheet never sends), is not in the receiver's directory
    // (chaos seed 26120404, schedule 142: the forgery came 0.4 s after a restart, the webhook disabled).
    // A host that is stopping (killed mid-schedule) answers 503 itself without running the function, as Azure's front end does.
    for (const forged of input.forged) {
        const refusals = forged.appsOwnId ? [401, 403, HOST_NOT_RUNNING] : [403, HOST_NOT_RUNNING];
        if (forged.status !== null && !refusals.includes(forged.status)) {
            found("invariantFailures", "forged callback", `a callback forged for ${forged.appsOwnId ? "the app's" : "a foreign"} webhook ${forged.webhookId} was answered ${forged.status}, not ${refusals.join(" or ")}: a sweep may have started from it`);
        }
    }
    const forgedIds = new Set(input.forged.filter((forged) => !forged.appsOwnId).map((forged) => forged.webhookId));
    for (const output of outputs.filter((candidate) => candidate.source.endsWith(" log"))) {
        for (const [line, id] of output.text.matchAll(/webhook (\d+): site \S+'s intake sheet changed; its sweep is asked for/g)) {
            if (forgedIds.has(Number(id))) found("invariantFailures", "forged callback", `${output.source}: a sweep was asked for by a forged callback: ${line}`);
        }
    }

    for (const { rowId, jobAfterMs } of input.approvedAtRest) {
        if (jobAfterMs === null) found("invariantFailures", `row ${rowId}`, `approved at rest with the webhook on, it had no job one safety-net interval (${input.safetyNetIntervalMs} ms) later, and no sweep was fired`);
    }
}

/** At most one alert per parking (a job key and its parkedAt); "at least one" is checked with each parked job. */
function checkAlertsPerParking(alerts: readonly unknown[], found: Found): void {
    const perParking = new Map<string, number>();
    for (const alert of alerts) {
        const parsed = ParkAlert.safeParse(alert);
        if (!parsed.success) continue;
        const parking = `${parsed.data.jobKey} parked at ${parsed.data.parkedAt ?? "?"}`;
        perParking.set(parking, (perParking.get(parking) ?? 0) + 1);
    }
    for (const [parking, count] of perParking) if (count > 1) found("duplicates", parking, `${count} alerts for one parking`);
}

type Found = (category: FindingCategory, subject: string, detail: string) => void;

function checkParking(job: JobEntity, key: string, alerts: readonly unknown[], subject: string, found: (category: FindingCategory, subject: string, detail: string) => void): void {
    if (!job.parkReason?.trim()) found("silent", subject, "parked without a reason");
    const alerted = alerts.some((alert) => {
        const parsed = ParkAlert.safeParse(alert);
        return parsed.success && parsed.data.jobKey === key && (!job.parkedAt || !parsed.data.parkedAt || parsed.data.parkedAt === job.parkedAt);
    });
    if (!alerted) found("silent", subject, `parked at ${job.parkedAt ?? "?"} (${job.parkReason ?? "no reason"}), and no alert was received for it`);
}

function checkIntakeStatus(
    world: World,
    intakeSheetId: number,
    request: AuditedRequest,
    job: JobEntity,
    found: (category: FindingCategory, subject: string, detail: string) => void,
): void {
    const intake = world.sheet(intakeSheetId);
    const row = intake?.rows.find((candidate) => candidate.id === request.rowId);
    const statusColumn = intake?.columns.find((column) => column.title === "Status");
    if (!row || !statusColumn) {
        found("invariantFailures", request.code, `intake row ${request.rowId} or its Status column is gone, though the plan deleted neither`);
        return;
    }
    const status = cellText(row, statusColumn.id);
    const expected = { done: /^Done$/, rejected: /^Rejected — ./, parked: /^Stalled — ./, queued: undefined, running: undefined }[job.state];
    if (expected && !expected.test(status)) found("invariantFailures", request.code, `job ${job.state}, but the intake row says ${JSON.stringify(status)}`);
}

async function readJobs(connectionString: string, table: string): Promise<JobEntity[]> {
    const client = TableClient.fromConnectionString(connectionString, table, { allowInsecureConnection: true });
    const jobs: JobEntity[] = [];
    try {
        for await (const entity of client.listEntities({ queryOptions: { filter: "kind eq 'job'" } })) jobs.push(JobEntity.parse(entity));
    } catch (error) {
        if ((error as { statusCode?: number }).statusCode === 404) return [];
        throw error;
    }
    return jobs;
}

function cellText(row: { cells: ReadonlyArray<{ columnId: number; value?: unknown }> }, columnId: number): string {
    const value = row.cells.find((cell) => cell.columnId === columnId)?.value;
    return value === undefined || value === null ? "" : String(value);
}

/** Lookups over the simulator's state. */
export class World {
    constructor(private readonly state: SimState) {}

    get templateFolderId(): number {
        return this.state.templateFolderId;
    }

    get productsFolderId(): number {
        return this.state.productsFolderId;
    }

    /** Whether folder `folderId` is `rootId` or inside it. */
    inTree(folderId: number, rootId: number): boolean {
        const seen = new Set<number>();
        for (let id: number | null = folderId; id !== null && !seen.has(id); id = this.state.folders.find((folder) => folder.id === id)?.parentId ?? null) {
            if (id === rootId) return true;
            seen.add(id);
        }
        return false;
    }

    foldersIn(parentId: number) {
        return this.state.folders.filter((folder) => folder.parentId === parentId);
    }

    sheetsIn(folderId: number): SimSheet[] {
        return this.state.sheets.filter((sheet) => sheet.folderId === folderId);
    }

    sheet(id: number): SimSheet | undefined {
        return this.state.sheets.find((sheet) => sheet.id === id);
    }

    /** The Filing Index rows whose Product Code is `code`. */
    filingRows(filingIndexSheetId: number, code: string) {
        const filing = this.sheet(filingIndexSheetId);
        const codeColumn = filing?.columns.find((column) => column.title === "Product Code");
        if (!filing || !codeColumn) return [];
        return filing.rows.filter((row) => cellText(row, codeColumn.id) === code);
    }

    lineFolder(productsFolderId: number, line: string) {
        return this.foldersIn(productsFolderId).find((folder) => folder.name.trim() === line.trim());
    }
}
