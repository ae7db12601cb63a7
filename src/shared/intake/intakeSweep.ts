import { z } from "zod";
import { currentInstanceId, formatJobKey, type JobKey } from "../jobs/JobRow";
import {
    JobConcurrencyError,
    JobExistsError,
    JobStateConflictError,
    readOrReport,
    reportInvalidJobs,
    type InvalidJob,
    type StoredJob,
} from "../jobs/JobStore";
import { JobLife } from "../jobs/jobLife";
import { instanceIdFor } from "../jobs/instanceIds";
import { cleanText, composeProductNames, NameDoesNotFitError } from "../naming/productNames";
import type { Orchestrations } from "../orchestration/Orchestrations";
import type { Blueprint } from "../provisioning/Blueprint";
import { prepareBlueprint } from "../provisioning/blueprintSource";
import type { ProvisioningDeps } from "../provisioning/ProvisioningDeps";
import { columnIdsByTitle } from "../smartsheet/columns";
import type { Cell, Sheet } from "../smartsheet/model";
import type { RowUpdate } from "../smartsheet/SmartsheetPort";
import { IntakeColumns, IntakeStatus } from "../intakeRow/intakeStatus";

export interface SweepDeps extends ProvisioningDeps {
    orchestrations: Orchestrations;
    /** Sends the key-only provisioning message for a job. */
    enqueue(key: JobKey): Promise<void>;
}

export interface SweepReport {
    approvedRows: number;
    queued: string[];
    rejected: string[];
    requeued: string[];
    statusesWritten: number;
    smartsheetCalls: number;
}

/** One intake row's request, as the customer typed it; parsing it is the validation. */
export const IntakeRequest = z.object({
    productCode: z
        .string()
        .trim()
        .min(1, "Product Code is missing")
        .pipe(
            z
                .string()
                .max(20, "Product Code is longer than 20 characters")
                .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "Product Code may hold only letters, digits, '.', '_' and '-'"),
        ),
    productName: z
        .string()
        .transform(cleanText)
        .pipe(
            z
                .string()
                .min(1, "Product Name is missing")
                .max(200, "Product Name is longer than 200 characters")
                .regex(/[\p{L}\p{N}]/u, "Product Name has no letters or digits"),
        ),
    productLine: z.string().trim().min(1, "Product Line is missing"),
});
export type IntakeRequest = z.infer<typeof IntakeRequest>;

interface IntakeRow {
    rowId: number;
    rowNumber: number;
    code: string;
    name: string;
    line: string;
    approved: boolean;
    status: string;
}

/**
 * Turns approved intake rows that have no job yet — at any age — into job rows and key-only
 * messages, and rows with bad data into rejected jobs that say why; nothing is created in
 * Smartsheet for either. Heals queued jobs whose message was lost, and writes `Done` over a
 * status cell that says otherwise once a job can no longer move. Costs a handful of
 * Smartsheet calls per sweep, not per product: the intake sheet (paged), the product-line
 * folders, the template listing, and one batched status write.
 */
