import { parseTimeSpan } from "./timeSpan";
import { instantToWall, resolveTimeZone, wallToInstant } from "./timeZone";

/**
 * Timer schedules as the Functions host reads them (NCrontab, with seconds): six fields
 * `{second} {minute} {hour} {day} {month} {day-of-week}` (five without seconds also parse, with
 * second 0), each a comma list of `*`, `v` or `a-b`, optionally `/step` (`v/step` runs from v to
 * the field's end); months JAN–DEC and days SUN–SAT by name, in any case. A day matches only when
 * day-of-month AND day-of-week both match (NCrontab's rule, not Vixie cron's "or"). A TimeSpan
 * ("00:05:00") is a fixed interval. The host's own code, independent of the app's checks.
 */
export type Schedule =
    | { kind: "cron"; expression: string; next(after: Date): Date }
    | { kind: "interval"; expression: string; intervalMs: number; next(after: Date): Date };

interface Field {
    label: string;
    low: number;
    high: number;
    /** Names for low, low+1, …. */
    names?: readonly string[];
}

const FIELDS: readonly Field[] = [
    { label: "Second", low: 0, high: 59 },
    { label: "Minute", low: 0, high: 59 },
    { label: "Hour", low: 0, high: 23 },
    { label: "Day", low: 1, high: 31 },
    { label: "Month", low: 1, high: 12, names: ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"] },
    { label: "DayOfWeek", low: 0, high: 6, names: ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"] },
];

/** Per field, a table of which values match (index = value). */
type Matches = readonly boolean[];

interface Cron {
    second: Matches;
    minute: Matches;
    hour: Matches;
    day: Matches;
    month: Matches;
    weekday: Matches;
}

export function parseSchedule(expression: string, timeZone?: string): Schedule {
    const text = expression.trim();
    if (!/\s/.test(text) && text.includes(":")) {
        const intervalMs = parseTimeSpan(text);
        if (intervalMs === undefined || intervalMs <= 0) throw new Error(`'${expression}' is not a valid timer schedule: a TimeSpan schedule must be positive, like "00:05:00".`);
        return { kind: "interval", expression: text, intervalMs, next: (after) => new Date(after.getTime() + intervalMs) };
    }
    const cron = compile(text, expression);
    let zone: string | undefined;
    if (timeZone !== undefined && timeZone.trim() !== "") {
        const resolved = resolveTimeZone(timeZone);
        if (!resolved.ok) throw new Error(`WEBSITE_TIME_ZONE: ${resolved.problem}.`);
        zone = resolved.iana;
    }
    return { kind: "cron", expression: text, next: (after) => (zone === undefined ? new Date(nextMatch(cron, after.getTime())) : new Date(nextInZone(cron, after.getTime(), zone))) };
}

function compile(text: string, expression: string): Cron {
    const tokens = text.split(/\s+/).filter((token) => token !== "");
    if (tokens.length === 5) tokens.unshift("0");
    if (tokens.length !== 6) {
        throw new Error(`'${expression}' is not a valid NCRONTAB expression: expected 6 fields "{second} {minute} {hour} {day} {month} {day-of-week}", got ${tokens.length}.`);
    }
    const [second, minute, hour, day, month, weekday] = tokens.map((token, index) => matches(token, FIELDS[index]!, expression)) as [Matches, Matches, Matches, Matches, Matches, Matches];
    return { second, minute, hour, day, month, weekday };
}

function matches(token: string, field: Field, expression: string): Matches {
    const table: boolean[] = new Array<boolean>(field.high + 1).fill(false);
    const invalid = (why: string): never => {
        throw new Error(`'${expression}' is not a valid NCRONTAB expression: ${field.label} field '${token}' ${why}.`);
    };
    const value = (text: string): number => {
        const byName = field.names?.findIndex((name) => name === text.toUpperCase()) ?? -1;
        if (byName >= 0) return field.low + byName;
        if (!/^[0-9]+$/.test(text)) return invalid(`has an invalid value '${text}'`);
        const number = Number.parseInt(text, 10);
        if (number < field.low || number > field.high) return invalid(`is out of range: ${number} is outside ${field.low}-${field.high}`);
        return number;
    };
    for (const item of token.split(",")) {
        if (item === "") invalid("has an empty list item");
        const slash = item.split("/");
        if (slash.length > 2) invalid("has more than one '/'");
        const [range, stepText] = slash as [string, string | undefined];
        const step = stepText === undefined ? 1 : /^[0-9]+$/.test(stepText) && Number(stepText) > 0 ? Number(stepText) : invalid(`has an invalid step '${stepText}'`);
        let first = field.low;
        let last = field.high;
        if (range !== "*") {
            const ends = range.split("-");
            if (ends.length > 2) invalid("has an invalid range");
            first = value(ends[0]!);
            last = ends.length === 2 ? value(ends[1]!) : stepText === undefined ? first : field.high;
            if (last < first) invalid(`has a range that ends (${last}) before it starts (${first})`);
        }
        for (let v = first; v <= last; v += step) table[v] = true;
    }
    return table;
}

/** The first value >= `from` that matches, or undefined. */
function firstFrom(table: Matches, from: number): number | undefined {
    for (let v = from; v < table.length; v++) if (table[v]) return v;
    return undefined;
}

const SEARCH_YEARS = 5;

/** The first whole second strictly after `afterMs` (a UTC instant, or a wall clock read as UTC) that matches. */
function nextMatch(cron: Cron, afterMs: number): number {
    const start = new Date(Math.floor(afterMs / 1000) * 1000 + 1000);
    let year = start.getUTCFullYear();
    let month = start.getUTCMonth() + 1;
    let day = start.getUTCDate();
    let hour = start.getUTCHours();
    let minute = start.getUTCMinutes();
    let second = start.getUTCSeconds();
    const lastYear = year + SEARCH_YEARS;
    const nextDay = () => {
        const following = new Date(Date.UTC(year, month - 1, day + 1));
        [year, month, day, hour, minute, second] = [following.getUTCFullYear(), following.getUTCMonth() + 1, following.getUTCDate(), 0, 0, 0];
    };
    while (year <= lastYear) {
        const m = firstFrom(cron.month, month);
        if (m === undefined) {
            [year, month, day, hour, minute, second] = [year + 1, 1, 1, 0, 0, 0];
            continue;
        }
        if (m !== month) [month, day, hour, minute, second] = [m, 1, 0, 0, 0];
        const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
        if (day > daysInMonth) {
            [year, month, day, hour, minute, second] = month === 12 ? [year + 1, 1, 1, 0, 0, 0] : [year, month + 1, 1, 0, 0, 0];
            continue;
        }
        const weekday = new Date(Date.UTC(year, month - 1, day)).getUTCDay();
        if (!cron.day[day] || !cron.weekday[weekday]) {
            nextDay();
            continue;
        }
        const h = firstFrom(cron.hour, hour);
        if (h === undefined) {
            nextDay();
            continue;
        }
        if (h !== hour) [hour, minute, second] = [h, 0, 0];
        const mi = firstFrom(cron.minute, minute);
        if (mi === undefined) {
            [hour, minute, second] = [hour + 1, 0, 0];
            if (hour > 23) nextDay();
            continue;
        }
        if (mi !== minute) [minute, second] = [mi, 0];
        const s = firstFrom(cron.second, second);
        if (s === undefined) {
            [minute, second] = [minute + 1, 0];
            if (minute > 59) [hour, minute] = [hour + 1, 0];
            if (hour > 23) nextDay();
            continue;
        }
        return Date.UTC(year, month - 1, day, hour, minute, s);
    }
    throw new Error("The NCRONTAB expression has no occurrence in the next five years: it names a date that does not exist, such as February 30th.");
}

/**
 * The next match on the wall clock of `zone`, converted back to an instant as the Functions timer
 * converts it (see wallToInstant); a wall-clock match that converts to no later instant (the hour
 * the clocks show twice) is passed over.
 */
function nextInZone(cron: Cron, afterMs: number, zone: string): number {
    let wall = instantToWall(afterMs, zone);
    for (let attempt = 0; attempt < 1000; attempt++) {
        const candidate = nextMatch(cron, wall);
        const instant = wallToInstant(candidate, zone);
        if (instant > afterMs) return instant;
        wall = candidate;
    }
    throw new Error(`Could not compute the next occurrence in time zone ${zone}.`);
}
