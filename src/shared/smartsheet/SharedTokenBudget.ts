import { createHash } from "node:crypto";
import { systemClock, type BudgetAnswer, type Clock, type RequestBudget } from "./RateLimiter";
import { clockOffBeyond, StorageClockEstimate, type StorageTime } from "./storageClock";
import type { Telemetry } from "../telemetry/Telemetry";

/**
 * A window is cut into this many slices; a lease is good only in the slice it was taken for.
 * Forty: 1.5 s slices of Smartsheet's minute. The limit is spread over SLICES_SHARING_THE_LIMIT
 * slices, so busy instances together, and a lone one, reach SLICES_PER_WINDOW ÷
 * SLICES_SHARING_THE_LIMIT of it over time: 40/42 = 0.952 (with twenty slices of 3 s it was
 * 20/22 = 0.909). The price is the clock difference between instances that the guarantee allows
 * for: half a slice, 0.75 s with a 60 s window (1.5 s with twenty).
 */
export const SLICES_PER_WINDOW = 40;
/**
 * Any window of `windowMs` touches at most SLICES_PER_WINDOW + 1 slices, and one more when the
 * instances' clocks differ by up to half a slice (the other half is room for a granted request's
 * time on its way to Smartsheet): no run of this many consecutive slices is granted more than the
 * limit, so that no window can hold more than the limit.
 */
export const SLICES_SHARING_THE_LIMIT = SLICES_PER_WINDOW + 2;
/** The slices before the current one whose grants the row keeps: with it, a run of SLICES_SHARING_THE_LIMIT. */
const EARLIER_SLICES = SLICES_SHARING_THE_LIMIT - 1;
/**
 * The most of the limit one slice may grant, however much the slices before it left unspent: a
 * burst goes out at up to five times the even pace of a window (a quarter of the limit per 3 s of
 * a 60 s window, whatever the slices' length) rather than all at once, and the whole window is
 * never one instance's prize in one race for the row.
 */
const SLICE_CAP_SHARE = 5 / SLICES_PER_WINDOW;

/** The most requests one slice may grant: the even share at least, five times the window's even pace at most (rounded up). */
export function sliceCap(limit: number): number {
    return Math.max(1, Math.ceil(limit * SLICE_CAP_SHARE));
}

/** The length of one slice of the budget's window. */
export function budgetSliceMs(windowMs: number): number {
    return windowMs / SLICES_PER_WINDOW;
}

/**
 * The longest the budget itself holds back a request while its window still has room: until the
 * next slice (up to a slice), plus the spread that keeps refused instances from colliding (a
 * tenth of one), plus half a slice behind an instance whose clock is ahead, plus a lease's
 * storage round trip. Two slices cover it; a rate-limit deadline shorter than this would refuse,
 * unsent, requests the budget only paces.
 */
export function budgetPacingWaitMs(windowMs: number): number {
    return 2 * budgetSliceMs(windowMs);
}
/** The longest one storage call of the budget may take before the instance falls back. */
const STORAGE_TIMEOUT_MS = 2_000;
/** Storage answers within this when it is well: a call cut short by a request's deadline after this long says it is not. */
const STORAGE_SLOW_MS = 500;
/** ETag conflicts in a row before an instance steps back for a moment. */
const LEASE_ATTEMPTS = 8;
/** A row this many slices ahead of our clock is skew we wait out; further ahead, a clock gone wrong. */
const MAX_SLICES_AHEAD = 2;

/**
 * What the stored row of a token says: the slice being leased, how much of it is granted, how
 * much each slice before it was granted, and a shared 429 pause.
 */
export interface BudgetRow {
    slice: number;
    granted: number;
    /**
     * Requests granted in each of the slices before `slice`, the latest first (up to
     * SLICES_SHARING_THE_LIMIT − 1 of them; missing ones granted none). A row written before the
     * budget kept them has none: read as each slice having granted its even share of the limit.
     */
    earlier?: number[];
    /** Storage-clock time (ms) until which every instance holds back after a 429; 0 for none. */
    pausedUntil: number;
    /**
     * How many slices a window has in the numbering `slice` and `earlier` count in: the
     * SLICES_PER_WINDOW of the instance that wrote the row. A row without it was written by a
     * version of the app that cut a window into twenty (see `grantsSeenFrom`).
     */
    slicesPerWindow?: number;
}

