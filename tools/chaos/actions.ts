import { createHmac, randomBytes } from "node:crypto";
import { TableClient } from "@azure/data-tables";
import { HarnessError } from "./hostProcess";
import { OUTSIDE_REFERENCE, type Action, type ConvergenceAction, type Forgery, type Plan, type PersonAction, type ProductRequest, type TemplateEdit } from "./plan";
import { convergenceAction, ConvergenceRecord } from "./convergenceActions";
import type { ScheduleStack } from "./stack";

/** How long a person's action waits for its product's job row before acting anyway. */
const JOB_WAIT_MS = 6_000;

export interface SimSheetView {
    id: number;
    name: string;
    folderId: number;
    columns: Array<{ id: number; title: string; formula?: string }>;
    rows: Array<{ id: number; cells?: Array<{ columnId: number; value?: unknown; formula?: string }> }>;
    summaryFields?: Array<{ id: number; title: string }>;
}
export interface SimView {
    intakeSheetId: number;
    templateFolderId: number;
    productsFolderId: number;
    folders: Array<{ id: number; name: string; parentId: number | null }>;
    sheets: SimSheetView[];
}

/** A template reference outside the template the plan made, as the auditor needs it. */
export interface OutsideReferenceMade {
    variant: "shared" | "otherProduct";
    /** The sheet the template reference points at. */
    sourceSheetId: number;
    /** `otherProduct`: the earlier product's folder, made by the harness (no job of the schedule owns it). */
    productFolderId?: number;
}

/** What the harness knows about a schedule while it runs: the intake rows and what became of them. */
export class ScheduleContext {
    /** Product index → its intake row id. */
    readonly rowIds: number[] = [];
    readonly deletedRows = new Set<number>();
    /** Rows withdrawn (Approved unticked, or the row deleted) before any job existed: no job is owed to them. */
    readonly withdrawnRows = new Set<number>();
    /** Rows locked (the app may not write them) to the end of the schedule. */
    readonly lockedRows = new Set<number>();
    /** Rows whose orchestrations' status the first host cannot read, to the end of the schedule. */
    readonly statusUnreadableRows = new Set<number>();
    /** Template references outside the template the plan made (and to what). */
    readonly outsideReferences: OutsideReferenceMade[] = [];
    /** Callbacks the harness forged: the webhook id they named (the app's own, signed with another secret, or not), and the answer (null: the host was down). */
    readonly forgedCallbacks: Array<{ webhookId: number; appsOwnId: boolean; status: number | null }> = [];
    /** Harness failures during the plan (a switch the stack lacks): the schedule cannot be judged. */
    readonly harnessErrors: string[] = [];
    /** `+<ms> <action>: <outcome>`, for a failure report. */
    readonly journal: string[] = [];
    /** What the convergence's people did and what the applies answered, for the auditor. */
    readonly convergence = new ConvergenceRecord();
    private readonly jobs: TableClient;
    private readonly started = Date.now();

    constructor(
        readonly stack: ScheduleStack,
        readonly plan: Plan,
    ) {
        this.jobs = TableClient.fromConnectionString(stack.storageConnectionString, stack.jobsTable, { allowInsecureConnection: true });
    }

    note(text: string): void {
        this.journal.push(`+${Date.now() - this.started}ms ${text}`);
    }

    async simView(): Promise<SimView> {
        return (await this.stack.simAdmin("GET", "state")) as SimView;
    }

    /** The job row of an intake row, as the Jobs table holds it now; undefined when there is none (or storage did not answer). */
    async job(rowId: number): Promise<Record<string, unknown> | undefined> {
        return this.jobs.getEntity<Record<string, unknown>>(this.stack.settings.INTAKE_SHEET_ID!, String(rowId)).catch(() => undefined);
    }

    /** Every job row of the Jobs table (not its notices, claims or cursor). */
    async jobRows(): Promise<Array<Record<string, unknown>>> {
        const rows: Array<Record<string, unknown>> = [];
        for await (const entity of this.jobs.listEntities<Record<string, unknown>>({ queryOptions: { filter: "kind eq 'job'" } })) rows.push(entity);
        return rows;
    }

