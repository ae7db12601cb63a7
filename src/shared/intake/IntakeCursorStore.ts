import { RestError, type TableClient } from "@azure/data-tables";
import { z } from "zod";

const PARTITION = "intake-cursor";
const WRITE_ATTEMPTS = 5;

/** Where the routine intake sweep carries on from: what the last fully successful sweep covered. */
export const IntakeCursor = z.object({
    /**
     * When that sweep read the intake sheet, by Smartsheet's clock: its answer's `Date` (never
     * before the sheet's `modifiedAt` as read), so every row changed after the read has a later
     * `modifiedAt`. (Cursors stored before #18.9 hold the sweep's start by the instance's own
     * clock; they read the same.)
     */
    sweptAt: z.iso.datetime(),
    /** What it judged requests by besides their rows (product lines, template names): when these change, a rejected row may pass. */
    verdictInputs: z.string().min(1),
});
export type IntakeCursor = z.infer<typeof IntakeCursor>;

/** The cursor as read: none yet, or one that does not parse (`problem`), carries no `cursor`. */
export interface CursorRead {
    cursor?: IntakeCursor;
    etag?: string;
    /** When the storage service stored it (the entity's `Timestamp`, by the service's clock). */
    storedAt?: string;
    problem?: string;
}

/**
 * The intake sweep's cursor, one per intake sheet, in the Jobs table (partition `intake-cursor`,
 * `kind` `intakeCursor`): job listings, the reaper and reconciliation read only an intake
 * sheet's own partition and `kind` `job`, so they never see it.
 */
export class IntakeCursorStore {
    constructor(private readonly table: TableClient) {}

    async read(intakeSheetId: number): Promise<CursorRead> {
        let entity: Record<string, unknown> & { etag: string; timestamp?: string };
        try {
            entity = await this.table.getEntity<Record<string, unknown>>(PARTITION, String(intakeSheetId));
        } catch (error) {
            if (error instanceof RestError && error.statusCode === 404) return {};
            throw error;
        }
        const stored = { etag: entity.etag, ...(entity.timestamp ? { storedAt: entity.timestamp } : {}) };
        const parsed = IntakeCursor.safeParse(entity);
        if (parsed.success) return { cursor: { sweptAt: parsed.data.sweptAt, verdictInputs: parsed.data.verdictInputs }, ...stored };
        return { ...stored, problem: parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ") };
    }

    /**
     * Moves the cursor to `next`, unless a sweep that read the sheet later already moved it
     * further (or to the same time, with the same verdict inputs): a conditional write on the
     * ETag just read; when another sweep wrote in between, read and decide again. Never moves a
     * trusted cursor back; one ahead of the storage service's clock (`cursorAheadMs`) is replaced.
     */
    async advance(intakeSheetId: number, next: IntakeCursor, clockSkewMs: number): Promise<"advanced" | "kept"> {
        const entity = { partitionKey: PARTITION, rowKey: String(intakeSheetId), kind: "intakeCursor", ...IntakeCursor.parse(next) };
        for (let attempt = 1; ; attempt++) {
            const stored = await this.read(intakeSheetId);
            if (stored.cursor && cursorAheadMs(stored, clockSkewMs) === undefined) {
                const [storedAt, nextAt] = [Date.parse(stored.cursor.sweptAt), Date.parse(next.sweptAt)];
                if (storedAt > nextAt || (storedAt === nextAt && stored.cursor.verdictInputs === next.verdictInputs)) return "kept";
            }
            try {
                if (stored.etag === undefined) await this.table.createEntity(entity);
                else await this.table.updateEntity(entity, "Replace", { etag: stored.etag });
                return "advanced";
            } catch (error) {
                const raced = error instanceof RestError && (error.statusCode === 409 || error.statusCode === 412);
                if (!raced || attempt >= WRITE_ATTEMPTS) throw error;
            }
        }
    }
}

/**
 * How far a cursor claims a read later than the storage service stored it, when that is more
 * than the clock skew allowed: it was stamped by a clock ahead, and a routine sweep trusting it
 * would miss every row changed until real time caught up. `undefined` for a cursor to trust.
 */
export function cursorAheadMs(read: CursorRead, clockSkewMs: number): number | undefined {
    if (!read.cursor || !read.storedAt) return undefined;
    const ahead = Date.parse(read.cursor.sweptAt) - Date.parse(read.storedAt);
    return ahead > clockSkewMs ? ahead : undefined;
}

/**
 * The instant a routine sweep reads rows modified since: the cursor's time, moved back by the
 * clock skew allowed (Smartsheet's servers, and cursors stored before #18.9 by an instance's own
 * clock), down to Smartsheet's whole second, and one second more, so a row changed in the
 * cursor's own second is read again.
 */
export function rowsModifiedSince(cursor: IntakeCursor, clockSkewMs: number): Date {
    const earliest = Date.parse(cursor.sweptAt) - clockSkewMs;
    return new Date(Math.floor(earliest / 1000) * 1000 - 1000);
}
