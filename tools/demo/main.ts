import { createWriteStream } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { RunningSimulator, SimSite, SimState } from "../smartsheet-sim";
import { smartsheetAs } from "../stack/clients";
import { startLocalStack, type LocalStack } from "../stack/localStack";

/**
 * `npm run demo`: the whole product on the embedded stack, for two customer sites. Starts
 * Azurite, the Smartsheet simulator (two workspaces, two tokens) and the local Functions host
 * serving both through SITES, with Smartsheet's webhooks on: the app makes and enables one
 * webhook per intake sheet, then the customers approve their sample requests and the callbacks
 * alone start the products (no sweep is fired). It shows each product's progress live, then
 * what was built, what it cost and how long each took from approval to done. Exits 0 when every
 * sample request of both sites is done.
 */

const DEADLINE_MS = 110_000;
const tty = process.stdout.isTTY === true;
const color = (code: number) => (text: string) => (tty ? `\x1b[${code}m${text}\x1b[0m` : text);
const bold = color(1);
const dim = color(2);
const green = color(32);
const red = color(31);

interface JobSnapshot {
    state: string;
    stage?: string;
    productCode: string;
    productName: string;
    templates: string[];
    copies: Record<string, { name: string }>;
    smartsheetCalls: number;
    callsByOperation: Record<string, number>;
    parkReason?: string;
    rejectReason?: string;
    folderLink?: string;
    remapped: string[];
    summaryStamped: boolean;
    registered: boolean;
}

interface Line {
    site: SimSite;
    key: string;
    code: string;
    name: string;
    job?: JobSnapshot;
    approvedAt?: number;
    doneAt?: number;
}

/** The simulator's debounce: Smartsheet's is one minute on commercial plans; compressed so the demo is quick. */
const DEBOUNCE_MS = 2_000;

async function main(): Promise<void> {
    const started = Date.now();
    const logFile = path.join(os.tmpdir(), `sheetwright-demo-${process.pid}.log`);
    const log = createWriteStream(logFile);
    // The app runs in this process: its own console lines belong in the log, not on the screen.
    for (const level of ["log", "info", "warn", "error", "debug"] as const) {
        console[level] = (...parts: unknown[]) => void log.write(`${parts.map(String).join(" ")}\n`);
    }
    process.stdout.write(`${bold("Sheetwright demo")} — provisioning the sample product requests of two customer sites end to end\n`);
    process.stdout.write(dim(`Starting Azurite, the Smartsheet simulator and the local Functions host (log: ${logFile})…\n`));

    const stack = await startLocalStack({
        azurite: { tablePort: 0, queuePort: 0 },
        // Latency like a real tenant's, so the stages can be watched.
        simulator: {
            port: 0,
            sites: 2,
            latencyMs: { copySheet: 700, createFolder: 250, getSheet: 120, getFolderChildren: 120, updateRows: 150 },
            webhooks: { debounceMs: DEBOUNCE_MS },
        },
        host: { port: 0, pollIntervalMs: 200, log: (line) => log.write(`${line}\n`) },
        settings: { COPY_SETTLE_SECONDS: "2" },
        webhooks: true,
        // The sample requests wait unapproved until the app is up: the customers approve them below.
        beforeHost: (sim) => setApproved(sim, false),
    });
    let exitCode = 1;
    try {
        exitCode = await run(stack, started);
    } finally {
        await stack.stop();
        log.end();
    }
    process.exit(exitCode);
}

