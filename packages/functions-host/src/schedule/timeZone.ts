/**
 * WEBSITE_TIME_ZONE as the Functions host reads it for timers: an IANA id (Linux plans,
 * "Europe/Berlin") or a Windows id (Windows plans, "W. Europe Standard Time", any case). Node
 * knows only IANA zones, so the common Windows ids are mapped to the zone Unicode CLDR gives
 * their territory "001" (the table is that data). The host's own code, not the app's.
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

const WINDOWS_BY_LOWER_CASE = new Map(Object.entries(WINDOWS_TO_IANA).map(([windows, iana]) => [windows.toLowerCase(), iana]));

/** The IANA zone `id` names, or an explanation of why it names none (for "WEBSITE_TIME_ZONE: <problem>."). */
export function resolveTimeZone(id: string): { ok: true; iana: string } | { ok: false; problem: string } {
    const name = id.trim();
    const mapped = WINDOWS_BY_LOWER_CASE.get(name.toLowerCase());
    if (mapped !== undefined) return { ok: true, iana: mapped };
    if (name !== "" && !name.includes(" ") && knownToIntl(name)) return { ok: true, iana: name };
    return {
        ok: false,
        problem:
            `"${name}" is neither an IANA time-zone id (e.g. Europe/Berlin, America/New_York) nor a Windows time-zone id ` +
            `the local host knows (e.g. W. Europe Standard Time, Eastern Standard Time); use the IANA id`,
    };
}

function knownToIntl(zone: string): boolean {
    try {
        return new Intl.DateTimeFormat("en-GB", { timeZone: zone }).resolvedOptions().timeZone.length > 0;
    } catch {
        return false;
    }
}

const partFormats = new Map<string, Intl.DateTimeFormat>();

/** The UTC offset (ms, east positive) of `zone` at `instantMs`. */
export function offsetAt(instantMs: number, zone: string): number {
    let format = partFormats.get(zone);
    if (format === undefined) {
        format = new Intl.DateTimeFormat("en-GB", {
            timeZone: zone,
            hourCycle: "h23",
            era: "short",
            year: "numeric",
            month: "numeric",
            day: "numeric",
            hour: "numeric",
            minute: "numeric",
            second: "numeric",
        });
        partFormats.set(zone, format);
    }
    const fields: Record<string, number> = {};
    for (const part of format.formatToParts(new Date(instantMs))) {
        if (part.type !== "literal" && part.type !== "era") fields[part.type] = Number.parseInt(part.value, 10);
    }
    const wholeSecond = Math.floor(instantMs / 1000) * 1000;
    const wall = Date.UTC(fields.year!, fields.month! - 1, fields.day!, fields.hour!, fields.minute!, fields.second!);
    return wall - wholeSecond;
}

/**
 * The instant a wall-clock reading in `zone` means (the reading given as ms of a UTC date with the
 * same fields), as .NET's TimeZoneInfo converts one for the Functions timer: a reading the clocks
 * skip when they go forward takes the offset from before the change (02:30 becomes 03:30 new
 * time); a reading the clocks show twice when they go back is the one in standard time (the
 * smaller offset).
 */
export function wallToInstant(wallMs: number, zone: string): number {
    const HALF_DAY = 43_200_000;
    const offsetBefore = offsetAt(wallMs - HALF_DAY - HALF_DAY, zone);
    const offsetAfter = offsetAt(wallMs + HALF_DAY + HALF_DAY, zone);
    const readsBack = (offset: number) => offsetAt(wallMs - offset, zone) === offset;
    const fitting = [offsetBefore, offsetAfter].filter(readsBack);
    if (fitting.length === 0) return wallMs - offsetBefore;
    return wallMs - Math.min(...fitting);
}

/** The wall clock of `zone` at `instantMs`, as ms of a UTC date with the same fields. */
export function instantToWall(instantMs: number, zone: string): number {
    return instantMs + offsetAt(instantMs, zone);
}
