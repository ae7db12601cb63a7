import { LateWriteKind, type Claim, type JobRow } from "../jobs/JobRow";
import { AmbiguousWriteError, mayHaveLanded } from "../smartsheet/errors";
import type { ClaimKey } from "./claimKeys";
import { ClaimedElsewhereError } from "./errors";
import type { ProvisioningDeps } from "./ProvisioningDeps";
import type { StepContext } from "./runStep";

export interface ClaimedWrite<T> {
    key: ClaimKey;
    /** The result if the row already records it (or says there is nothing left to write). */
    recorded(row: JobRow): T | undefined;
    /**
     * Looks in Smartsheet for what an earlier run may have created (list a folder, read a sheet).
     * What it reads must have been read at or after `notBefore` (ms): by then the earlier write
     * was answered, or it is a late write the final audit looks for. `claimedAt` (ms): when the
     * earlier claim that makes it look was made (what it wrote cannot be older).
     */
    look(notBefore: number, claimedAt?: number): Promise<T | undefined>;
    /** What the write makes that the final audit must look for if it lands late; `nothing` when it only sets a value. */
    leaves: LateWriteKind | "nothing";
    /**
     * Look even without a claim on the row: the destination may hold things from before the job, or
     * what the row records is not to be trusted (an intake row a person may have edited).
     */
    alwaysLook?: boolean;
    /** The write itself. */
    write(): Promise<T>;
    /** The row with the result recorded (it sees the claim still on it); `underClaim` removes the claim. */
    record(row: JobRow, result: T): JobRow;
}

/**
 * The row with a write that may still land folded into its late-write horizon: the final audit
 * waits until then before the product may be done, and removes whatever landed unrecorded.
 */
export function foldUnsettled(row: JobRow, claim: Claim, horizonMs: number): JobRow {
    return laterLateWrites(row, Date.parse(claim.claimedAt) + horizonMs, claim.leaves);
}

/**
 * The row asking for the final audit no earlier than `until` (ms), keeping the later of both, and
 * to look for what a write that `leaves` it could have made (everything when that is not known).
 */
function laterLateWrites(row: JobRow, until: number, leaves: Claim["leaves"]): JobRow {
    const current = row.lateWritesUntil ? Date.parse(row.lateWritesUntil) : -Infinity;
    const known = row.lateWriteKinds ?? (row.lateWritesUntil ? LateWriteKind.options : []);
    const added = leaves === undefined ? LateWriteKind.options : leaves === "nothing" ? [] : [leaves];
    const kinds = LateWriteKind.options.filter((kind) => known.includes(kind) || added.includes(kind));
    return {
        ...row,
        lateWritesUntil: new Date(Math.max(until, current)).toISOString(),
        lateWriteKinds: kinds,
    };
}

/** A run is writing under this claim now (or may be: its time is not up). */
export function claimIsLive(deps: Pick<ProvisioningDeps, "now" | "timing">, claim: Claim | undefined): boolean {
    return claim !== undefined && claim.writing && deps.now().getTime() - Date.parse(claim.claimedAt) < deps.timing.claimTtlMs;
}

/**
 * Performs a write that must happen once across crashes, retries and concurrent duplicate
 * runs: adopt what the row records; wait while another run's claim is fresh (a claim lives as
 * long as one write can take: rate-limit waits and re-sends, the call timeout, the settle, and
 * clock skew); look before writing whenever an earlier claim shows a write may have happened;
 * claim; write; record. Every write whose outcome was not answered — an ambiguous failure, a
 * run that died holding its claim, a claim another run took over — is folded into the row's
 * late-write horizon, so the final audit waits for it and removes what it made unrecorded.
 * Recording never replaces another run's recorded result and never removes its live claim.
 */
export async function underClaim<T>(deps: ProvisioningDeps, context: StepContext, claimed: ClaimedWrite<T>): Promise<T> {
    const { claimPollMs, settleMs, lateWriteHorizonMs } = deps.timing;
    const live = (claim: Claim | undefined): claim is Claim => claim !== undefined && claimIsLive(deps, claim);
    const othersLive = (row: JobRow) => {
        const claim = row.claims[claimed.key];
        return live(claim) && claim.by !== context.runId;
    };
    /**
     * The claim gone from the row; folded into the horizon unless its own write was answered or it
     * was folded already (a claim no longer writing was, by the run that gave up or the final audit).
     */
    const withoutClaim = (row: JobRow, settled: boolean): JobRow => {
        const claim = row.claims[claimed.key];
        if (!claim || (claim.by !== context.runId && live(claim))) return row;
        const { [claimed.key]: _, ...claims } = row.claims;
        const answered = settled && claim.by === context.runId;
        return answered || !claim.writing ? { ...row, claims } : { ...foldUnsettled(row, claim, lateWriteHorizonMs), claims };
    };
    const record = async (result: T, settled: boolean): Promise<T> => {
        const row = await context.update((latest) => {
            const next = withoutClaim(latest, settled);
            const theirs = claimed.recorded(latest);
            if (theirs === undefined) return withoutClaim(claimed.record(latest, result), settled);
            // Another run recorded first: its result stands. Ours, if it differs, is an extra for the final audit.
            return JSON.stringify(theirs) === JSON.stringify(result) ? next : laterLateWrites(next, deps.now().getTime(), claimed.leaves);
        });
        return claimed.recorded(row) ?? result;
    };

    let row = await context.update(() => undefined);
    for (;;) {
        const known = claimed.recorded(row);
        if (known !== undefined) return known;
        if (othersLive(row)) {
            await deps.sleep(claimPollMs);
            row = await context.update(() => undefined);
            continue;
        }
        const earlier = row.claims[claimed.key];
        if (claimed.alwaysLook || earlier) {
            const now = deps.now().getTime();
            const claimedAt = earlier ? Date.parse(earlier.claimedAt) : undefined;
            const found = await claimed.look(claimedAt !== undefined ? Math.min(now, claimedAt + deps.timing.claimTtlMs) : now, claimedAt);
            if (found !== undefined) return record(found, false);
        }
        try {
            row = await context.update((latest) => {
                if (claimed.recorded(latest) !== undefined) return undefined;
                if (othersLive(latest)) throw new ClaimedElsewhereError(`another run is writing ${claimed.key}`);
                const next = withoutClaim(latest, false);
                const claimedAt = deps.now().toISOString();
                return {
                    ...next,
                    firstClaimAt: next.firstClaimAt ?? claimedAt,
                    claims: { ...next.claims, [claimed.key]: { claimedAt, by: context.runId, writing: true, leaves: claimed.leaves } },
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
            const found = await claimed.look(deps.now().getTime());
            if (found !== undefined) return record(found, false);
        }
        if (mayHaveLanded(error)) {
            // The claim stays, no longer writing: whoever tries next looks before writing, without waiting.
            await context.update((latest) => {
                const claim = latest.claims[claimed.key];
                if (claim?.by !== context.runId) return undefined;
                const next = foldUnsettled(latest, claim, lateWriteHorizonMs);
                return { ...next, claims: { ...next.claims, [claimed.key]: { ...claim, writing: false } } };
            });
        } else {
            // Refused or never sent: nothing was made, nothing to look for next time.
            await context.update((latest) => (latest.claims[claimed.key]?.by === context.runId ? withoutClaim(latest, true) : undefined));
        }
        throw error;
    }
    return record(result, true);
}
