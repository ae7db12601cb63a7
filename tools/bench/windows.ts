/** The most of `times` (ms) in any one rolling window of `windowMs`: its start included, its end excluded. */
export function mostInAnyWindow(times: readonly number[], windowMs: number): number {
    const sorted = [...times].sort((a, b) => a - b);
    let most = 0;
    for (let first = 0, last = 0; first < sorted.length; first++) {
        while (last < sorted.length && sorted[last]! < sorted[first]! + windowMs) last++;
        most = Math.max(most, last - first);
    }
    return most;
}
