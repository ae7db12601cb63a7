import { RestError, type TableClient } from "@azure/data-tables";
import { z } from "zod";

const PARTITION = "intake-cursor";
const WRITE_ATTEMPTS = 5;

/** Where the routine intake sweep carries on from: what the last fully successful sweep covered. */
export const IntakeCursor = z.object({
    /** When that sweep started, by this app's clock. */
    sweptAt: z.iso.datetime(),
    /** What it judged requests by besides their rows (product lines, template names): when these change, a rejected row may pass. */
    verdictInputs: z.string().min(1),
});
export type IntakeCursor = z.infer<typeof IntakeCursor>;

/** The cursor as read: none yet, or one that does not parse (`problem`), carries no `cursor`. */
export interface CursorRead {
    cursor?: IntakeCursor;
    etag?: string;
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
        let entity: Record<string, unknown> & { etag: string };
        try {
            entity = await this.table.getEntity<Record<string, unknown>>(PARTITION, String(intakeSheetId));
        } catch (error) {
            if (error instanceof RestError && error.statusCode === 404) return {};
            throw error;
        }
        const parsed = IntakeCursor.safeParse(entity);
        if (parsed.success) return { cursor: { sweptAt: parsed.data.sweptAt, verdictInputs: parsed.data.verdictInputs }, etag: entity.etag };
        return { etag: entity.etag, problem: parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ") };
    }

    /**
     * Moves the cursor to `next`, unless a sweep that started later already moved it further:
     * a conditional write on the ETag just read; when another sweep wrote in between, read and
     * decide again. Never moves the cursor back.
     */
    async advance(intakeSheetId: number, next: IntakeCursor): Promise<"advanced" | "kept"> {
        const entity = { partitionKey: PARTITION, rowKey: String(intakeSheetId), kind: "intakeCursor", ...IntakeCursor.parse(next) };
        for (let attempt = 1; ; attempt++) {
            const stored = await this.read(intakeSheetId);
            if (stored.cursor && Date.parse(stored.cursor.sweptAt) >= Date.parse(next.sweptAt)) return "kept";
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
 * The instant a routine sweep reads rows modified since: the cursor's sweep start, moved back by
 * the clock skew allowed (Smartsheet's clock may run behind ours), down to Smartsheet's whole
 * second, and one second more, so a row changed in the cursor's own second is read again.
 */
export function rowsModifiedSince(cursor: IntakeCursor, clockSkewMs: number): Date {
    const earliest = Date.parse(cursor.sweptAt) - clockSkewMs;
    return new Date(Math.floor(earliest / 1000) * 1000 - 1000);
}
