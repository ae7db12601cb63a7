/**
 * WEBSITE_TIME_ZONE as App Service reads it: a Windows time-zone id on Windows plans
 * ("W. Europe Standard Time"), an IANA id on Linux ones ("Europe/Berlin"). The common Windows ids
 * map to the IANA zone Unicode CLDR gives their territory "001", so that Node (which knows only
 * IANA zones) can compute the same wall clock.
 */
export const WINDOWS_TO_IANA: Readonly<Record<string, string>> = {
    UTC: "Etc/UTC",
    "GMT Standard Time": "Europe/London",
    "Greenwich Standard Time": "Atlantic/Reykjavik",
    "W. Europe Standard Time": "Europe/Berlin",
    "Central Europe Standard Time": "Europe/Budapest",
    "Romance Standard Time": "Europe/Paris",
    "Central European Standard Time": "Europe/Warsaw",
    "W. Central Africa Standard Time": "Africa/Lagos",
    "GTB Standard Time": "Europe/Bucharest",
    "E. Europe Standard Time": "Europe/Chisinau",
    "FLE Standard Time": "Europe/Kiev",
    "South Africa Standard Time": "Africa/Johannesburg",
    "Egypt Standard Time": "Africa/Cairo",
    "Israel Standard Time": "Asia/Jerusalem",
    "Turkey Standard Time": "Europe/Istanbul",
    "Russian Standard Time": "Europe/Moscow",
    "E. Africa Standard Time": "Africa/Nairobi",
    "Morocco Standard Time": "Africa/Casablanca",
    "Arab Standard Time": "Asia/Riyadh",
    "Arabian Standard Time": "Asia/Dubai",
    "Iran Standard Time": "Asia/Tehran",
    "Pakistan Standard Time": "Asia/Karachi",
    "West Asia Standard Time": "Asia/Tashkent",
    "India Standard Time": "Asia/Kolkata",
    "Nepal Standard Time": "Asia/Kathmandu",
    "Bangladesh Standard Time": "Asia/Dhaka",
    "N. Central Asia Standard Time": "Asia/Novosibirsk",
    "SE Asia Standard Time": "Asia/Bangkok",
    "China Standard Time": "Asia/Shanghai",
    "Singapore Standard Time": "Asia/Singapore",
    "Taipei Standard Time": "Asia/Taipei",
    "W. Australia Standard Time": "Australia/Perth",
    "Tokyo Standard Time": "Asia/Tokyo",
    "Korea Standard Time": "Asia/Seoul",
    "Cen. Australia Standard Time": "Australia/Adelaide",
    "E. Australia Standard Time": "Australia/Brisbane",
    "AUS Eastern Standard Time": "Australia/Sydney",
    "New Zealand Standard Time": "Pacific/Auckland",
    "Hawaiian Standard Time": "Pacific/Honolulu",
    "Alaskan Standard Time": "America/Anchorage",
    "Pacific Standard Time": "America/Los_Angeles",
    "US Mountain Standard Time": "America/Phoenix",
    "Mountain Standard Time": "America/Denver",
    "Central Standard Time": "America/Chicago",
    "Central Standard Time (Mexico)": "America/Mexico_City",
    "Canada Central Standard Time": "America/Regina",
    "Eastern Standard Time": "America/New_York",
    "SA Pacific Standard Time": "America/Bogota",
    "Atlantic Standard Time": "America/Halifax",
    "Pacific SA Standard Time": "America/Santiago",
    "Newfoundland Standard Time": "America/St_Johns",
    "E. South America Standard Time": "America/Sao_Paulo",
    "Argentina Standard Time": "America/Argentina/Buenos_Aires",
};

/** The IANA zone a WEBSITE_TIME_ZONE value names, or why it names none. */
export function resolveTimeZone(id: string): { ok: true; iana: string } | { ok: false; problem: string } {
    const trimmed = id.trim();
    const windows = Object.keys(WINDOWS_TO_IANA).find((name) => name.toLowerCase() === trimmed.toLowerCase());
    if (windows) return { ok: true, iana: WINDOWS_TO_IANA[windows]! };
    // A Windows id outside the table reads like one ("… Standard Time") but is no IANA name.
    if (/\s/.test(trimmed) || !isIanaZone(trimmed)) {
        return {
            ok: false,
            problem:
                `"${trimmed}" is neither an IANA time-zone id (e.g. Europe/Berlin, America/New_York) nor one of the common ` +
                `Windows ids this app maps to one (e.g. W. Europe Standard Time, Eastern Standard Time); use the IANA id`,
        };
    }
    return { ok: true, iana: trimmed };
}

function isIanaZone(id: string): boolean {
    try {
        new Intl.DateTimeFormat("en-US", { timeZone: id });
        return true;
    } catch {
        return false;
    }
}

/**
 * Where Azure ignores WEBSITE_TIME_ZONE (the timers then run in UTC), by the settings the platform
 * sets: `WEBSITE_SKU` = FlexConsumption on Flex Consumption; a `CONTAINER_NAME` on Linux
 * Consumption (with `WEBSITE_SKU` = Dynamic, when set). `undefined` elsewhere.
 */
export function planIgnoringTimeZone(env: NodeJS.ProcessEnv): string | undefined {
    const sku = env.WEBSITE_SKU?.trim().toLowerCase();
    if (sku === "flexconsumption") return "Flex Consumption";
    if (env.CONTAINER_NAME?.trim() && (sku === undefined || sku === "" || sku === "dynamic")) return "Linux Consumption";
    return undefined;
}

/** Milliseconds of the wall clock in `timeZone` at `instantMs`, written as if that wall clock were UTC. */
export function toWallClock(instantMs: number, timeZone: string): number {
    const parts = wallClockFormat(timeZone).formatToParts(new Date(instantMs));
    const get = (type: string) => Number(parts.find((part) => part.type === type)?.value ?? 0);
    return Date.UTC(get("year"), get("month") - 1, get("day"), get("hour"), get("minute"), get("second")) + (instantMs - Math.floor(instantMs / 1000) * 1000);
}

const formats = new Map<string, Intl.DateTimeFormat>();

function wallClockFormat(timeZone: string): Intl.DateTimeFormat {
    let format = formats.get(timeZone);
    if (!format) {
        format = new Intl.DateTimeFormat("en-US", {
            timeZone,
            hourCycle: "h23",
            year: "numeric",
            month: "2-digit",
            day: "2-digit",
            hour: "2-digit",
            minute: "2-digit",
            second: "2-digit",
        });
        formats.set(timeZone, format);
    }
    return format;
}

const DAY_MS = 86_400_000;

/**
 * The instant a wall-clock time in `timeZone` stands for, the way .NET's TimeZoneInfo (and so the
 * Functions timer) reads one: a time the clocks skip when they go forward is read with the offset
 * from before the change (02:30 on the spring-forward night runs at 03:30 new time); a time the
 * clocks show twice when they go back is read as the second one, in standard time.
 */
export function fromWallClock(wallMs: number, timeZone: string): number {
    const offsetAt = (instantMs: number) => toWallClock(instantMs, timeZone) - instantMs;
    const before = offsetAt(wallMs - DAY_MS);
    const after = offsetAt(wallMs + DAY_MS);
    const instants = [...new Set([before, after, offsetAt(wallMs)])]
        .map((offset) => wallMs - offset)
        .filter((instant) => toWallClock(instant, timeZone) === wallMs);
    if (instants.length === 0) return wallMs - before;
    return Math.max(...instants);
}