export interface StoredBudgetRow extends BudgetRow {
    etag: string;
}

/**
 * The one stored row per token that holds its budget; `BudgetTable` keeps it in an Azure Table.
 * Each call passes `onStorageTime` what its answer showed of the storage service's clock, if anything.
 */
export interface BudgetRows {
    read(tokenHash: string, signal: AbortSignal, onStorageTime?: (time: StorageTime) => void): Promise<StoredBudgetRow | undefined>;
    /** `undefined`: another instance created the row first. */
    create(tokenHash: string, row: BudgetRow, signal: AbortSignal, onStorageTime?: (time: StorageTime) => void): Promise<StoredBudgetRow | undefined>;
    /** `undefined`: the row changed (or went) since `etag` was read. */
    replace(
        tokenHash: string,
        row: BudgetRow,
        etag: string,
        signal: AbortSignal,
        onStorageTime?: (time: StorageTime) => void,
    ): Promise<StoredBudgetRow | undefined>;
}

export interface SharedTokenBudgetOptions {
    /** Hashed at once; only the hash is kept, stored and logged. */
    accessToken: string;
    /** Requests per window for every instance of the app together (Smartsheet: 300 a minute per token). */
    limit: number;
    windowMs?: number;
    /** The most requests one lease takes (fewer storage transactions against a fairer share). */
    leaseSize: number;
    /** While storage cannot be reached, this instance paces itself to `limit` ÷ this. */
    fallbackInstances: number;
    rows: BudgetRows;
    clock?: Clock;
    log?: (level: "info" | "warn", message: string) => void;
    /** Counts each request granted, under `tokenSetting` (the app setting's name, never the token). */
    telemetry?: Telemetry;
    tokenSetting?: string;
}

/** Counters since the budget was made (and per log line, since the last line). */
interface BudgetStats {
    leases: number;
    leased: number;
    used: number;
    usedOnFallback: number;
    conflicts: number;
    slicesSpentOut: number;
    /** Leased, not sent before the lease's slice ended, and handed back to the window with the next lease. */
    handedBack: number;
    storageTransactions: number;
}

/** The short hex fingerprint a token's budget is stored and logged under; never the token itself. */
export function tokenHashOf(accessToken: string): string {
    return createHash("sha256").update(accessToken, "utf8").digest("hex").slice(0, 16);
}

/**
 * Requests `slice` may grant out of `limit` a window shared by `sharers`: whole numbers spread so
 * that any SLICES_SHARING_THE_LIMIT consecutive slices add up to `limit` ÷ `sharers` (rounded).
 */
export function sliceBudget(slice: number, limit: number, sharers = 1): number {
    const slices = SLICES_SHARING_THE_LIMIT * sharers;
    return Math.floor(((slice + 1) * limit) / slices) - Math.floor((slice * limit) / slices);
}

/** The slices a window had in rows written before rows said how many (`BudgetRow.slicesPerWindow`). */
const LEGACY_SLICES_PER_WINDOW = 20;

/** Whether the row's slices are ours: written by an instance that cuts a window into as many slices as this one. */
function sameSlicing(row: BudgetRow): boolean {
    return (row.slicesPerWindow ?? LEGACY_SLICES_PER_WINDOW) === SLICES_PER_WINDOW;
}

/**
 * The row's grants as seen from `slice`: what each of the EARLIER_SLICES slices before it was
 * granted (the latest first) and what `slice` itself has been. A row whose slice is ahead of
 * `slice` (a clock gone wrong, taken back) counts all it holds as granted just before.
 *
 * So does a row written with another number of slices a window (an instance of an older or newer
 * version, while a deployment rolls out), as long as the slice it was written in ended less than a
 * run of SLICES_SHARING_THE_LIMIT slices ago, measured in time: what it holds was granted within
 * its own run, which that ends before ours. A row of that kind from before the grants were kept
 * counts as the whole limit. Never less than the row held, so two versions at once stay under the
 * limit (each counts the other's grants whole until they are a window old: slower, never past it).
 */
