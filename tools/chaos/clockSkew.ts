/**
 * Preloaded into a chaos host (`node --require`): shifts this process's wall clock — `Date.now()`,
 * `new Date()` and `Date()` — by `CHAOS_CLOCK_OFFSET_MS`, as a VM whose clock drifted would be.
 * Timers and `performance.now()` are not shifted (they measure intervals, not the time of day).
 */
const offsetMs = Number(process.env.CHAOS_CLOCK_OFFSET_MS ?? "0");
if (!Number.isFinite(offsetMs)) throw new Error(`CHAOS_CLOCK_OFFSET_MS must be a number of milliseconds, got "${process.env.CHAOS_CLOCK_OFFSET_MS}"`);
if (offsetMs !== 0) {
    const RealDate = Date;
    const realNow = Date.now.bind(Date);
    const skewedNow = () => realNow() + offsetMs;
    globalThis.Date = new Proxy(RealDate, {
        construct: (target, args: unknown[], newTarget) => Reflect.construct(target, args.length === 0 ? [skewedNow()] : args, newTarget) as object,
        apply: () => new RealDate(skewedNow()).toString(),
        get: (target, property, receiver) => (property === "now" ? skewedNow : Reflect.get(target, property, receiver)),
    });
}
