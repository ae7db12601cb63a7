/**
 * What one storage answer showed of the storage service's clock: while it handled the call, its
 * time lay within [earliest, latest] (ms since the epoch). A write's ETag names the instant it was
 * written, to the tenth of a microsecond; a `Date` header only the second.
 */
export interface StorageTime {
    earliest: number;
    latest: number;
}

/** How this instance's clock stands against the storage service's: add `offsetMs` to it to read the storage clock. */
interface ClockOffset {
    offsetMs: number;
    /** The estimate is this close at worst: half the narrowest bound it was drawn from. */
    uncertaintyMs: number;
}

/** The latest answers the estimate is drawn from: enough to find a quick round trip among them, few enough to follow drift. */
const BOUNDS_KEPT = 16;

/**
 * This instance's clock's offset from the storage service's, estimated from the answers the budget
 * gets anyway. One answer bounds the offset to [its storage time − when it came back, its storage
 * time − when the call went out]; the estimate is the middle of the narrowest of the latest bounds
 * (the quickest round trip: min-RTT filtering). A bound the latest answer contradicts is dropped at
 * once: this instance's clock was stepped, or has drifted, since.
 */
export class StorageClockEstimate {
    private bounds: Array<{ low: number; high: number }> = [];
    private best: ClockOffset | undefined;

    /** `sentAt` and `answeredAt` on this instance's clock, around the call that showed `time`. */
    observe(sentAt: number, answeredAt: number, time: StorageTime): void {
        if (![sentAt, answeredAt, time.earliest, time.latest].every(Number.isFinite) || answeredAt < sentAt || time.latest < time.earliest) return;
        const latest = { low: time.earliest - answeredAt, high: time.latest - sentAt };
        const agreeing = this.bounds.filter((bound) => bound.low <= latest.high && latest.low <= bound.high);
        this.bounds = [...agreeing, latest].slice(-BOUNDS_KEPT);
        const narrowest = this.bounds.reduce((best, bound) => (bound.high - bound.low < best.high - best.low ? bound : best));
        this.best = { offsetMs: (narrowest.low + narrowest.high) / 2, uncertaintyMs: (narrowest.high - narrowest.low) / 2 };
    }

    /** Undefined until an answer has shown the storage service's time. */
    current(): ClockOffset | undefined {
        return this.best;
    }
}

/** Whether `offset` is surely beyond `allowanceMs`: a difference the answers cannot tell apart from none is no finding. */
export function clockOffBeyond(offset: ClockOffset, allowanceMs: number): boolean {
    return Math.abs(offset.offsetMs) - offset.uncertaintyMs > allowanceMs;
}