export function grantsSeenFrom(row: BudgetRow, slice: number, limit: number): { earlier: number[]; inSlice: number } {
    const earlier = new Array<number>(EARLIER_SLICES).fill(0);
    if (!sameSlicing(row)) {
        const rowSlices = row.slicesPerWindow ?? LEGACY_SLICES_PER_WINDOW;
        // The end of the row's slice, in our slices (fractional).
        const rowSliceEnds = ((row.slice + 1) * SLICES_PER_WINDOW) / rowSlices;
        if (!(rowSliceEnds > slice - EARLIER_SLICES)) return { earlier, inSlice: 0 };
        earlier[0] = row.earlier ? row.granted + row.earlier.reduce((sum, n) => sum + n, 0) : limit;
        return { earlier, inSlice: 0 };
    }
    const rowEarlier = row.earlier ?? Array.from({ length: EARLIER_SLICES }, (_, back) => sliceBudget(row.slice - 1 - back, limit));
    if (row.slice > slice) {
        earlier[0] = row.granted + rowEarlier.reduce((sum, n) => sum + n, 0);
        return { earlier, inSlice: 0 };
    }
    const gap = slice - row.slice;
    [row.granted, ...rowEarlier].forEach((granted, back) => {
        // `back` slices before the row's slice: gap + back slices before `slice` (0: `slice` itself).
        const at = gap + back - 1;
        if (at >= 0 && at < EARLIER_SLICES) earlier[at] = granted;
    });
    return { earlier, inSlice: gap === 0 ? row.granted : 0 };
}

/**
 * One request budget per Smartsheet token, shared by every instance of the app through one stored
 * row. Time is cut into slices; an instance leases a few requests of the current slice with a
 * conditional (ETag) write, spends them, and leases again. The row keeps what each of the last
 * slices was granted, and a slice may grant what the slices before it in the same run of
 * SLICES_SHARING_THE_LIMIT left unspent, up to an eighth of the limit (`sliceCap`): a burst after
 * a quiet spell is not held to the even pace, and no run, so no window, ever holds more than the
 * limit. One instance leases at most at the cap's pace, so that the others reach the row between
 * its leases. A lease is good only in its slice; what an instance leased and did not send is
 * handed back with its next lease (one that dies holding a lease strands at most that lease, for
 * one run). When storage cannot be reached, the instance paces itself to a conservative share
 * instead of stopping.
 */
export class SharedTokenBudget implements RequestBudget {
    readonly tokenHash: string;
    readonly sliceMs: number;
    private readonly windowMs: number;
    private readonly clock: Clock;
    /** The row as we last wrote or read it: a lease first tries its ETag without reading… */
    private row: StoredBudgetRow | undefined;
    /** …unless other instances wrote it lately: then the ETag is stale and a read first is cheaper. */
    private othersLeasing = false;
    private held = { slice: NaN, left: 0 };
    /** What every instance together had been granted in the last SLICES_SHARING_THE_LIMIT slices, at our last lease. */
    private grantedInRun = 0;
    /** Clock time before which this instance does not lease again (see `leased`). */
    private nextLeaseAt = 0;
    private spentOutSlice = NaN;
    private sharedPauseUntil = 0;
    private usage = { slice: NaN, used: 0, usedInSliceBefore: 0 };
    private fallback: { retryStorageAt: number; delayMs: number; slice: number; used: number } | undefined;
    private pauseWrites: Promise<void> = Promise.resolve();
    /** The storage service's clock, which every instance shares: slices, pauses and every time below are on it. */
    private readonly storageClock = new StorageClockEstimate();
    /** The offset of this instance's clock we last warned of, so that we warn again only when it changes. */
    private ownClockWarned: number | undefined;
    /** The stored pause, further ahead than any back-off, that we held back for once already (see `honourPause`). */
    private pauseTakenForWrong = NaN;
    private readonly total: BudgetStats = emptyStats();
    private period = { window: NaN, firstSlice: NaN, lastSlice: NaN, stats: emptyStats(), clockWarned: false };

