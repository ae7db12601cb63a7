/** A small seeded PRNG (mulberry32): the same seed draws the same plan on every machine. */
export class Random {
    private state: number;

    constructor(seed: number) {
        this.state = seed >>> 0;
    }

    /** A float in [0, 1). */
    next(): number {
        this.state = (this.state + 0x6d2b79f5) >>> 0;
        let t = this.state;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    }

    /** An integer in [min, max]. */
    int(min: number, max: number): number {
        return min + Math.floor(this.next() * (max - min + 1));
    }

    chance(probability: number): boolean {
        return this.next() < probability;
    }

    pick<T>(items: readonly T[]): T {
        if (items.length === 0) throw new Error("pick from an empty list");
        return items[Math.floor(this.next() * items.length)]!;
    }

    /** Picks by weight: `[[item, weight], …]`. */
    weighted<T>(entries: ReadonlyArray<readonly [T, number]>): T {
        const total = entries.reduce((sum, [, weight]) => sum + weight, 0);
        let draw = this.next() * total;
        for (const [item, weight] of entries) {
            draw -= weight;
            if (draw < 0) return item;
        }
        return entries[entries.length - 1]![0];
    }
}

/**
 * The seed of schedule `index` of a run seeded `runSeed`: schedule 0 uses the run's seed itself,
 * so any schedule replays alone as `--seed <its seed> --schedules 1`.
 */
export function scheduleSeed(runSeed: number, index: number): number {
    if (index === 0) return runSeed >>> 0;
    let h = (Math.imul(runSeed >>> 0, 0x9e3779b1) ^ Math.imul(index, 0x85ebca6b)) >>> 0;
    h = Math.imul(h ^ (h >>> 16), 0x7feb352d) >>> 0;
    h = Math.imul(h ^ (h >>> 15), 0x846ca68b) >>> 0;
    return (h ^ (h >>> 16)) >>> 0;
}
