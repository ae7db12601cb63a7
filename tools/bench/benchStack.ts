import { odata } from "@azure/data-tables";
import type { JobKey, JobRow } from "../../src/shared/jobs/JobRow";
import { JobStore } from "../../src/shared/jobs/JobStore";
import { createTableClient } from "../../src/shared/storage";
import { freePort } from "@sheetwright/functions-host";
import { startSimulator, type CallLogEntry, type RunningSimulator, type SimConfigPatch } from "../smartsheet-sim";
import { appSettingsFor, ownAppSettings } from "../stack/appSettings";
import { smartsheetAs } from "../stack/clients";
import { BenchHost } from "./benchHost";

const FUNCTION_KEY = "bench-function-key";
const SIM_TOKEN = "sim-token";
const ROWS_PER_REQUEST = 500;
/** A 15 s rate-limit window, tried every 100 ms. */
const APPROVE_TRIES = 150;

/**
 * Smartsheet's latencies with time compressed about four times, as the demo has them: a copy
 * takes several times a read (Smartsheet duplicates the sheet server-side), a new folder a
 * little more than a plain write.
 */
export const SMARTSHEET_LATENCY_MS: NonNullable<SimConfigPatch["latencyMs"]> = {
    copySheet: 700,
    createFolder: 250,
    getFolderChildren: 120,
    getSheet: 120,
    getSummary: 120,
    getSummaryFields: 120,
    listCrossSheetReferences: 120,
    getCrossSheetReference: 120,
    updateSheet: 150,
    updateRows: 150,
    addRows: 150,
    deleteRows: 150,
    updateColumn: 150,
    // Template convergence's column and summary-field operations, as the other reads and writes.
    getColumns: 120,
    addColumn: 150,
    deleteColumn: 150,
    deleteSummaryFields: 150,
    createCrossSheetReference: 150,
    addSummaryFields: 150,
    updateSummaryFields: 150,
    deleteSheet: 150,
    deleteFolder: 150,
};

/** A product request as a person types it into the intake sheet. */
export interface ProductRequest {
    code: string;
    name: string;
    line: "Industrial" | "Consumer";
    approved: boolean;
}

export interface StackOptions {
    /** Azurite, shared by every stack of the run; each stack has its own table, queue and task hub. */
    storage: string;
    /** App and host settings over the bench's defaults. */
    settings?: Record<string, string>;
    /** Host processes sharing the stack's storage and token (scale-out). Default 1. */
    hosts?: number;
    simulator?: SimConfigPatch;
    /** The simulator's clock (ms), when the scenario needs Smartsheet's time to differ from now. */
    simulatorClock?: () => number;
    /**
     * Smartsheet's webhooks on: the first host on a port chosen first, WEBHOOK_BASE_URL pointing at
     * it and the callbacks carrying the stack's function key, callbacks coalesced over 1 s (as the
     * local stack has them). The simulator's debounce is the scenario's (`simulator.webhooks`).
     */
    webhooks?: boolean;
}

/**
 * One measured deployment: a Smartsheet simulator in this process (its seeded requests left
 * unapproved), and the local Functions host running the app as child process(es) on the run's
 * Azurite, under names of its own.
 */
export class BenchStack {
    /** Cold start of each host's first start, ms. */
    readonly coldStartsMs: number[] = [];
    /** A Smartsheet REST call as a person (or another integration) makes it, with the same token. */
    private readonly smartsheet: ReturnType<typeof smartsheetAs>;

    private constructor(
        readonly sim: RunningSimulator,
        readonly hosts: BenchHost[],
        readonly settings: Record<string, string>,
        readonly jobs: JobStore,
    ) {
        this.smartsheet = smartsheetAs(sim.baseUrl, SIM_TOKEN);
    }

    /** Starts `count` stacks side by side; if one fails, stops the others and throws its error. */
    static async startMany(count: number, options: StackOptions): Promise<BenchStack[]> {
        const started = await Promise.allSettled(Array.from({ length: count }, () => BenchStack.start(options)));
        const failure = started.find((outcome) => outcome.status === "rejected");
        if (!failure) return started.map((outcome) => (outcome as PromiseFulfilledResult<BenchStack>).value);
        await Promise.all(started.map((outcome) => (outcome.status === "fulfilled" ? outcome.value.stop() : undefined)));
        throw failure.reason;
    }

