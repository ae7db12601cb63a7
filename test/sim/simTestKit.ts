import { createClient } from "smartsheet";
import { afterAll, beforeAll, beforeEach } from "vitest";
import { startSimulator, type RunningSimulator, type SimOperation, type SimSheetState, type SimulatorOptions } from "../../tools/smartsheet-sim";
import { SIM_OPERATIONS } from "../../tools/smartsheet-sim/SimOperation";

export const TOKEN = "sim-token";

/** The SDK types `sheets` as any; its answers are plain JSON. */
export type SdkClient = any;

export function noLatency(): Record<SimOperation, number> {
    return Object.fromEntries(SIM_OPERATIONS.map((op) => [op, 0])) as Record<SimOperation, number>;
}

/** A simulator on a free port without artificial latency, unless the options say otherwise. */
export function startTestSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
    return startSimulator({ port: 0, ...options, latencyMs: { ...noLatency(), ...options.latencyMs } });
}

/** One simulator per test file, back to the seeded state before every test. */
export function useSimulator(options: SimulatorOptions = {}): { readonly sim: RunningSimulator } {
    const holder: { sim?: RunningSimulator } = {};
    beforeAll(async () => {
        holder.sim = await startTestSimulator(options);
    });
    afterAll(async () => {
        await holder.sim?.close();
    });
    beforeEach(() => {
        holder.sim?.core.reset();
    });
    return {
        get sim() {
            if (!holder.sim) throw new Error("simulator not started");
            return holder.sim;
        },
    };
}

/** The official SDK pointed at the simulator; `retries: false` stops its own re-sends on 4001–4004. */
export function sdk(sim: RunningSimulator, options: { retries?: boolean | number; token?: string } = {}): SdkClient {
    const retries = options.retries ?? false;
    return createClient({
        accessToken: options.token ?? TOKEN,
        baseUrl: sim.baseUrl,
        ...(retries === true ? {} : { calcRetryBackoff: () => (retries === false ? -1 : retries) }),
    });
}

export interface RawResponse {
    status: number;
    contentType: string | null;
    body: any;
}

/** A REST call with fetch, for exact shapes; `path` is relative to the base URL. */
export async function api(
    sim: RunningSimulator,
    method: string,
    path: string,
    body?: unknown,
    options: { token?: string | null; rawBody?: string } = {},
): Promise<RawResponse> {
    const token = options.token === undefined ? TOKEN : options.token;
    const response = await fetch(new URL(path, sim.baseUrl), {
        method,
        headers: {
            "Content-Type": "application/json",
            ...(token === null ? {} : { Authorization: `Bearer ${token}` }),
        },
        ...(options.rawBody !== undefined ? { body: options.rawBody } : body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return readResponse(response);
}

/** An admin call under `/__sim/`. */
export async function admin(sim: RunningSimulator, method: string, path: string, body?: unknown): Promise<RawResponse> {
    const response = await fetch(new URL(path, sim.adminUrl), {
        method,
        headers: { "Content-Type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return readResponse(response);
}

async function readResponse(response: Response): Promise<RawResponse> {
    const contentType = response.headers.get("content-type");
    const text = await response.text();
    return { status: response.status, contentType, body: contentType?.includes("json") ? JSON.parse(text) : text };
}

/** The state's sheets whose name is `name`. */
export function sheetsNamed(sim: RunningSimulator, name: string): SimSheetState[] {
    return sim.core.state().sheets.filter((sheet) => sheet.name === name);
}

/** The id of a template sheet by name. */
export function templateSheetId(sim: RunningSimulator, name: string): number {
    const sheet = sim.core
        .state()
        .sheets.find((candidate) => candidate.name === name && candidate.folderId === sim.core.anchors.templateFolderId);
    if (!sheet) throw new Error(`no template sheet ${name}`);
    return sheet.id;
}

export function expectSmartsheetId(value: unknown): void {
    if (typeof value !== "number" || !Number.isSafeInteger(value) || String(value).length !== 16) {
        throw new Error(`expected a 16-digit safe integer id, got ${JSON.stringify(value)}`);
    }
}