    /** Waits (bounded) until the product's job row exists; a person acts on a job in flight. */
    async jobExists(product: number): Promise<boolean> {
        const deadline = Date.now() + JOB_WAIT_MS;
        while (Date.now() < deadline) {
            if (await this.job(this.rowIds[product]!)) return true;
            await sleep(200);
        }
        return false;
    }
}

/** Empties the intake sheet and adds the plan's requests, approved (all but those typed at rest). */
export async function seedIntake(context: ScheduleContext): Promise<void> {
    const view = await context.simView();
    const intake = sheetOf(view, view.intakeSheetId);
    if (intake.rows.length > 0) await context.stack.smartsheet("DELETE", `sheets/${intake.id}/rows?ids=${intake.rows.map((row) => row.id).join(",")}`);
    await addRequests(context, intake, context.plan.products.filter((product) => !product.typedAtRest));
}

/** The requests the plan keeps for the schedule's rest, approved now; their row ids follow the others'. */
export async function typeRequestsAtRest(context: ScheduleContext): Promise<number[]> {
    const view = await context.simView();
    return addRequests(context, sheetOf(view, view.intakeSheetId), context.plan.products.filter((product) => product.typedAtRest));
}

async function addRequests(context: ScheduleContext, intake: SimSheetView, products: readonly ProductRequest[]): Promise<number[]> {
    if (products.length === 0) return [];
    const column = (title: string) => columnId(intake, title);
    const answer = await context.stack.smartsheet<{ result: Array<{ id: number }> }>(
        "POST",
        `sheets/${intake.id}/rows`,
        products.map((product) => ({
            toBottom: true,
            cells: [
                { columnId: column("Product Code"), value: product.code },
                { columnId: column("Product Name"), value: product.name },
                { columnId: column("Product Line"), value: product.line },
                { columnId: column("Approved"), value: true },
                ...(product.typedStatus ? [{ columnId: column("Status"), value: product.typedStatus }] : []),
            ],
        })),
    );
    const rowIds = answer.result.map((row) => row.id);
    context.rowIds.push(...rowIds);
    return rowIds;
}

/** Carries out one step of the plan. Failures are part of chaos (the host may be down): noted, not thrown. */
export async function perform(context: ScheduleContext, action: Action): Promise<void> {
    const label = describe(action);
    try {
        const outcome = await run(context, action);
        context.note(`${label}: ${outcome ?? "ok"}`);
    } catch (error) {
        context.note(`${label}: failed (${error instanceof Error ? error.message : String(error)})`);
        if (error instanceof HarnessError) context.harnessErrors.push(`${label}: ${error.message}`);
    }
}

async function run(context: ScheduleContext, action: Action): Promise<string | void> {
    const { stack } = context;
    switch (action.kind) {
        case "sweep": {
            // Overlapping sweeps run on both hosts when there are two: two instances, as in production.
            const hosts = action.overlapping ? [stack.host, stack.peer ?? stack.host] : [stack.host];
            await Promise.all(hosts.map((host) => host.fire("intakeSweep")));
            return;
        }
        case "reaper":
            await (action.host === 1 && stack.peer ? stack.peer : stack.host).fire("reaper");
            return;
        case "lockIntakeRow": {
            const rowId = context.rowIds[action.product]!;
            // A person deleted the row earlier in the schedule: there is nothing left to lock.
            if (context.deletedRows.has(rowId)) return `row ${rowId} is deleted; nothing to lock`;
            const view = await context.simView();
            await stack.simAdmin("POST", "lockedRows", { sheetId: view.intakeSheetId, rowIds: [rowId], locked: true });
            context.lockedRows.add(rowId);
            return `row ${rowId} locked`;
        }
        case "webhookFault":
            stack.webhook.misbehave(action.mode, action.forMs);
            return;
        case "failStatusReads": {
            const rowId = context.rowIds[action.product]!;
            // The app's instance ids are provision-<intake sheet>-<row>-a<attempt>: every attempt of the job.
            await stack.host.failStatusReads([`provision-${stack.settings.INTAKE_SHEET_ID}-${rowId}-`]);
            context.statusUnreadableRows.add(rowId);
            return `status reads of row ${rowId}'s orchestrations fail on the first host`;
        }
        case "faults":
            await stack.simAdmin("POST", "faults", { rules: action.rules });
            return;
        case "duplicateMessages":
            if (!(await context.jobExists(action.product))) return "no job yet; sent anyway";
            for (let copy = 0; copy < action.copies; copy += 1) await stack.sendProvisionMessage(context.rowIds[action.product]!);
            return;
        case "killHost":
            await stack.host.kill();
            await sleep(action.downMs);
            await stack.host.start();
            return;
        case "restartAzurite":
            await stack.restartAzurite(action.downMs);
            return;
        case "unparkRacingReaper":
            return unparkRacingReaper(context);
        case "callbackFaults":
            await stack.simAdmin("POST", "webhookFaults", { rules: action.rules });
            return;
        case "disableIntakeWebhook": {
            const hook = await intakeWebhook(context);
            if (!hook) return "the app has no intake webhook yet; nothing to disable";
            await stack.simAdmin("POST", "webhookStatus", { webhookId: hook.id, status: action.status });
            return `webhook ${hook.id} now ${action.status}`;
        }
        case "forgedCallback":
            return forgeCallback(context, action.forgery);
        case "changeTemplate":
        case "convergeApply":
        case "editTemplateAgain":
        case "customerEditsProduct":
        case "unparkDecision":
            return convergenceAction(context, action as ConvergenceAction);
        default:
            return act(context, action);
    }
}