    constructor(private readonly options: SharedTokenBudgetOptions) {
        const { limit, leaseSize, fallbackInstances } = options;
        if (!Number.isInteger(limit) || limit < 1) throw new TypeError("Expected `limit` to be a positive integer.");
        if (!Number.isInteger(leaseSize) || leaseSize < 1) throw new TypeError("Expected `leaseSize` to be a positive integer.");
        if (!Number.isInteger(fallbackInstances) || fallbackInstances < 1) {
            throw new TypeError("Expected `fallbackInstances` to be a positive integer.");
        }
        this.tokenHash = tokenHashOf(options.accessToken);
        this.windowMs = options.windowMs ?? 60_000;
        this.sliceMs = budgetSliceMs(this.windowMs);
        this.clock = options.clock ?? systemClock;
    }

    stats(): BudgetStats {
        return { ...this.total };
    }

    /** `deadline` and the answer's `retryAt` are on this instance's own clock, as the rate limiter keeps time. */
    async take(waiting: number, deadline: number): Promise<BudgetAnswer> {
        const answer = await this.takeOnStorageClock(waiting, deadline + this.offsetMs());
        if (answer.granted) return answer;
        // A time to ask again is always ahead: once taken back to our clock, rounding must not make it now (the limiter would ask at once, forever).
        const now = this.clock.now();
        const retryAt = answer.retryAt - this.offsetMs();
        return { granted: false, retryAt: retryAt > now ? retryAt : now + 1 };
    }

    /** `until` on this instance's own clock. */
    async sharePause(until: number): Promise<void> {
        const onStorageClock = until + this.offsetMs();
        this.sharedPauseUntil = Math.max(this.sharedPauseUntil, onStorageClock);
        const write = this.pauseWrites.then(() => this.writePause(onStorageClock));
        this.pauseWrites = write;
        await write;
    }

    /** Storage-clock time, as well as this instance can tell it (its own clock until storage has answered once). */
    private now(): number {
        return this.clock.now() + this.offsetMs();
    }

    private offsetMs(): number {
        return this.storageClock.current()?.offsetMs ?? 0;
    }

    private async takeOnStorageClock(waiting: number, deadline: number): Promise<BudgetAnswer> {
        for (;;) {
            const now = this.now();
            const slice = Math.floor(now / this.sliceMs);
            this.noteSlice(slice);
            this.reportEachWindow(now, slice);
            if (this.sharedPauseUntil > now) return { granted: false, retryAt: this.sharedPauseUntil };
            if (this.held.slice === slice && this.held.left > 0) {
                this.held.left -= 1;
                return this.grant();
            }
            if (this.fallback && now < this.fallback.retryStorageAt) return this.takeFromFallback(slice, now);
            if (this.spentOutSlice === slice) return this.refusedUntilNextSlice(slice);
            // Our last lease was a moment ago: let the other instances at the row between our leases.
            if (now < this.nextLeaseAt) return { granted: false, retryAt: this.nextLeaseAt };
            // Ran out in the slice before: demand is above our share, take whole leases. Else as much as we are likely to use.
            const hungry = this.spentOutSlice === slice - 1;
            const want = hungry
                ? this.options.leaseSize
                : Math.min(this.options.leaseSize, Math.max(1, waiting, this.usage.used, this.usage.usedInSliceBefore));
            const answer = await this.lease(slice, want, now, deadline);
            // Leased (or fallen back): take from it, unless the slice ended while we asked.
            if (answer === "ask again") continue;
            return answer;
        }
    }

    private grant(): BudgetAnswer {
        this.usage.used += 1;
        this.count("used");
        this.options.telemetry?.count("sheetwright.budget.use", { token: this.options.tokenSetting });
        return { granted: true };
    }

