import type { JobRow, JobRowInput } from "../jobs/JobRow";
import { AmbiguousWriteError, isSmartsheetError } from "../smartsheet/errors";
import { ClaimedElsewhereError } from "./errors";
import type { ProvisioningDeps } from "./ProvisioningDeps";
import type { StepContext } from "./runStep";

export interface ClaimedWrite<T> {
    /** The claim's key on the row: `folder`, `copy:<template>`, `register`. */
    key: string;
    /** The result if the row already records it. */
    recorded(row: JobRow): T | undefined;
    /** Looks in Smartsheet for what an earlier run may have created (list a folder, read a sheet). */
    look(): Promise<T | undefined>;
    /** Look even without a claim on the row (the destination may hold things from before the job). */
    alwaysLook?: boolean;
    /** The non-idempotent write itself. */
    write(): Promise<T>;
    /** The row with the result recorded; the claim is removed by `underClaim`. */
    record(row: JobRow, result: T): JobRowInput;
}

/**
 * Performs a write that Smartsheet cannot de-duplicate, exactly once across crashes, retries
 * and concurrent duplicate runs: adopt what the row records; wait while another run's claim is
 * fresh; look before writing whenever an earlier claim shows a write may have happened; claim;
 * write; record. After an ambiguous failure it waits for the write to settle and looks again
 * rather than writing twice.
 */
export async function underClaim<T>(deps: ProvisioningDeps, context: StepContext, claimed: ClaimedWrite<T>): Promise<T> {
    const { claimTtlMs, claimPollMs, settleMs } = deps.timing;
    // Another run is writing right now (or died doing so a moment ago): wait for it.
    const fresh = (row: JobRow) => {
        const claim = row.claims[claimed.key];
        return (
            claim !== undefined &&
            claim.writing &&
            claim.by !== context.runId &&
            deps.now().getTime() - Date.parse(claim.claimedAt) < claimTtlMs
        );
    };
    const record = (result: T) =>
        context.update((row) => {
            const { [claimed.key]: _, ...claims } = row.claims;
            return { ...claimed.record(row, result), claims };
        });

    let row = context.row;
    for (;;) {
        const known = claimed.recorded(row);
        if (known !== undefined) return known;
        if (fresh(row)) {
            await deps.sleep(claimPollMs);
            row = await context.update(() => undefined);
            continue;
        }
        if (claimed.alwaysLook || row.claims[claimed.key]) {
            const found = await claimed.look();
            if (found !== undefined) {
                await record(found);
                return found;
            }
        }
        try {
            row = await context.update((latest) => {
                if (claimed.recorded(latest) !== undefined) return undefined;
                if (fresh(latest)) throw new ClaimedElsewhereError(`another run is writing ${claimed.key}`);
                return {
                    ...latest,
                    claims: { ...latest.claims, [claimed.key]: { claimedAt: deps.now().toISOString(), by: context.runId, writing: true } },
                };
            });
        } catch (error) {
            if (error instanceof ClaimedElsewhereError) {
                row = await context.update(() => undefined);
                continue;
            }
            throw error;
        }
        if (claimed.recorded(row) !== undefined) continue;
        break;
    }

    let result: T;
    try {
        result = await claimed.write();
    } catch (error) {
        if (error instanceof AmbiguousWriteError) {
            deps.log.warn(`${claimed.key}: ${error.message}; looking again in ${settleMs} ms`);
            await deps.sleep(settleMs);
            const found = await claimed.look();
            if (found !== undefined) {
                await record(found);
                return found;
            }
            // The claim stays, no longer writing: whoever tries next looks before writing, without waiting.
            await context.update((row) => {
                const claim = row.claims[claimed.key];
                return claim ? { ...row, claims: { ...row.claims, [claimed.key]: { ...claim, writing: false } } } : undefined;
            });
        } else if (isSmartsheetError(error) && error.kind === "permanent") {
            // Refused before anything was made: nothing to look for next time.
            await context.update((row) => {
                const { [claimed.key]: _, ...claims } = row.claims;
                return { ...row, claims };
            });
        }
        throw error;
    }
    await record(result);
    return result;
}