/** The webhooks on the intake sheet as Smartsheet holds them (every owner's). */
export async function intakeWebhooks(context: ScheduleContext): Promise<Array<{ id: number; name: string; status: string; enabled: boolean; owner: string }>> {
    const intakeSheetId = Number(context.stack.settings.INTAKE_SHEET_ID);
    const { webhooks } = (await context.stack.simAdmin("GET", "webhooks")) as { webhooks: Array<{ id: number; name: string; status: string; enabled: boolean; owner: string; scopeObjectId: number }> };
    return webhooks.filter((hook) => hook.scopeObjectId === intakeSheetId);
}

async function intakeWebhook(context: ScheduleContext): Promise<{ id: number } | undefined> {
    return (await intakeWebhooks(context)).find((hook) => hook.owner === context.stack.appToken);
}

/**
 * A callback in Smartsheet's shape that Smartsheet did not send, posted to the receiver with the
 * function key (which an attacker may have read from a log or a URL): the signature is the only
 * thing between it and a sweep. `badSignature` uses the app's own webhook id (when it has one yet),
 * `unknownWebhook` an id Smartsheet never gave.
 */
async function forgeCallback(context: ScheduleContext, forgery: Forgery): Promise<string> {
    const { stack } = context;
    const own = forgery === "badSignature" ? await intakeWebhook(context) : undefined;
    const webhookId = own?.id ?? FORGED_WEBHOOK_ID_BASE + (context.plan.seed % 1_000_000);
    const now = new Date().toISOString();
    const body = JSON.stringify({
        nonce: randomBytes(8).toString("hex"),
        timestamp: now,
        webhookId,
        scope: "sheet",
        scopeObjectId: Number(stack.settings.INTAKE_SHEET_ID),
        events: [{ objectType: "sheet", eventType: "updated", id: Number(stack.settings.INTAKE_SHEET_ID), userId: 1, timestamp: now }],
    });
    const signature = createHmac("sha256", randomBytes(16).toString("hex")).update(body).digest("hex");
    let status: number | null = null;
    try {
        const answer = await fetch(`${stack.host.url}/api/intake/webhook?code=${encodeURIComponent(stack.functionKey)}`, {
            method: "POST",
            headers: { "content-type": "application/json", "smartsheet-hmac-sha256": signature },
            body,
            signal: AbortSignal.timeout(5_000),
        });
        status = answer.status;
    } catch {
        status = null;
    }
    context.forgedCallbacks.push({ webhookId, appsOwnId: own !== undefined, status });
    return `${forgery}${own ? ` (the app's webhook ${webhookId})` : ` (webhook ${webhookId}, not the app's)`} answered ${status ?? "nothing (host down)"}`;
}

/** Forged callbacks name webhooks from here up: ids Smartsheet's 16 digits never take. */
const FORGED_WEBHOOK_ID_BASE = 900_000_000;