    private async lease(slice: number, want: number, now: number, deadline: number): Promise<BudgetAnswer | "ask again"> {
        const timeoutMs = Math.min(STORAGE_TIMEOUT_MS, deadline - now);
        // Too little time left to ask storage: a refusal the rate limiter turns into "not sent".
        if (!(timeoutMs > 0)) return { granted: false, retryAt: now + STORAGE_TIMEOUT_MS };
        // Whole milliseconds: AbortSignal.timeout refuses a fraction (deadlines and slices need not be whole).
        const signal = AbortSignal.timeout(Math.ceil(timeoutMs));
        const { limit } = this.options;
        try {
            for (let attempt = 0; attempt < LEASE_ATTEMPTS; attempt++) {
                const row = (this.othersLeasing ? undefined : this.row) ?? (await this.read(signal));
                // The answer moved our reading of the storage clock into another slice (the first answer after start-up): start again.
                if (Math.floor(this.now() / this.sliceMs) !== slice) return "ask again";
                if (!row) {
                    const granted = Math.min(want, sliceCap(limit));
                    const created = await this.storage((onStorageTime) =>
                        this.options.rows.create(this.tokenHash, { slice, granted, earlier: [], pausedUntil: 0, slicesPerWindow: SLICES_PER_WINDOW }, signal, onStorageTime),
                    );
                    if (created) return this.leased(created, slice, granted, granted === sliceCap(limit), 0, granted, now);
                    this.count("conflicts");
                    continue;
                }
                if (row.pausedUntil > now && this.honourPause(row.pausedUntil, now)) {
                    this.row = row;
                    return { granted: false, retryAt: this.sharedPauseUntil };
                }
                if (sameSlicing(row) && row.slice > slice) {
                    this.row = row;
                    // Another instance's clock is ahead of ours: its slice had begun when it wrote the row, before this moment.
                    const aheadAtLeastMs = this.startOf(row.slice) - this.now();
                    const clockGoneWrong = row.slice > slice + MAX_SLICES_AHEAD;
                    if (aheadAtLeastMs > this.sliceMs / 2 || clockGoneWrong) this.warnClockAhead(aheadAtLeastMs, clockGoneWrong);
                    if (!clockGoneWrong) return { granted: false, retryAt: this.startOf(row.slice) };
                }
                const { earlier, inSlice } = grantsSeenFrom(row, slice, limit);
                // (A row of another slicing counts what it holds whole: nothing of ours to take off.)
                const handedBack = sameSlicing(row) && row.slice <= slice ? this.handBack(earlier, slice) : 0;
                const room = Math.min(limit - sum(earlier), sliceCap(limit)) - inSlice;
                const granted = Math.min(want, room);
                if (granted <= 0) {
                    this.row = row;
                    return this.spentOut(slice);
                }
                const replaced = await this.storage((onStorageTime) =>
                    this.options.rows.replace(
                        this.tokenHash,
                        {
                            slice,
                            granted: inSlice + granted,
                            earlier: withoutTrailingZeros(earlier),
                            pausedUntil: row.pausedUntil,
                            slicesPerWindow: SLICES_PER_WINDOW,
                        },
                        row.etag,
                        signal,
                        onStorageTime,
                    ),
                );
                if (replaced) return this.leased(replaced, slice, granted, granted === room, handedBack, sum(earlier) + inSlice + granted, now);
                this.row = undefined;
                this.othersLeasing = true;
                this.count("conflicts");
            }
            // Many instances at once on the row: step back a moment (random, so they spread out).
            return { granted: false, retryAt: now + 1 + Math.floor(Math.random() * (this.sliceMs / 10)) };
        } catch (error) {
            const cutShortByDeadline = signal.aborted && timeoutMs < STORAGE_TIMEOUT_MS;
            if (cutShortByDeadline && timeoutMs < STORAGE_SLOW_MS) return { granted: false, retryAt: deadline + 1 };
            this.fallBack(error, now);
            return "ask again";
        }
    }

