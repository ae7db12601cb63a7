import { RestError, type TableClient } from "@azure/data-tables";
import type { FullOperationResponse } from "@azure/core-client";
import { z } from "zod";
import { SLICES_PER_WINDOW, type BudgetRow, type BudgetRows, type StoredBudgetRow } from "./SharedTokenBudget";
import type { StorageTime } from "./storageClock";

const PARTITION = "smartsheet-budget";

const StoredRow = z.object({
    etag: z.string(),
    slice: z.string().regex(/^-?\d+$/).transform(Number),
    granted: z.number().int().min(0),
    // The grants of the slices before `slice`, latest first, comma-separated; absent in a row written before they were kept.
    earlier: z
        .string()
        .regex(/^(\d+(,\d+)*)?$/)
        .transform((text) => (text === "" ? [] : text.split(",").map(Number)))
        .optional(),
    pausedUntil: z.iso.datetime().transform((iso) => Date.parse(iso)),
    // How many slices a window has in the numbering `slice` counts in; absent in a row written with twenty.
    slicesPerWindow: z.number().int().min(1).optional(),
});

/**
 * The budget rows in the Jobs table: partition `smartsheet-budget`, one row per token hash
 * (`kind` = `budget`), holding the slice being leased, its grants, the grants of the slices before
 * it and the shared 429 pause. Every write is conditional; a conflict is an answer, not an error.
 * Every answer also shows the Table service's clock (`onStorageTime`), which the budget keeps time by.
 */
export class BudgetTable implements BudgetRows {
    constructor(private readonly table: TableClient) {}

    async read(tokenHash: string, signal: AbortSignal, onStorageTime?: (time: StorageTime) => void): Promise<StoredBudgetRow | undefined> {
        try {
            const entity = await this.table.getEntity<Record<string, unknown>>(PARTITION, tokenHash, { abortSignal: signal, onResponse: timeOf(onStorageTime, "read") });
            const parsed = StoredRow.safeParse(entity);
            // A row edited into nonsense is leased over (its ETag is all a write needs): it stops nothing.
            return parsed.success ? parsed.data : { etag: String(entity.etag), slice: Number.MIN_SAFE_INTEGER, granted: 0, earlier: [], pausedUntil: 0, slicesPerWindow: SLICES_PER_WINDOW };
        } catch (error) {
            if (statusOf(error) === 404) return undefined;
            throw error;
        }
    }

    async create(tokenHash: string, row: BudgetRow, signal: AbortSignal, onStorageTime?: (time: StorageTime) => void): Promise<StoredBudgetRow | undefined> {
        try {
            const response = await this.table.createEntity(entityOf(tokenHash, row), { abortSignal: signal, onResponse: timeOf(onStorageTime, "write") });
            return { ...row, etag: response.etag! };
        } catch (error) {
            if (statusOf(error) === 409) return undefined;
            throw error;
        }
    }

    async replace(
        tokenHash: string,
        row: BudgetRow,
        etag: string,
        signal: AbortSignal,
        onStorageTime?: (time: StorageTime) => void,
    ): Promise<StoredBudgetRow | undefined> {
        try {
            const response = await this.table.updateEntity(entityOf(tokenHash, row), "Replace", { etag, abortSignal: signal, onResponse: timeOf(onStorageTime, "write") });
            return { ...row, etag: response.etag! };
        } catch (error) {
            const status = statusOf(error);
            if (status === 412 || status === 404) return undefined;
            throw error;
        }
    }
}

function entityOf(tokenHash: string, row: BudgetRow) {
    return {
        partitionKey: PARTITION,
        rowKey: tokenHash,
        kind: "budget",
        // A string: slice numbers of short test windows outgrow a Table Int32.
        slice: String(row.slice),
        granted: row.granted,
        ...(row.earlier ? { earlier: row.earlier.join(",") } : {}),
        pausedUntil: new Date(row.pausedUntil).toISOString(),
        ...(row.slicesPerWindow !== undefined ? { slicesPerWindow: row.slicesPerWindow } : {}),
    };
}

/** A written entity's ETag names the instant of the write: `W/"datetime'2026-12-02T02%3A21%3A30.8884207Z'"`. */
const WRITTEN_AT = /^W\/"datetime'([^']+)'"$/;

/**
 * Passes on the storage service's time an answer shows: the instant a successful write names in its
 * ETag (to the millisecond), else the `Date` header's second. An answer showing neither shows nothing.
 */
function timeOf(onStorageTime: ((time: StorageTime) => void) | undefined, call: "read" | "write") {
    if (!onStorageTime) return undefined;
    return (response: FullOperationResponse, _: unknown, error?: unknown) => {
        const etag = response.headers.get("etag");
        const written = call === "write" && !error && etag ? WRITTEN_AT.exec(etag) : null;
        const writtenAt = written ? Date.parse(safeDecode(written[1]!)) : NaN;
        if (Number.isFinite(writtenAt)) return onStorageTime({ earliest: writtenAt, latest: writtenAt + 1 });
        const second = Date.parse(response.headers.get("date") ?? "");
        if (Number.isFinite(second)) onStorageTime({ earliest: second, latest: second + 999 });
    };
}

function safeDecode(text: string): string {
    try {
        return decodeURIComponent(text);
    } catch {
        return "";
    }
}

function statusOf(error: unknown): number | undefined {
    return error instanceof RestError ? error.statusCode : undefined;
}
