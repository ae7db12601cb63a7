import { TableClient } from "@azure/data-tables";
import { z } from "zod";
import { expectedNames } from "./composedNames";

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
}

export interface AuditInput {
    simAdminUrl: string;
    storageConnectionString: string;
    jobsTable: string;
    requests: readonly AuditedRequest[];
    alerts: readonly unknown[];
    /** The plan made Smartsheet refuse for good (403/1004) at some point: parking is a fair outcome. */
    permanentFaultsPlanned: boolean;
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

export async function audit(input: AuditInput): Promise<AuditResult> {
    const state = SimState.parse(await (await fetch(new URL("state", input.simAdminUrl))).json());
    const jobs = await readJobs(input.storageConnectionString, input.jobsTable);
    const findings: Finding[] = [];
    const found = (category: FindingCategory, subject: string, detail: string) => findings.push({ category, subject, detail });
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
        if (!request.deleted) checkIntakeStatus(world, state.intakeSheetId, request, job, found);
        else if (request.valid && job.state === "parked" && !input.permanentFaultsPlanned && !/^No progress after/.test(job.parkReason ?? "")) {
            // Deleting the intake row only takes away where the status is written; the product is still finished.
            found("invariantFailures", request.code, `intake row deleted mid-job, and the job parked instead of finishing: ${job.parkReason}`);
        }
    }

    const owned = new Map<number, Set<string>>();
    for (const job of jobs) {
        const key = `${job.partitionKey}-${job.rowKey}`;
        const subject = `${job.productCode} (${key})`;
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