    /**
     * Takes what this instance leased in an earlier slice and did not send off that slice's count
     * in `earlier` (the lease lapsed with its slice: those requests can no longer go), so that the
     * rest of the window may grant them again. Returns how many.
     */
    private handBack(earlier: number[], slice: number): number {
        const { slice: heldSlice, left } = this.held;
        const at = slice - heldSlice - 1;
        if (!(left > 0) || !(at >= 0 && at < earlier.length)) return 0;
        const back = Math.min(left, earlier[at]!);
        earlier[at] = earlier[at]! - back;
        return back;
    }

    private async read(signal: AbortSignal): Promise<StoredBudgetRow | undefined> {
        const row = await this.storage((onStorageTime) => this.options.rows.read(this.tokenHash, signal, onStorageTime));
        // Nobody wrote since we did: our ETag is good again.
        if (row && row.etag === this.row?.etag) this.othersLeasing = false;
        return row;
    }

    /** One storage call; what its answer shows of the storage service's clock sets ours. */
    private async storage<T>(call: (onStorageTime: (time: StorageTime) => void) => Promise<T>): Promise<T> {
        this.count("storageTransactions");
        const sentAt = this.clock.now();
        let shown: StorageTime | undefined;
        try {
            return await call((time) => (shown = time));
        } finally {
            if (shown) this.observeStorageTime(sentAt, this.clock.now(), shown);
        }
    }

    private observeStorageTime(sentAt: number, answeredAt: number, time: StorageTime): void {
        this.storageClock.observe(sentAt, answeredAt, time);
        const offset = this.storageClock.current()!;
        const { offsetMs, uncertaintyMs } = offset;
        const allowanceMs = this.sliceMs / 2;
        if (!clockOffBeyond(offset, allowanceMs)) return;
        if (this.ownClockWarned !== undefined && Math.abs(offsetMs - this.ownClockWarned) <= allowanceMs) return;
        this.ownClockWarned = offsetMs;
        this.options.log?.(
            "warn",
            `Smartsheet budget of token ${this.tokenHash}: this instance's clock is ${(Math.abs(offsetMs) / 1000).toFixed(2)} s ` +
                `${offsetMs < 0 ? "ahead of" : "behind"} the storage service's (±${(uncertaintyMs / 1000).toFixed(2)} s, from its answers). ` +
                `The budget keeps its slices and 429 pauses on the storage service's clock, so the limit holds; but the staleness ` +
                `and claim checks compare this clock with the others' (MAX_CLOCK_SKEW_SECONDS allows for the difference). ` +
                `Check this host's time synchronisation.`,
        );
    }

    /**
     * Whether to hold back for a 429 pause the row holds, and till when. A pause longer than a
     * window is longer than any back-off: a clock gone wrong stamped it (an instance of a version
     * that stamped its own clock). Such a pause is held for one window at most, once.
     */
    private honourPause(pausedUntil: number, now: number): boolean {
        if (pausedUntil <= now + this.windowMs) {
            this.sharedPauseUntil = Math.max(this.sharedPauseUntil, pausedUntil);
            return true;
        }
        if (pausedUntil === this.pauseTakenForWrong) return false;
        this.pauseTakenForWrong = pausedUntil;
        this.sharedPauseUntil = Math.max(this.sharedPauseUntil, now + this.windowMs);
        this.options.log?.(
            "warn",
            `Smartsheet budget of token ${this.tokenHash}: the shared row holds a 429 pause until ${((pausedUntil - now) / 1000).toFixed(2)} s ` +
                `from now, longer than any back-off: a clock gone wrong wrote it; holding back ${this.windowMs / 1000} s at most, once. ` +
                `Check the instances' time synchronisation.`,
        );
        return true;
    }