    static async start(options: StackOptions): Promise<BenchStack> {
        const sim = await startSimulator({ port: 0, ...(options.simulatorClock ? { clock: options.simulatorClock } : {}) });
        if (options.simulator) sim.core.configure(options.simulator);
        const firstPort = await freePort();
        const webhooks: Record<string, string> = options.webhooks
            ? { WEBHOOK_BASE_URL: `http://127.0.0.1:${firstPort}/`, WEBHOOK_FUNCTION_KEY: FUNCTION_KEY, WEBHOOK_COALESCE_SECONDS: "1" }
            : {};
        // Timers are fired by the bench, never by the clock, unless a scenario gives one a schedule.
        const settings = appSettingsFor(
            { smartsheetBaseUrl: sim.baseUrl, anchors: sim.core.anchors, storageConnectionString: options.storage },
            { ...ownAppSettings("bench", FUNCTION_KEY), ...webhooks, ...options.settings },
        );
        const hosts: BenchHost[] = [];
        const stack = new BenchStack(sim, hosts, settings, new JobStore(createTableClient(options.storage, settings.JOBS_TABLE!)));
        try {
            await stack.withdrawSeededRequests();
            for (let i = 0; i < (options.hosts ?? 1); i++) {
                const host = new BenchHost(settings, i === 0 ? firstPort : await freePort());
                hosts.push(host);
                stack.coldStartsMs.push(await host.start());
            }
        } catch (error) {
            await stack.stop();
            throw error;
        }
        sim.core.resetCalls();
        return stack;
    }

    get host(): BenchHost {
        return this.hosts[0]!;
    }

    get intakeSheetId(): number {
        return this.sim.core.anchors.intakeSheetId;
    }

    /** Types requests into the intake sheet (500 rows a call, as a person's import would) and returns their job keys. */
    async addRequests(requests: readonly ProductRequest[]): Promise<JobKey[]> {
        const column = this.intakeColumns();
        const keys: JobKey[] = [];
        for (let start = 0; start < requests.length; start += ROWS_PER_REQUEST) {
            const rows = requests.slice(start, start + ROWS_PER_REQUEST).map((request) => ({
                toBottom: true,
                cells: [
                    { columnId: column("Product Code"), value: request.code },
                    { columnId: column("Product Name"), value: request.name },
                    { columnId: column("Product Line"), value: request.line },
                    { columnId: column("Approved"), value: request.approved },
                ],
            }));
            const answer = await this.smartsheet<{ result: Array<{ id: number }> }>("POST", `sheets/${this.intakeSheetId}/rows`, rows);
            keys.push(...answer.result.map((row) => ({ pk: String(this.intakeSheetId), rk: String(row.id) })));
        }
        return keys;
    }

    /**
     * Ticks Approved on an intake row, as the person approving it would, and answers the moment
     * Smartsheet's answer came back (the write is in by then; the row's own modifiedAt has whole
     * seconds only). The bench writes with the app's token, so a window the app has spent answers
     * it 429; a person's edit in Smartsheet is not held by the API's limit, so it is sent again
     * until it lands.
     */
    async approve(key: JobKey): Promise<number> {
        const row = [{ id: Number(key.rk), cells: [{ columnId: this.intakeColumns()("Approved"), value: true }] }];
        for (let tries = 1; ; tries++) {
            try {
                await this.smartsheet("PUT", `sheets/${this.intakeSheetId}/rows`, row);
                return Date.now();
            } catch (error) {
                if (!(error instanceof Error && / answered 429:/.test(error.message)) || tries >= APPROVE_TRIES) throw error;
                await new Promise((resolve) => setTimeout(resolve, 100));
            }
        }
    }

    /** A Smartsheet REST call with the stack's token, as a person editing the workspace (a template change, say) makes it. */
    rest<T = unknown>(method: string, pathAndQuery: string, body?: unknown): Promise<T> {
        return this.smartsheet<T>(method, pathAndQuery, body);
    }