async function unparkRacingReaper(context: ScheduleContext): Promise<string> {
    const { stack } = context;
    const listing = await stack.api("jobs?state=parked");
    if (!listing.ok) return `listing parked jobs answered ${listing.status}`;
    const keys = ((await listing.json()) as { jobs: Array<{ jobKey: string }> }).jobs.map((job) => job.jobKey);
    const answers = await Promise.all(
        keys.map(async (key) => {
            const [unpark] = await Promise.all([
                stack.api(`jobs/${key}/unpark`, { method: "POST", body: JSON.stringify({ by: "chaos", note: "racing the reaper" }) }),
                stack.host.fire("reaper"),
            ]);
            return `${key} ${unpark.status}`;
        }),
    );
    return keys.length ? `unparked ${answers.join(", ")}` : "nothing parked";
}

async function act(context: ScheduleContext, action: PersonAction): Promise<string | void> {
    const { stack } = context;
    const view = await context.simView();
    if (action.kind === "editTemplate") return editTemplate(context, view, action.edit);
    const intake = sheetOf(view, view.intakeSheetId);
    const rowId = context.rowIds[action.product]!;
    const waited = (await context.jobExists(action.product)) ? "" : "no job yet; acted anyway";
    const update = (title: string, value: string | boolean) =>
        stack.smartsheet("PUT", `sheets/${intake.id}/rows`, [{ id: rowId, cells: [{ columnId: columnId(intake, title), value }] }]);
    switch (action.kind) {
        case "deleteIntakeRow": {
            const result = await stack.smartsheet("DELETE", `sheets/${intake.id}/rows?ids=${rowId}`).then(
                () => "",
                (error: Error) => `the delete answered an error (${error.message})`,
            );
            // The simulator may have made the delete although it answered an error: its state decides.
            const after = await context.simView();
            if (!sheetOf(after, after.intakeSheetId).rows.some((row) => row.id === rowId)) {
                context.deletedRows.add(rowId);
                // Deleted before it had a job: withdrawn, so its product code was never taken (chaos seed 2625852924).
                if (waited) context.withdrawnRows.add(rowId);
            }
            return [waited, result, context.deletedRows.has(rowId) ? "deleted" : "still there"].filter(Boolean).join("; ");
        }
        case "editProductName":
            await update("Product Name", action.name);
            return waited || undefined;
        case "untickApproved":
            await update("Approved", false);
            if (waited) context.withdrawnRows.add(rowId);
            return waited || undefined;
        case "typeStatus":
            await update("Status", action.text);
            return waited || undefined;
    }
}

/** A person edits the template while products are being copied from it. */
async function editTemplate(context: ScheduleContext, view: SimView, edit: TemplateEdit): Promise<string> {
    const { stack } = context;
    const template = (name: string) => {
        const found = view.sheets.find((sheet) => sheet.folderId === view.templateFolderId && sheet.name === name);
        if (!found) throw new Error(`the template has no sheet "${name}"`);
        return found;
    };
    if (edit === "insertRows") {
        const approvals = template("Approvals");
        await stack.smartsheet("POST", `sheets/${approvals.id}/rows`, [
            { toTop: true, cells: [{ columnId: columnId(approvals, "Document"), value: "DOC-006" }, { columnId: columnId(approvals, "Change Count"), formula: "=COUNTIF({Change Log Document}, Document@row)" }] },
        ]);
        return "a row with a cross-sheet formula inserted into Approvals";
    }
    if (edit === "referenceShared" || edit === "referenceOtherProduct") return referOutsideTemplate(context, view, template(OUTSIDE_REFERENCE.holder), edit);
    const suppliers = template("Suppliers");
    const specifications = template("Specifications");
    const value = columnId(specifications, "Value");
    await stack.smartsheet("POST", `sheets/${suppliers.id}/crosssheetreferences`, {
        name: "Specification Values",
        sourceSheetId: specifications.id,
        startColumnId: value,
        endColumnId: value,
    });
    const row = suppliers.rows[0];
    if (!row) throw new Error("the Suppliers template sheet has no rows");
    await stack.smartsheet("PUT", `sheets/${suppliers.id}/rows`, [
        { id: row.id, cells: [{ columnId: columnId(suppliers, "Lead Time (days)"), formula: "=COUNT({Specification Values})" }] },
    ]);
    return "Suppliers now references Specifications";
}

