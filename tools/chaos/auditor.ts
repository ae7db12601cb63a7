import { TableClient } from "@azure/data-tables";
import { z } from "zod";
import { expectedNames } from "./composedNames";
import { FORGED_LINE_MARKER } from "./plan";

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
    /** A host's clock was off by more than the app allows: some host log line must warn of the skew, with its figure. */
    skewBeyondAllowanceMs?: number;
    approvals?: ApprovalSnapshot;
}

export interface AuditResult {
    findings: Finding[];
    states: Record<"done" | "parked" | "rejected" | "open", number>;
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
type SimSheet = z.infer<typeof SimSheet>;
const SimState = z.object({
    intakeSheetId: Id,
    templateFolderId: Id,
    productsFolderId: Id,
    filingIndexSheetId: Id,
    folders: z.array(z.object({ id: Id, name: z.string(), parentId: Id.nullable() })),
    sheets: z.array(SimSheet),
});
type SimState = z.infer<typeof SimState>;

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
});
type JobEntity = z.infer<typeof JobEntity>;

const ParkAlert = z.object({ event: z.literal("job.parked"), jobKey: z.string(), parkedAt: z.string().optional() });
const CallLog = z.object({ log: z.array(z.object({ at: z.string(), token: z.string().optional(), op: z.string() })) });

/**
 * Characters no terminal or log line may receive from customer text: C0 and C1 controls (ESC,
 * BEL, CR…; tab allowed), bidi controls, zero-width and other invisible format characters. A zero
 * width joiner between two pictographs (👩‍🔬) is part of an emoji, not hidden text.
 */
const RAW_CONTROL = /[\u0000-\u0008\u000A-\u001F\u007F-\u009F\u061C\u200B\u200C\u200E\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]|(?<!\p{Extended_Pictographic}\uFE0F?)\u200D|\u200D(?!\p{Extended_Pictographic})/u;

export async function audit(input: AuditInput): Promise<AuditResult> {
    const state = SimState.parse(await (await fetch(new URL("state", input.simAdminUrl))).json());
    const jobs = await readJobs(input.storageConnectionString, input.jobsTable);
    const findings: Finding[] = [];
    const found = (category: FindingCategory, subject: string, detail: string) => findings.push({ category, subject, detail });
    if (input.rateLimit) await checkRateWindows(input.simAdminUrl, input.rateLimit, found);
    for (const output of input.outputs ?? []) checkInert(output, found);
    if (input.skewBeyondAllowanceMs !== undefined) checkSkewWarned(input.skewBeyondAllowanceMs, input.outputs ?? [], found);
    if (input.approvals) checkApprovalsAnswered(input.approvals, input.requests, found);
    checkAlertsPerParking(input.alerts, found);
    const world = new World(state);
    const templates = world.sheetsIn(state.templateFolderId);
    const templateNames = templates.map((sheet) => sheet.name);
    const states = { done: 0, parked: 0, rejected: 0, open: 0 };

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
        if ((job.state === "queued" || job.state === "running") && unreadable.has(Number(job.rowKey))) {
            // Its status cannot be read, so no one can tell whether it still runs: it may stay open; the others may not.
            states.open += 1;
            continue;
        }
        if (job.state === "queued" || job.state === "running") {
            states.open += 1;
            found("lost", subject, `still ${job.state} when the stack was idle`);
            continue;
        }
        states[job.state] += 1;
        if (job.state === "parked") checkParking(job, key, input.alerts, subject, found);
        if (job.state === "rejected") continue;
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
    }

    for (const line of world.foldersIn(state.productsFolderId)) {
        for (const sheet of world.sheetsIn(line.id)) found("orphans", line.name, `sheet "${sheet.name}" (${sheet.id}) directly in the line folder`);
        for (const folder of world.foldersIn(line.id)) {
            const names = owned.get(folder.id);
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
    return { findings, states };
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

/** Every `{Reference}` in the sheet's cell, column and summary formulas must lead to one of `own`. */
function foreignFormulas(sheet: SimSheet, own: ReadonlySet<number>, world: World): string[] {
    const formulas = [
        ...sheet.columns.flatMap((column) => (column.formula ? [column.formula] : [])),
        ...sheet.rows.flatMap((row) => row.cells.flatMap((cell) => (cell.formula ? [cell.formula] : []))),
        ...sheet.summaryFields.flatMap((field) => (field.formula ? [field.formula] : [])),
    ];
    const problems = new Set<string>();
    for (const formula of formulas) {
        for (const [, name] of formula.matchAll(/\{([^}]+)\}/g)) {
            const reference = sheet.crossSheetReferences.find((candidate) => candidate.name === name);
            if (!reference) problems.add(`"${sheet.name}": formula ${formula} uses {${name}}, which is no reference of the sheet`);
            else if (!own.has(reference.sourceSheetId)) {
                const source = world.sheet(reference.sourceSheetId);
                problems.add(`"${sheet.name}": {${name}} points at "${source?.name ?? "a deleted sheet"}" (${reference.sourceSheetId}), not at the product's own sheets`);
            }
        }
    }
    return [...problems];
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

function checkSkewWarned(offsetMs: number, outputs: readonly AuditedOutput[], found: Found): void {
    // A word "skew", not the setting MAX_CLOCK_SKEW_SECONDS a host may print among its settings.
    const warned = outputs.some((output) => output.text.split("\n").some((line) => /\bskew(ed)?\b/i.test(line) && /\d/.test(line)));
    if (!warned) found("silent", "clock skew", `a host's clock was ${offsetMs} ms off, beyond the allowance, and no log line warned of the skew with its figure`);
}

/** One sweep interval after a sweep, every approved request has a job or says `Rejected — reason`: a wedged sweep shows here. */
function checkApprovalsAnswered(snapshot: ApprovalSnapshot, requests: readonly AuditedRequest[], found: Found): void {
    const intake = SimSheet.parse(snapshot.intake);
    const status = intake.columns.find((column) => column.title === "Status");
    const withJob = new Set(snapshot.jobRowIds);
    for (const request of requests.filter((candidate) => !candidate.deleted && !candidate.withdrawn)) {
        const row = intake.rows.find((candidate) => candidate.id === request.rowId);
        const text = row && status ? cellText(row, status.id) : "";
        const answered = /^Rejected — ./.test(text) || (withJob.has(request.rowId) && (text !== "" || request.locked === true));
        if (!answered) {
            const has = withJob.has(request.rowId) ? "a job row but no status on the intake row" : "no job and no rejection";
            found("invariantFailures", request.code, `one sweep interval after a sweep (faults cleared), approved row ${request.rowId} has ${has} (status ${JSON.stringify(text)})`);
        }
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
class World {
    constructor(private readonly state: SimState) {}

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
