/**
 * .NET TimeSpan text as host.json uses it: `[-][d.]hh:mm:ss[.fffffff]`, or a plain `d` (days)
 * as TimeSpan.Parse accepts it. Returns milliseconds, or undefined when the text is not a TimeSpan.
 */
export function parseTimeSpan(text: string): number | undefined {
    const trimmed = text.trim();
    if (/^-?\d+$/.test(trimmed)) return Number(trimmed) * 86_400_000;
    const match = /^(-)?(?:(\d+)\.)?(\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,7}))?)?$/.exec(trimmed);
    if (!match) return undefined;
    const [, sign, days, hours, minutes, seconds, fraction] = match;
    if (Number(hours) > 23 || Number(minutes) > 59 || Number(seconds ?? 0) > 59) return undefined;
    const ms =
        Number(days ?? 0) * 86_400_000 +
        Number(hours) * 3_600_000 +
        Number(minutes) * 60_000 +
        Number(seconds ?? 0) * 1000 +
        (fraction ? Number(`0.${fraction}`) * 1000 : 0);
    return sign ? -ms : ms;
}

/** The inverse of parseTimeSpan, formatted as .NET's TimeSpan.ToString() does ("00:10:00", "1.02:00:00.5000000"). */
export function formatTimeSpan(ms: number): string {
    const sign = ms < 0 ? "-" : "";
    let rest = Math.abs(ms);
    const days = Math.floor(rest / 86_400_000);
    rest -= days * 86_400_000;
    const hours = Math.floor(rest / 3_600_000);
    rest -= hours * 3_600_000;
    const minutes = Math.floor(rest / 60_000);
    rest -= minutes * 60_000;
    const seconds = Math.floor(rest / 1000);
    const millis = Math.round(rest - seconds * 1000);
    const two = (n: number) => String(n).padStart(2, "0");
    const fraction = millis > 0 ? `.${String(millis * 10_000).padStart(7, "0")}` : "";
    return `${sign}${days > 0 ? `${days}.` : ""}${two(hours)}:${two(minutes)}:${two(seconds)}${fraction}`;
}