/**
 * A template sheet with no reference of its own gets one to a sheet outside the template folder,
 * and a formula that uses it: `referenceShared` points it at the Filing Index (a shared sheet: the
 * product must end done with it intact); `referenceOtherProduct` at a sheet of an earlier product,
 * as a template built from a product would (a product copied after it must park, naming sheet and
 * reference). The earlier product is one the harness makes here, as it was before the app ran:
 * a folder under a product line with one product-named sheet.
 */
async function referOutsideTemplate(context: ScheduleContext, view: SimView, holder: SimSheetView, edit: "referenceShared" | "referenceOtherProduct"): Promise<string> {
    const { stack } = context;
    let outside: SimSheetView;
    let productFolderId: number | undefined;
    if (edit === "referenceShared") {
        const filing = view.sheets.find((sheet) => sheet.folderId !== view.templateFolderId && sheet.name === "Filing Index");
        if (!filing) throw new Error("the simulator has no Filing Index sheet outside the template");
        outside = filing;
    } else {
        const line = view.folders.find((folder) => folder.parentId === view.productsFolderId && folder.name === "Industrial");
        if (!line) throw new Error("the simulator has no Industrial product-line folder");
        const specifications = view.sheets.find((sheet) => sheet.folderId === view.templateFolderId && sheet.name === "Specifications");
        if (!specifications) throw new Error("the template has no sheet \"Specifications\"");
        const folder = await stack.smartsheet<{ result: { id: number } }>("POST", `folders/${line.id}/folders`, { name: EARLIER_PRODUCT });
        productFolderId = folder.result.id;
        // Noted before the copy: a folder of the harness is never an orphan, whatever becomes of the copy.
        context.outsideReferences.push({ variant: "otherProduct", sourceSheetId: 0, productFolderId });
        const copy = await stack.smartsheet<{ result: { id: number } }>("POST", `sheets/${specifications.id}/copy?include=data`, {
            destinationType: "folder",
            destinationId: productFolderId,
            newName: `${EARLIER_PRODUCT} - Specifications`,
        });
        outside = sheetOf(await context.simView(), copy.result.id);
    }
    const column = outside.columns[0]!.id;
    await stack.smartsheet("POST", `sheets/${holder.id}/crosssheetreferences`, { name: OUTSIDE_REFERENCE.name, sourceSheetId: outside.id, startColumnId: column, endColumnId: column });
    const made = { variant: edit === "referenceShared" ? ("shared" as const) : ("otherProduct" as const), sourceSheetId: outside.id, ...(productFolderId ? { productFolderId } : {}) };
    const noted = context.outsideReferences.findIndex((reference) => reference.productFolderId !== undefined && reference.productFolderId === productFolderId);
    if (noted >= 0) context.outsideReferences[noted] = made;
    else context.outsideReferences.push(made);
    const row = holder.rows[0];
    if (!row) throw new Error(`the ${holder.name} template sheet has no rows`);
    await stack.smartsheet("PUT", `sheets/${holder.id}/rows`, [
        { id: row.id, cells: [{ columnId: columnId(holder, OUTSIDE_REFERENCE.column), formula: `=COUNT({${OUTSIDE_REFERENCE.name}})` }] },
    ]);
    return `${holder.name} now references "${outside.name}" (${outside.id}), ${edit === "referenceShared" ? "a shared sheet" : "a sheet of an earlier product"}`;
}

/** The earlier product a template was built from (its code is the Filing Index's seeded row). */
const EARLIER_PRODUCT = "IND-0999 Legacy Pump";

function sheetOf(view: SimView, id: number): SimSheetView {
    const sheet = view.sheets.find((candidate) => candidate.id === id);
    if (!sheet) throw new Error(`sheet ${id} is not in the simulator`);
    return sheet;
}

function columnId(sheet: SimSheetView, title: string): number {
    const column = sheet.columns.find((candidate) => candidate.title === title);
    if (!column) throw new Error(`sheet "${sheet.name}" has no column "${title}"`);
    return column.id;
}

export function describe(action: Action): string {
    const { kind, ...details } = action;
    const text = JSON.stringify(details);
    return text === "{}" ? kind : `${kind} ${text}`;
}

export function sheetOfView(view: SimView, id: number): SimSheetView {
    return sheetOf(view, id);
}

export function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
}