async function run(stack: LocalStack, started: number): Promise<number> {
    const { sim } = stack;
    const state = sim.core.state();
    const requests = state.sites.flatMap((site) => sampleRequests(state, site));
    const lines: Line[] = requests.map((request) => ({ ...request }));
    await waitForWebhooks(sim, state.sites.length, started);
    const perSite = state.sites.map((site) => `${site.name} (token ${site.token}) ${requests.filter((request) => request.site === site).length}`);
    process.stdout.write(
        `The app made and enabled one webhook per intake sheet. The customers now approve their requests (${perSite.join(", ")}); ` +
            `Smartsheet's callbacks, ${DEBOUNCE_MS / 1000} s after each change here (a minute on commercial plans), start the products: no sweep is fired.\n\n`,
    );
    const approvedAt = Date.now();
    await setApproved(sim, true);
    for (const line of lines) line.approvedAt = approvedAt;
    let drawn = 0;
    for (;;) {
        await Promise.all(lines.map(async (line) => (line.job = (await readJob(stack, line.key)) ?? line.job)));
        for (const line of lines) if (!line.doneAt && isFinal(line.job)) line.doneAt = Date.now();
        drawn = draw(lines, drawn, started);
        if (lines.every((line) => isFinal(line.job))) break;
        if (Date.now() - started > DEADLINE_MS) {
            process.stdout.write(red(`\nNot finished after ${DEADLINE_MS / 1000} s; see the host log.\n`));
            return 1;
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
    }

    process.stdout.write("\n");
    const finished = sim.core.state();
    for (const line of lines) printProduct(finished, line);
    const done = lines.filter((line) => line.job?.state === "done");
    const timings = lines.map((line) => `${line.code} ${line.doneAt && line.approvedAt ? ((line.doneAt - line.approvedAt) / 1000).toFixed(1) : "?"} s`);
    process.stdout.write(`Approval → done (the webhook's ${DEBOUNCE_MS / 1000} s debounce included): ${timings.join(", ")}\n`);
    const calls = done.reduce((sum, line) => sum + (line.job?.smartsheetCalls ?? 0), 0);
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    process.stdout.write(
        `\n${done.length === lines.length ? green("✔") : red("✘")} ${done.length} of ${lines.length} products of ${state.sites.length} sites provisioned in ${seconds} s, ` +
            `${calls} Smartsheet calls (${done.length ? Math.round(calls / done.length) : 0} per product); ` +
            `every intake row now says ${bold("Done")} with its folder link.\n`,
    );
    return done.length === lines.length ? 0 : 1;
}

/** The seeded requests the demo approves: those of the seed that are complete, as approved requests (untouched rows stay as they are). */
const SAMPLE_CODES = new Set(["IND-1042", "CON-2201", "IND-1043"]);

function sampleRequests(state: SimState, site: SimSite): Array<{ site: SimSite; key: string; code: string; name: string }> {
    const intake = state.sheets.find((sheet) => sheet.id === site.intakeSheetId)!;
    const column = (title: string) => intake.columns.find((candidate) => candidate.title === title)!.id;
    const code = (row: (typeof intake.rows)[number]) => String(row.cells.find((cell) => cell.columnId === column("Product Code"))?.value ?? "");
    return intake.rows
        .filter((row) => SAMPLE_CODES.has(code(row).replace(/-S\d+$/, "")))
        .map((row) => ({
            site,
            key: `${intake.id}-${row.id}`,
            code: String(row.cells.find((cell) => cell.columnId === column("Product Code"))?.value ?? ""),
            name: String(row.cells.find((cell) => cell.columnId === column("Product Name"))?.value ?? ""),
        }));
}

/** Ticks or unticks Approved on every sample request, as each site's customer would (the official SDK on the site's token). */
async function setApproved(sim: RunningSimulator, approved: boolean): Promise<void> {
    const state = sim.core.state();
    for (const site of state.sites) {
        const intake = state.sheets.find((sheet) => sheet.id === site.intakeSheetId)!;
        const approvedColumn = intake.columns.find((column) => column.title === "Approved")!.id;
        const rows = sampleRequests(state, site).map((request) => Number(request.key.split("-")[1]));
        await smartsheetAs(sim.baseUrl, site.token)("PUT", `sheets/${site.intakeSheetId}/rows`, rows.map((id) => ({ id, cells: [{ columnId: approvedColumn, value: approved }] })));
    }
}

async function waitForWebhooks(sim: RunningSimulator, sites: number, started: number): Promise<void> {
    while (sim.core.webhookList().filter((hook) => hook.enabled).length < sites) {
        if (Date.now() - started > DEADLINE_MS) throw new Error("the app did not enable its intake webhooks; see the host log");
        await new Promise((resolve) => setTimeout(resolve, 100));
    }
}

async function readJob(stack: LocalStack, key: string): Promise<JobSnapshot | undefined> {
    const response = await stack.api(`jobs/${key}`);
    return response.ok ? ((await response.json()) as JobSnapshot) : undefined;
}

function isFinal(job: JobSnapshot | undefined): boolean {
    return job !== undefined && ["done", "rejected", "parked"].includes(job.state);
}

function describe(job: JobSnapshot | undefined): { fraction: number; text: string } {
    if (!job) return { fraction: 0, text: dim("waiting for the webhook") };
    const total = job.templates.length || 7;
    const copied = Object.keys(job.copies).length;
    switch (job.state) {
        case "queued":
            return { fraction: 0.02, text: "queued" };
        case "done":
            return { fraction: 1, text: green(`done · ${job.smartsheetCalls} calls`) };
        case "parked":
            return { fraction: 0, text: red(`parked: ${job.parkReason}`) };
        case "rejected":
            return { fraction: 0, text: red(`rejected: ${job.rejectReason}`) };
    }
    if (job.stage === "remap") return { fraction: 0.75, text: `linking sheets (${job.remapped.length} remapped)` };
    if (job.stage === "register") return { fraction: 0.92, text: "registering the Document Register" };
    return { fraction: 0.05 + (0.65 * copied) / total, text: `copying sheets ${copied}/${total}` };
}

function draw(lines: Line[], previouslyDrawn: number, started: number): number {
    const rows = lines.map((line) => {
        const { fraction, text } = describe(line.job);
        const width = 20;
        const filled = Math.round(fraction * width);
        const bar = `${"█".repeat(filled)}${dim("░".repeat(width - filled))}`;
        const name = line.name.length > 34 ? `${line.name.slice(0, 33)}…` : line.name;
        const elapsed = (((line.doneAt ?? Date.now()) - (line.approvedAt ?? started)) / 1000).toFixed(1).padStart(5);
        return `  ${dim(line.site.name.padEnd(7))} ${bold(line.code.padEnd(12))} ${name.padEnd(35)} ${bar} ${elapsed}s  ${text}`;
    });
    if (tty) {
        if (previouslyDrawn > 0) process.stdout.write(`\x1b[${previouslyDrawn}A`);
        process.stdout.write(rows.map((row) => `\x1b[2K${row}`).join("\n") + "\n");
        return rows.length;
    }
    // Not a terminal (CI, a pipe): print a product's line only when it changes.
    lines.forEach((line, index) => {
        const text = describe(line.job).text;
        if ((line as Line & { printed?: string }).printed !== text) {
            (line as Line & { printed?: string }).printed = text;
            process.stdout.write(`${rows[index]}\n`);
        }
    });
    return 0;
}

function printProduct(state: SimState, line: Line): void {
    const job = line.job;
    if (!job || job.state !== "done") {
        process.stdout.write(`${bold(line.code)}: ${describe(job).text}\n`);
        return;
    }
    const folder = state.folders.find((candidate) => candidate.permalink === job.folderLink);
    const parent = state.folders.find((candidate) => candidate.id === folder?.parentId);
    const order = (name: string) => job.templates.findIndex((template) => name.endsWith(` - ${template}`));
    const sheets = state.sheets.filter((sheet) => sheet.folderId === folder?.id).sort((a, b) => order(a.name) - order(b.name));
    process.stdout.write(`${bold(`${line.site.name}: Products / ${parent?.name ?? "?"} / ${folder?.name ?? "?"}`)}\n`);
    sheets.forEach((sheet, index) => {
        const branch = index === sheets.length - 1 ? "└─" : "├─";
        const code = sheet.summaryFields.find((field) => field.title === "Product Code")?.objectValue;
        const referencesTo = sheet.crossSheetReferences
            .filter((reference) => reference.name.startsWith(`${job.productCode} `))
            .map((reference) => state.sheets.find((candidate) => candidate.id === reference.sourceSheetId)?.name.split(" - ").pop())
            .filter(Boolean);
        const notes = [
            code ? `Product Code = ${String(code)}` : "",
            referencesTo.length ? `formulas → its own ${referencesTo.join(", ")}` : "",
        ].filter(Boolean);
        process.stdout.write(`  ${branch} ${sheet.name.padEnd(52)} ${dim(notes.join("; "))}\n`);
    });
    const filing = state.sheets.find((sheet) => sheet.id === line.site.filingIndexSheetId)!;
    const byTitle = (row: (typeof filing.rows)[number], title: string) =>
        row.cells.find((cell) => cell.columnId === filing.columns.find((column) => column.title === title)?.id)?.value;
    const indexRow = filing.rows.find((row) => byTitle(row, "Product Code") === job.productCode);
    if (indexRow) {
        process.stdout.write(`  Filing Index: ${job.productCode} → register sheet ${String(byTitle(indexRow, "Register Sheet Id"))}\n`);
    }
    const operations = Object.entries(job.callsByOperation)
        .sort((a, b) => b[1] - a[1])
        .map(([operation, count]) => `${operation} ${count}`)
        .join(", ");
    process.stdout.write(`  ${dim(`Smartsheet calls: ${job.smartsheetCalls} (${operations})`)}\n\n`);
}

main().catch((error: unknown) => {
    process.stderr.write(`${red("Demo failed:")} ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
});
