import { parseTimeSpan } from "./timeSpan";
import { fromWallClock, resolveTimeZone, toWallClock } from "./timeZone";

/**
 * NCRONTAB schedules as the Functions timer trigger reads them: six fields
 * `{second} {minute} {hour} {day} {month} {day-of-week}` (five-field expressions without
 * seconds are also accepted, as NCrontab does), each a `*`, a value, a range `a-b`, a list
 * `a,b`, and an optional step `/n`; month names JAN–DEC and day names SUN–SAT.
 * Like NCrontab, day-of-month and day-of-week must BOTH match (not the Vixie-cron "or").
 * A TimeSpan schedule ("00:00:30") means a fixed interval, as the host allows. The app validates
 * its schedules with this parser; the local Functions host runs its timers on it.
 */
export type Schedule =
    | { kind: "cron"; expression: string; next(after: Date): Date }
    | { kind: "interval"; expression: string; intervalMs: number; next(after: Date): Date };

interface FieldSpec {
    name: string;
    min: number;
    max: number;
    names?: string[];
}

const SECOND: FieldSpec = { name: "Second", min: 0, max: 59 };
const MINUTE: FieldSpec = { name: "Minute", min: 0, max: 59 };
const HOUR: FieldSpec = { name: "Hour", min: 0, max: 23 };
const DAY: FieldSpec = { name: "Day", min: 1, max: 31 };
const MONTH: FieldSpec = {
    name: "Month",
    min: 1,
    max: 12,
    names: ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"],
};
const DAY_OF_WEEK: FieldSpec = { name: "DayOfWeek", min: 0, max: 6, names: ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"] };

export interface CronFields {
    seconds: Set<number>;
    minutes: Set<number>;
    hours: Set<number>;
    days: Set<number>;
    months: Set<number>;
    daysOfWeek: Set<number>;
}

export function parseSchedule(expression: string, timeZone?: string): Schedule {
    const trimmed = expression.trim();
    if (/^\d+(\.\d+)?:\d{1,2}(:\d{1,2})?/.test(trimmed) && !/\s/.test(trimmed)) {
        const intervalMs = parseTimeSpan(trimmed);
        if (intervalMs === undefined || intervalMs <= 0) throw new Error(`'${expression}' is not a valid timer schedule: a TimeSpan schedule must be positive, like "00:05:00".`);
        return { kind: "interval", expression: trimmed, intervalMs, next: (after) => new Date(after.getTime() + intervalMs) };
    }
    const fields = parseCron(trimmed);
    const zone = timeZone === undefined || timeZone.trim() === "" ? undefined : resolveTimeZone(timeZone);
    if (zone && !zone.ok) throw new Error(`WEBSITE_TIME_ZONE: ${zone.problem}.`);
    const iana = zone?.iana;
    return {
        kind: "cron",
        expression: trimmed,
        next: (after) => (iana ? nextInTimeZone(fields, after, iana) : nextUtc(fields, after)),
    };
}

export function parseCron(expression: string): CronFields {
    const parts = expression.trim().split(/\s+/);
    if (parts.length === 5) parts.unshift("0");
    if (parts.length !== 6) {
        throw new Error(`'${expression}' is not a valid NCRONTAB expression: expected 6 fields "{second} {minute} {hour} {day} {month} {day-of-week}", got ${parts.length}.`);
    }
    const [s, m, h, d, mo, dow] = parts as [string, string, string, string, string, string];
    return {
        seconds: parseField(s, SECOND, expression),
        minutes: parseField(m, MINUTE, expression),
        hours: parseField(h, HOUR, expression),
        days: parseField(d, DAY, expression),
        months: parseField(mo, MONTH, expression),
        daysOfWeek: parseField(dow, DAY_OF_WEEK, expression),
    };
}

function parseField(text: string, spec: FieldSpec, expression: string): Set<number> {
    const values = new Set<number>();
    const fail = (why: string): never => {
        throw new Error(`'${expression}' is not a valid NCRONTAB expression: ${spec.name} field '${text}' ${why}.`);
    };
    for (const item of text.split(",")) {
        if (item === "") fail("has an empty list item");
        const [rangePart, stepPart, extra] = item.split("/");
        if (extra !== undefined) fail("has more than one '/'");
        let step = 1;
        if (stepPart !== undefined) {
            if (!/^\d+$/.test(stepPart) || Number(stepPart) === 0) fail(`has an invalid step '${stepPart}'`);
            step = Number(stepPart);
        }
        let from: number;
        let to: number;
        if (rangePart === "*") {
            from = spec.min;
            to = spec.max;
        } else {
            const bounds = (rangePart ?? "").split("-");
            if (bounds.length > 2) fail("has an invalid range");
            from = parseValue(bounds[0] ?? "", spec, fail);
            to = bounds.length === 2 ? parseValue(bounds[1] ?? "", spec, fail) : stepPart !== undefined ? spec.max : from;
            if (to < from) fail(`has a range that ends (${to}) before it starts (${from})`);
        }
        for (let v = from; v <= to; v += step) values.add(v);
    }
    return values;
}

function parseValue(text: string, spec: FieldSpec, fail: (why: string) => never): number {
    const named = spec.names?.indexOf(text.toUpperCase()) ?? -1;
    if (named >= 0) return spec.names === MONTH.names ? named + 1 : named;
    if (!/^\d+$/.test(text)) return fail(`has an invalid value '${text}'`);
    const value = Number(text);
    if (value < spec.min || value > spec.max) return fail(`is out of range: ${value} is outside ${spec.min}-${spec.max}`);
    return value;
}

/** The first time strictly after `after` (whole seconds, UTC) that matches. */
export function nextUtc(fields: CronFields, after: Date): Date {
    const t = new Date(Math.floor(after.getTime() / 1000) * 1000 + 1000);
    const limit = after.getTime() + 5 * 366 * 86_400_000;
    while (t.getTime() <= limit) {
        if (!fields.months.has(t.getUTCMonth() + 1)) {
            t.setUTCMonth(t.getUTCMonth() + 1, 1);
            t.setUTCHours(0, 0, 0, 0);
            continue;
        }
        if (!fields.days.has(t.getUTCDate()) || !fields.daysOfWeek.has(t.getUTCDay())) {
            t.setUTCDate(t.getUTCDate() + 1);
            t.setUTCHours(0, 0, 0, 0);
            continue;
        }
        if (!fields.hours.has(t.getUTCHours())) {
            t.setUTCHours(t.getUTCHours() + 1, 0, 0, 0);
            continue;
        }
        if (!fields.minutes.has(t.getUTCMinutes())) {
            t.setUTCMinutes(t.getUTCMinutes() + 1, 0, 0);
            continue;
        }
        if (!fields.seconds.has(t.getUTCSeconds())) {
            t.setUTCSeconds(t.getUTCSeconds() + 1, 0);
            continue;
        }
        return t;
    }
    throw new Error("The NCRONTAB expression has no occurrence in the next five years: it names a date that does not exist, such as February 30th.");
}

/**
 * The same search on the wall clock of `timeZone` (an IANA id): the next matching wall-clock time,
 * read back as an instant the way the Functions timer reads it (see fromWallClock).
 */
function nextInTimeZone(fields: CronFields, after: Date, timeZone: string): Date {
    let wall = new Date(toWallClock(after.getTime(), timeZone));
    for (let guard = 0; guard < 1000; guard++) {
        const candidateWall = nextUtc(fields, wall);
        const instant = fromWallClock(candidateWall.getTime(), timeZone);
        if (instant > after.getTime()) return new Date(instant);
        wall = candidateWall;
    }
    throw new Error(`Could not compute the next occurrence in time zone ${timeZone}.`);
}