    private leased(
        row: StoredBudgetRow,
        slice: number,
        granted: number,
        lastOfSlice: boolean,
        handedBack: number,
        grantedInRun: number,
        askedAt: number,
    ): "ask again" {
        this.row = row;
        this.held = { slice, left: granted };
        this.grantedInRun = grantedInRun;
        // One instance leases at most at the pace of a slice's cap, spread over the slice: the others get to the row in between.
        this.nextLeaseAt = Math.min(askedAt + (granted * this.sliceMs) / sliceCap(this.options.limit), this.startOf(slice + 1));
        this.count("handedBack", handedBack);
        // We took the rest: no need to ask storage again to learn that the slice is spent.
        if (lastOfSlice) this.noteSpentOut(slice);
        this.count("leases");
        this.count("leased", granted);
        if (this.fallback) {
            this.fallback = undefined;
            this.options.log?.("info", `Smartsheet budget of token ${this.tokenHash}: storage answers again; back on the shared budget`);
        }
        return "ask again";
    }

    private spentOut(slice: number): BudgetAnswer {
        this.noteSpentOut(slice);
        return this.refusedUntilNextSlice(slice);
    }

    private noteSpentOut(slice: number): void {
        this.spentOutSlice = slice;
        this.count("slicesSpentOut");
    }

    private refusedUntilNextSlice(slice: number): BudgetAnswer {
        // Spread out: every instance refused would otherwise be back at the same moment, and collide.
        return { granted: false, retryAt: this.startOf(slice + 1) + Math.floor(Math.random() * (this.sliceMs / 10)) };
    }

    private takeFromFallback(slice: number, now: number): BudgetAnswer {
        const fallback = this.fallback!;
        if (fallback.slice !== slice) {
            fallback.slice = slice;
            fallback.used = 0;
        }
        if (fallback.used < sliceBudget(slice, this.options.limit, this.options.fallbackInstances)) {
            fallback.used += 1;
            this.count("usedOnFallback");
            return this.grant();
        }
        return { granted: false, retryAt: Math.max(now + 1, Math.min(this.startOf(slice + 1), fallback.retryStorageAt)) };
    }

    private fallBack(error: unknown, now: number): void {
        // First after a twentieth of the window (3 s of a minute, whatever the slices' length), then less and less often.
        const delayMs = this.fallback ? Math.min(this.fallback.delayMs * 2, this.windowMs) : this.windowMs / 20;
        const first = !this.fallback;
        this.fallback = { retryStorageAt: now + delayMs, delayMs, slice: this.fallback?.slice ?? NaN, used: this.fallback?.used ?? 0 };
        this.row = undefined;
        if (!first) return;
        const { limit, fallbackInstances } = this.options;
        const share = Math.floor(limit / fallbackInstances);
        this.options.log?.(
            "warn",
            `Smartsheet budget of token ${this.tokenHash}: storage did not answer (${describeError(error)}); this instance ` +
                `paces itself alone to ${share} requests per ${this.windowMs / 1000} s (the limit ${limit} ÷ ${fallbackInstances} ` +
                `instances assumed) until it does; it asks again in ${Math.round(delayMs / 100) / 10} s, then less and less often. ` +
                `Check that the app reaches its storage account (AzureWebJobsStorage) and its Jobs table.`,
        );
    }

    private async writePause(until: number): Promise<void> {
        if (this.fallback) return;
        const signal = AbortSignal.timeout(STORAGE_TIMEOUT_MS);
        const now = this.now();
        try {
            for (let attempt = 0; attempt < LEASE_ATTEMPTS; attempt++) {
                const row = (this.othersLeasing ? undefined : this.row) ?? (await this.read(signal));
                if (row && row.pausedUntil >= until) return;
                const written = row
                    ? await this.storage((onStorageTime) =>
                          this.options.rows.replace(
                              this.tokenHash,
                              // The row's grants as they are, in the row's own slicing.
                              { slice: row.slice, granted: row.granted, earlier: row.earlier, pausedUntil: until, slicesPerWindow: row.slicesPerWindow },
                              row.etag,
                              signal,
                              onStorageTime,
                          ),
                      )
                    : await this.storage((onStorageTime) =>
                          this.options.rows.create(
                              this.tokenHash,
                              { slice: Math.floor(now / this.sliceMs), granted: 0, earlier: [], pausedUntil: until, slicesPerWindow: SLICES_PER_WINDOW },
                              signal,
                              onStorageTime,
                          ),
                      );
                this.row = written;
                if (written) return;
                this.othersLeasing = true;
                this.count("conflicts");
            }
        } catch (error) {
            // This instance holds back anyway; the others learn of the 429 from their own.
            this.fallBack(error, now);
        }
    }

