import { createServer, type Server } from "node:http";
import { startE2E, waitFor, type E2E, type E2EOptions } from "./e2e";
import { inspectProduct } from "./inspectProduct";

/**
 * Smartsheet's rate limit with its minute shrunk to 15 s, for the app (FAST_RECOVERY) and the
 * simulator alike: 1.5 s of rate-limit waits must cover two slices of the shared budget's window.
 */
export const FAST_RATE_LIMIT = { requests: 300, windowMs: 15_000 };

/**
 * Time, shrunk: a worker may run 8 s (functionTimeout), a Smartsheet call 5 s (1.5 s more of
 * rate-limit waits), a write may land up to 8 s after its claim, clocks differ by up to 1 s, and
 * a job without progress for 12 s is the reaper's, which looks every 2 s. The rate-limit window
 * is 15 s (FAST_RATE_LIMIT; the simulator's too).
 */
export const FAST_RECOVERY = {
    AzureFunctionsJobHost__functionTimeout: "00:00:08",
    SMARTSHEET_CALL_TIMEOUT_SECONDS: "5",
    SMARTSHEET_RATE_LIMIT_RETRY_SECONDS: "1.5",
    SMARTSHEET_RATE_LIMIT_WINDOW_SECONDS: String(FAST_RATE_LIMIT.windowMs / 1000),
    LATE_WRITE_HORIZON_SECONDS: "8",
    MAX_CLOCK_SKEW_SECONDS: "1",
    STALE_AFTER_MINUTES: "0.2",
    REAPER_SCHEDULE: "*/2 * * * * *",
    STEP_RETRY_ATTEMPTS: "2",
    MAX_RECOVERIES: "2",
};

export interface JobJson {
    jobKey: string;
    state: string;
    stage?: string;
    attempt: number;
    recoveries: number;
    instanceId: string;
    parkReason?: string;
    parkedAt?: string;
    copies: Record<string, unknown>;
    duplicatesRemoved: unknown[];
    orchestration: { runtimeStatus: string; customStatus?: Record<string, unknown> } | null;
    blueprintVersion?: string;
    convergence?: { to: string; state: string; attempt: number; parkReason?: string };
}

export async function job(e2e: E2E, key: string): Promise<JobJson | undefined> {
    const response = await e2e.api(`jobs/${key}`);
    return response.ok ? ((await response.json()) as JobJson) : undefined;
}

export function jobIn(e2e: E2E, key: string, state: string, timeoutMs = 90_000): Promise<JobJson> {
    return waitFor(async () => {
        const found = await job(e2e, key);
        return found?.state === state ? found : undefined;
    }, `job ${key} to be ${state}`, timeoutMs);
}

/** The seeded intake rows, by product code, and a way to leave only some of them approved. */
export function intake(e2e: E2E) {
    const state = e2e.sim.core.state();
    const sheet = state.sheets.find((candidate) => candidate.id === state.intakeSheetId)!;
    const column = (title: string) => sheet.columns.find((candidate) => candidate.title === title)!.id;
    const keyOf = (code: string) => {
        const row = sheet.rows.find((candidate) => candidate.cells.find((cell) => cell.columnId === column("Product Code"))?.value === code);
        return `${sheet.id}-${row!.id}`;
    };
    const write = async (body: unknown, method: string) => {
        const response = await fetch(new URL(`sheets/${sheet.id}/rows`, e2e.sim.baseUrl), {
            method,
            headers: { authorization: "Bearer sim-token", "content-type": "application/json" },
            body: JSON.stringify(body),
        });
        if (!response.ok) throw new Error(`intake write failed: ${response.status} ${await response.text()}`);
        return (await response.json()) as { result: Array<{ id: number }> };
    };
    return {
        keyOf,
        async onlyApprove(codes: string[]) {
            await write(
                sheet.rows.map((row) => ({
                    id: row.id,
                    cells: [{ columnId: column("Approved"), value: codes.includes(String(row.cells.find((cell) => cell.columnId === column("Product Code"))?.value)) }],
                })),
                "PUT",
            );
        },
        async add(code: string, name: string, line: string): Promise<string> {
            const answer = await write(
                [
                    {
                        toBottom: true,
                        cells: [
                            { columnId: column("Product Code"), value: code },
                            { columnId: column("Product Name"), value: name },
                            { columnId: column("Product Line"), value: line },
                            { columnId: column("Approved"), value: true },
                        ],
                    },
                ],
                "POST",
            );
            return `${sheet.id}-${answer.result[0]!.id}`;
        },
    };
}

/** Waits until the product folder holds `count` sheets (the simulator's view). */
export function sheetsCopied(e2e: E2E, code: string, count: number): Promise<true> {
    return waitFor(async () => inspectProduct(e2e.sim.core.state(), code).sheets.length >= count || undefined, `${count} sheets of ${code}`);
}

export function copyCalls(e2e: E2E): number {
    return e2e.sim.core.calls().byOperation.copySheet ?? 0;
}

export function transitions(e2e: E2E, pattern: RegExp): string[] {
    return e2e.host.logs.filter((line) => / job \d+-\d+ \S+ → \S+ \(/.test(line) && pattern.test(line));
}

export interface AlertInbox {
    url: string;
    /** Every body POSTed, parsed. */
    alerts: Array<Record<string, unknown>>;
    /** The status it answers with (204 unless a test breaks the webhook). */
    answer: number;
    close(): Promise<void>;
}

/** Captures the alert webhook's POSTs, answering with `answer`. */
export async function alertInbox(): Promise<AlertInbox> {
    const server: Server = createServer((request, response) => {
        let body = "";
        request.on("data", (chunk: Buffer) => (body += chunk.toString()));
        request.on("end", () => {
            inbox.alerts.push(JSON.parse(body) as Record<string, unknown>);
            response.writeHead(inbox.answer).end();
        });
    });
    const inbox: AlertInbox = { url: "", alerts: [], answer: 204, close: () => new Promise((resolve) => server.close(() => resolve())) };
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    inbox.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks/sheetwright`;
    return inbox;
}

/** An end-to-end stack with recovery time shrunk, only the given intake rows approved. */
export async function startRecoveryE2E(options: E2EOptions & { only?: string[] } = {}): Promise<E2E> {
    const e2e = await startE2E({
        ...options,
        settings: { ...FAST_RECOVERY, ...options.settings },
        simulator: { rateLimit: FAST_RATE_LIMIT, ...options.simulator },
    });
    if (options.only) await intake(e2e).onlyApprove(options.only);
    return e2e;
}