export async function sweepIntake(deps: SweepDeps): Promise<SweepReport> {
    const smartsheet = deps.smartsheet.withOwnTally();
    const intakeSheetId = deps.config.INTAKE_SHEET_ID;
    const pk = String(intakeSheetId);

    const sheet = await smartsheet.getSheet(intakeSheetId, { pageSize: 500 });
    const columns = intakeColumns(sheet);
    const rows = sheet.rows.map((row) => readIntakeRow(row.id, row.rowNumber, row.cells, columns));
    const approved = rows.filter((row) => row.approved);

    const lines = new Map<string, number>();
    for (const folder of await smartsheet.listFolderChildren(deps.config.PRODUCTS_FOLDER_ID, ["folders"])) {
        if (folder.resourceType === "folder" && !lines.has(folder.name.trim())) lines.set(folder.name.trim(), folder.id);
    }
    const blueprint = await prepareBlueprint(deps, smartsheet, deps.config.TEMPLATE_FOLDER_ID);
    const templates = blueprint.sheets.map((template) => template.name);

    // The Jobs table decides which rows have a job, never the Status a customer may have typed.
    // (Point reads of the approved rows for now; a cursor will narrow them.)
    const invalid: InvalidJob[] = [];
    const jobs = new Map<number, StoredJob | undefined>();
    const jobOf = async (row: IntakeRow) => {
        if (!jobs.has(row.rowId)) {
            const key = { pk, rk: String(row.rowId) };
            jobs.set(row.rowId, await readOrReport(() => deps.jobs.get(key), key, invalid));
        }
        return jobs.get(row.rowId);
    };
    for (const row of approved) await jobOf(row);
    // No job yet (a row whose job does not parse has one), or a rejected one to look at again.
    const candidates = approved.filter((row) => {
        const state = jobs.get(row.rowId)?.row.state;
        return state === undefined ? !invalid.some((job) => job.jobKey === formatJobKey({ pk, rk: String(row.rowId) })) : state === "rejected";
    });

    // A code belongs to the row whose job holds it (approved or not: unticking cancels nothing);
    // among new rows, the first approved row with a code wins it.
    const codesTaken = new Map<string, number>();
    const wanted = new Set(candidates.map((row) => row.code));
    for (const row of rows.filter((candidate) => candidate.approved || (candidate.code && wanted.has(candidate.code)))) {
        const stored = await jobOf(row);
        if (stored && stored.row.state !== "rejected") codesTaken.set(stored.row.productCode, row.rowId);
    }
    // A job keeps its code when its intake row is deleted: the Jobs table, not the sheet, says who holds it.
    for (const code of wanted) {
        if (!code || codesTaken.has(code)) continue;
        const holder = await deps.jobs.holderOfCode(pk, code);
        if (holder !== undefined) codesTaken.set(code, Number(holder));
    }

    const report: SweepReport = { approvedRows: approved.length, queued: [], rejected: [], requeued: [], statusesWritten: 0, smartsheetCalls: 0 };
    const statusWrites = new Map<number, string>();
    const setStatus = (row: IntakeRow, status: string) => {
        if (row.status !== status) statusWrites.set(row.rowId, status);
    };
    const toSend: JobKey[] = [];
    const now = deps.now().toISOString();

    // A final status cannot move any more, so writing it races with nobody. A queued, running or
    // parked job's cell is its steps' business: the sweep writing it could land on a later stage.
    for (const row of approved) {
        const state = jobs.get(row.rowId)?.row.state;
        if (state === "done") setStatus(row, IntakeStatus.done);
    }
    // Unticking Approved cancels nothing, so an unticked row may hold a finished job whose status
    // someone typed over. (Rows already saying "Done" are left unread: nothing to repair there.)
    for (const row of rows.filter((candidate) => !candidate.approved && candidate.status !== "" && candidate.status !== IntakeStatus.done)) {
        const job = (await jobOf(row))?.row;
        if (job?.state === "done") setStatus(row, IntakeStatus.done);
        if (job?.state === "rejected") setStatus(row, IntakeStatus.rejected(job.rejectReason ?? "invalid request"));
    }

    for (const row of [...candidates].sort((a, b) => a.rowNumber - b.rowNumber)) {
        const key = { pk, rk: String(row.rowId) };
        const jobKey = formatJobKey(key);
        const stored = jobs.get(row.rowId);
        const verdict = validate(row, lines, codesTaken, templates);
        if (!verdict.ok) {
            const status = IntakeStatus.rejected(verdict.reason);
            const written = !stored
                ? await createOrKeep(deps, { ...baseRow(key, row, now, templates, blueprint, columns), state: "rejected", rejectReason: verdict.reason, intakeStatus: status })
                : stored.row.rejectReason === verdict.reason || (await replaceOrKeep(deps, stored, { ...stored.row, rejectReason: verdict.reason, intakeStatus: status }));
            if (!written) continue;
            deps.log.warn(`job ${jobKey} rejected: ${verdict.reason}`);
            setStatus(row, status);
            report.rejected.push(jobKey);
            continue;
        }

        const request = verdict.request;
        const attempt = stored ? stored.row.attempt + 1 : 1;
        const job = {
            ...baseRow(key, row, now, templates, blueprint, columns),
            productCode: request.productCode,
            productName: request.productName,
            productLine: request.productLine,
            lineFolderId: lines.get(request.productLine),
            state: "queued" as const,
            attempt,
            instanceId: instanceIdFor(key, attempt),
            intakeStatus: IntakeStatus.queued,
        };
        if (stored) {
            if (!(await replaceOrKeep(deps, stored, job))) continue;
            deps.log.info(`job ${jobKey} rejected → queued (the intake row was corrected)`);
        } else {
            if (!(await createOrKeep(deps, job))) continue;
            deps.log.info(`job ${jobKey} new → queued (${request.productCode} ${request.productName})`);
        }
        codesTaken.set(request.productCode, row.rowId);
        toSend.push(key);
        setStatus(row, IntakeStatus.queued);
        report.queued.push(jobKey);
    }

    // Statuses first, messages after: a job can only start once its Queued is written, so a
    // fast job's later status is never overwritten. If this write fails nothing is sent; the
    // next sweep finds the jobs queued with no orchestration and sends their messages then.
    const updates: RowUpdate[] = [...statusWrites].map(([rowId, status]) => ({
        id: rowId,
        cells: [{ columnId: columns.status, value: status }],
    }));
    for (let start = 0; start < updates.length; start += 500) {
        await smartsheet.updateRows(intakeSheetId, updates.slice(start, start + 500));
    }
    for (const key of toSend) await deps.enqueue(key);

    // A crash between writing a job and sending its message leaves it queued with no instance.
    const queuedJobs = await deps.jobs.listActive(pk, { states: ["queued"] });
    invalid.push(...queuedJobs.invalid.filter((job) => !invalid.some((known) => known.jobKey === job.jobKey)));
    for (const job of queuedJobs.found) {
        const key = { pk, rk: job.row.intakeRowId };
        if (report.queued.includes(formatJobKey(key))) continue;
        if (await deps.orchestrations.status(currentInstanceId(job.row))) continue;
        await deps.enqueue(key);
        deps.log.info(`job ${formatJobKey(key)} queued with no orchestration: message sent again`);
        report.requeued.push(formatJobKey(key));
    }
    reportInvalidJobs(deps.log, invalid, "intake sweep");

    report.statusesWritten = updates.length;
    report.smartsheetCalls = smartsheet.calls().total;
    deps.log.info(
        `intake sweep: ${approved.length} approved rows, ${report.queued.length} queued, ${report.rejected.length} rejected, ` +
            `${report.requeued.length} re-sent, ${report.smartsheetCalls} Smartsheet calls`,
    );
    return report;
}