    /** A call to the app's own HTTP API (`/api/<route>`) on the first host, with the stack's function key. */
    api(method: string, route: string, body?: unknown): Promise<Response> {
        return fetch(`${this.host.url}/api/${route}`, {
            method,
            headers: { "x-functions-key": FUNCTION_KEY, "content-type": "application/json" },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
    }

    /** Waits until the app has made and enabled its webhook on the intake sheet (the keeper at start-up). */
    async waitForWebhook(timeoutMs: number): Promise<void> {
        const deadline = Date.now() + timeoutMs;
        while (!this.sim.core.webhookList().some((hook) => hook.enabled && hook.scopeObjectId === this.intakeSheetId)) {
            if (Date.now() > deadline) throw new Error(`The app did not enable its intake webhook within ${timeoutMs / 1000} s; look for "webhook keeper" in the host's output.`);
            await new Promise((resolve) => setTimeout(resolve, 100));
        }
    }

    /** Fires the intake sweep and resolves with its count line once it has run. */
    async sweep(): Promise<string> {
        const done = this.host.nextLine(/intake sweep of site \S+ \(routine[^)]*\): \d+ rows read, \d+ approved/, 120_000);
        await this.host.fire("intakeSweep");
        return done;
    }

    /** The simulator's call log (every request it answered or refused) since the stack started or `resetCalls`. */
    callLog(): CallLogEntry[] {
        return this.sim.core.calls().log;
    }

    async job(key: JobKey): Promise<JobRow | undefined> {
        return (await this.jobs.get(key))?.row;
    }

    /**
     * Waits until no job of the stack is open (queued or running) by its active index — cheap
     * however many jobs there are — then reads the rows of `keys`. Fails after `timeoutMs`.
     */
    async waitUntilSettled(keys: readonly JobKey[], timeoutMs: number): Promise<JobRow[]> {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
            const index = await this.jobs.listActiveIndex(String(this.intakeSheetId));
            const open = index.found.filter((entry) => entry.state === "queued" || entry.state === "running");
            if (open.length === 0) break;
            if (Date.now() > deadline) throw new Error(`${open.length} jobs were still open after ${timeoutMs / 1000} s (e.g. ${open[0]!.jobRowKey}, ${open[0]!.state}).`);
            await new Promise((resolve) => setTimeout(resolve, 1_000));
        }
        const rows: JobRow[] = [];
        for (const key of keys) {
            const row = await this.job(key);
            if (!row) throw new Error(`Job ${key.pk}-${key.rk} has no row: the sweep did not take its request.`);
            rows.push(row);
        }
        return rows;
    }

    /**
     * An orchestration's history as the task hub stores it (`<hub>History`, one row per event,
     * the sentinel aside): its events, and its episodes (each begins with OrchestratorStarted).
     */
    async history(instanceId: string): Promise<{ events: number; episodes: number }> {
        const table = createTableClient(this.settings.AzureWebJobsStorage!, `${this.settings.TASK_HUB_NAME}History`);
        let events = 0;
        let episodes = 0;
        const filter = odata`PartitionKey eq ${instanceId} and RowKey ne ${"sentinel"}`;
        for await (const entity of table.listEntities<{ EventType?: string }>({ queryOptions: { filter, select: ["EventType"] } })) {
            events += 1;
            if (entity.EventType === "OrchestratorStarted") episodes += 1;
        }
        if (events === 0) throw new Error(`The task hub has no history for ${instanceId}.`);
        return { events, episodes };
    }

    async stop(): Promise<void> {
        await Promise.all(this.hosts.map((host) => host.stop()));
        await this.sim.close();
    }

    /** The demo's sample requests are not the bench's: untick them, so only the bench's own are approved. */
    private async withdrawSeededRequests(): Promise<void> {
        const sheet = this.sim.core.state().sheets.find((candidate) => candidate.id === this.intakeSheetId)!;
        const approved = this.intakeColumns()("Approved");
        await this.smartsheet("PUT", `sheets/${this.intakeSheetId}/rows`, sheet.rows.map((row) => ({ id: row.id, cells: [{ columnId: approved, value: false }] })));
    }

    private intakeColumns(): (title: string) => number {
        const sheet = this.sim.core.state().sheets.find((candidate) => candidate.id === this.intakeSheetId)!;
        return (title) => {
            const column = sheet.columns.find((candidate) => candidate.title === title);
            if (!column) throw new Error(`The simulator's intake sheet has no "${title}" column.`);
            return column.id;
        };
    }
}

/** The `number`-th request of a series: `<prefix>-0001`…, alternating between the two product lines. */
export function productRequest(prefix: string, number: number, approved = true): ProductRequest {
    return {
        code: `${prefix}-${String(number).padStart(4, "0")}`,
        name: `Bench Product ${number}`,
        line: number % 2 === 1 ? "Industrial" : "Consumer",
        approved,
    };
}

/** `count` requests of a series, numbered from 1. */
export function productRequests(prefix: string, count: number, approved = true): ProductRequest[] {
    return Array.from({ length: count }, (_, index) => productRequest(prefix, index + 1, approved));
}