    private warnClockAhead(aheadAtLeastMs: number, takingRowBack: boolean): void {
        if (this.period.clockWarned) return;
        this.period.clockWarned = true;
        this.options.log?.(
            "warn",
            `Smartsheet budget of token ${this.tokenHash}: the shared row was stamped at least ${(aheadAtLeastMs / 1000).toFixed(2)} s ahead of ` +
                `the storage service's clock as this instance reads it (its slice had begun): an instance of a version that stamps its ` +
                `own clock, or one that cannot read the storage clock; the budget keeps every window within the limit only while ` +
                `the instances' slices agree to within ${this.sliceMs / 2000} s, so Smartsheet may answer 429. ` +
                `${takingRowBack ? "Taking the row back to the storage clock's slice. " : ""}Check the instances' time synchronisation.`,
        );
    }

    private noteSlice(slice: number): void {
        if (this.usage.slice === slice) return;
        this.usage = { slice, used: 0, usedInSliceBefore: this.usage.slice === slice - 1 ? this.usage.used : 0 };
    }

    /** One line per window with activity: the share this instance took and what it cost. */
    private reportEachWindow(now: number, slice: number): void {
        const window = Math.floor(now / this.windowMs);
        if (window !== this.period.window) {
            const { stats, firstSlice, lastSlice } = this.period;
            const requests = stats.used;
            if (requests > 0 || stats.storageTransactions > 0) {
                this.options.log?.(
                    "info",
                    `Smartsheet budget of token ${this.tokenHash}, slices ${firstSlice}–${lastSlice} of ${this.sliceMs / 1000} s: ` +
                        `leased ${stats.leased} in ${stats.leases} leases, used ${requests}` +
                        (stats.usedOnFallback > 0 ? ` (${stats.usedOnFallback} on the fallback share, storage unreachable)` : "") +
                        `, ${stats.handedBack} handed back unused, ${stats.conflicts} ETag conflicts, ${stats.slicesSpentOut} slices spent out; ` +
                        `${stats.storageTransactions} storage transactions (${requests > 0 ? (stats.storageTransactions / requests).toFixed(2) : "–"} per request); ` +
                        `all instances together ${this.grantedInRun} granted in the last ${SLICES_SHARING_THE_LIMIT} slices at this instance's last lease; ` +
                        `limit ${this.options.limit} per ${this.windowMs / 1000} s for all instances`,
                );
            }
            this.period = { window, firstSlice: slice, lastSlice: slice, stats: emptyStats(), clockWarned: false };
        }
        this.period.lastSlice = slice;
    }

    private count(counter: keyof BudgetStats, by = 1): void {
        this.total[counter] += by;
        this.period.stats[counter] += by;
    }

    private startOf(slice: number): number {
        return slice * this.sliceMs;
    }
}

function sum(numbers: number[]): number {
    return numbers.reduce((total, n) => total + n, 0);
}

/** `earlier` as stored: slices past the last one that granted anything granted none. */
function withoutTrailingZeros(earlier: number[]): number[] {
    let length = earlier.length;
    while (length > 0 && earlier[length - 1] === 0) length--;
    return earlier.slice(0, length);
}

function emptyStats(): BudgetStats {
    return { leases: 0, leased: 0, used: 0, usedOnFallback: 0, conflicts: 0, slicesSpentOut: 0, handedBack: 0, storageTransactions: 0 };
}

function describeError(error: unknown): string {
    const err = error as { name?: string; code?: unknown; statusCode?: unknown; message?: unknown };
    const code = typeof err?.code === "string" ? err.code : typeof err?.statusCode === "number" ? String(err.statusCode) : err?.name ?? "error";
    const message = typeof err?.message === "string" ? err.message.split("\n")[0]!.slice(0, 200) : String(error);
    return `${code}: ${message}`;
}