type Verdict = { ok: true; request: IntakeRequest } | { ok: false; reason: string };

function validate(row: IntakeRow, lines: Map<string, number>, codesTaken: Map<string, number>, templates: string[]): Verdict {
    const parsed = IntakeRequest.safeParse({ productCode: row.code, productName: row.name, productLine: row.line });
    if (!parsed.success) return { ok: false, reason: parsed.error.issues.map((issue) => issue.message).join("; ") };
    const request = parsed.data;
    const owner = codesTaken.get(request.productCode);
    if (owner !== undefined && owner !== row.rowId) {
        return { ok: false, reason: `Product Code ${request.productCode} is already provisioned by another intake row` };
    }
    if (!lines.has(request.productLine)) {
        return { ok: false, reason: `Product Line "${request.productLine}" has no folder under Products (known: ${[...lines.keys()].join(", ")})` };
    }
    try {
        composeProductNames(request.productCode, request.productName, templates);
    } catch (error) {
        if (error instanceof NameDoesNotFitError) return { ok: false, reason: error.message };
        throw error;
    }
    return { ok: true, request };
}

/** Writes a new job row; false when a concurrent sweep got there first (its row and status stand). */
async function createOrKeep(deps: SweepDeps, row: Parameters<SweepDeps["jobs"]["create"]>[0]): Promise<boolean> {
    try {
        await deps.jobs.create(row);
        return true;
    } catch (error) {
        if (error instanceof JobExistsError) return false;
        throw error;
    }
}

/** Replaces a rejected job's row; false when someone else wrote it since it was read. */
async function replaceOrKeep(deps: SweepDeps, stored: StoredJob, next: Parameters<SweepDeps["jobs"]["create"]>[0]): Promise<boolean> {
    try {
        await deps.jobs.replace(stored, next, { from: JobLife.reconsider.from });
        return true;
    } catch (error) {
        if (error instanceof JobConcurrencyError || error instanceof JobStateConflictError) return false;
        throw error;
    }
}

function baseRow(key: JobKey, row: IntakeRow, now: string, templates: string[], blueprint: Blueprint, columns: ColumnIds) {
    return {
        intakeSheetId: key.pk,
        intakeRowId: key.rk,
        productCode: row.code || "(none)",
        productName: row.name,
        productLine: row.line,
        attempt: 1,
        recoveries: 0,
        createdAt: now,
        lastProgressAt: now,
        blueprintVersion: blueprint.version,
        templates,
        intakeStatusColumnId: columns.status,
        intakeFolderColumnId: columns.folder,
    };
}

type ColumnIds = Record<keyof typeof IntakeColumns, number>;

function intakeColumns(sheet: Sheet): ColumnIds {
    const { ids, missing } = columnIdsByTitle(sheet, IntakeColumns);
    if (missing.length > 0) {
        throw new Error(`The intake sheet ${sheet.id} has no ${missing.map((title) => `"${title}"`).join(", ")} column; add it back.`);
    }
    return ids as ColumnIds;
}

function readIntakeRow(rowId: number, rowNumber: number, cells: Cell[], columns: ColumnIds): IntakeRow {
    const value = (columnId: number) => cells.find((cell) => cell.columnId === columnId)?.value;
    const text = (columnId: number) => {
        const found = value(columnId);
        return found === undefined ? "" : String(found).trim();
    };
    return {
        rowId,
        rowNumber,
        code: text(columns.productCode),
        name: text(columns.productName),
        line: text(columns.productLine),
        approved: value(columns.approved) === true,
        status: text(columns.status),
    };
}
