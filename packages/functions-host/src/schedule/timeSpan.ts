/**
 * .NET TimeSpan text as host.json and the timer trigger use it (TimeSpan.Parse's invariant
 * forms): `d`, `hh:mm`, `hh:mm:ss`, `d.hh:mm[:ss]`, each with an optional `-` and, after the
 * seconds, `.f` to `.fffffff`. The host's own code, counted in .NET ticks (100 ns) as .NET does.
 */
const TICKS_PER_MS = 10_000;
const TICKS = { day: 864_000_000_000, hour: 36_000_000_000, minute: 600_000_000, second: 10_000_000 };

/** Milliseconds, or undefined when `text` is no TimeSpan. */
export function parseTimeSpan(text: string): number | undefined {
    let rest = text.trim();
    const negative = rest.startsWith("-");
    if (negative) rest = rest.slice(1);
    const digits = (part: string | undefined, maxLength: number) => part !== undefined && part.length >= 1 && part.length <= maxLength && [...part].every((c) => c >= "0" && c <= "9");
    let ticks: number;
    if (!rest.includes(":")) {
        if (!digits(rest, 8)) return undefined;
        ticks = Number(rest) * TICKS.day;
    } else {
        const pieces = rest.split(":");
        if (pieces.length > 3) return undefined;
        let [head, minutes, secondsPart] = pieces as [string, string, string | undefined];
        let days = "0";
        const dot = head.indexOf(".");
        if (dot >= 0) {
            days = head.slice(0, dot);
            head = head.slice(dot + 1);
            if (!digits(days, 8)) return undefined;
        }
        let seconds = "0";
        let fraction = "";
        if (secondsPart !== undefined) {
            const [whole, frac, extra] = secondsPart.split(".");
            if (extra !== undefined || (frac !== undefined && !digits(frac, 7))) return undefined;
            seconds = whole ?? "";
            fraction = frac ?? "";
        }
        if (!digits(head, 2) || !digits(minutes, 2) || !digits(seconds, 2)) return undefined;
        if (Number(head) > 23 || Number(minutes) > 59 || Number(seconds) > 59) return undefined;
        ticks = Number(days) * TICKS.day + Number(head) * TICKS.hour + Number(minutes) * TICKS.minute + Number(seconds) * TICKS.second + Number(fraction.padEnd(7, "0") || "0");
    }
    const ms = ticks / TICKS_PER_MS;
    return negative ? -ms : ms;
}

/** .NET's TimeSpan.ToString() ("c"): `[-][d.]hh:mm:ss[.fffffff]`, e.g. "00:10:00", "1.02:00:00.5000000". */
export function formatTimeSpan(ms: number): string {
    const ticks = Math.round(Math.abs(ms) * TICKS_PER_MS);
    const days = Math.floor(ticks / TICKS.day);
    const hours = Math.floor((ticks % TICKS.day) / TICKS.hour);
    const minutes = Math.floor((ticks % TICKS.hour) / TICKS.minute);
    const seconds = Math.floor((ticks % TICKS.minute) / TICKS.second);
    const fraction = ticks % TICKS.second;
    const pad = (value: number, width: number) => value.toString().padStart(width, "0");
    return `${ms < 0 ? "-" : ""}${days > 0 ? `${days}.` : ""}${pad(hours, 2)}:${pad(minutes, 2)}:${pad(seconds, 2)}${fraction > 0 ? `.${pad(fraction, 7)}` : ""}`;
}
