import fc from "fast-check";
import { formatTimeSpan as hostFormatTimeSpan, parseSchedule as hostParseSchedule, parseTimeSpan as hostParseTimeSpan } from "@sheetwright/functions-host";
import { describe, expect, it } from "vitest";
import { parseSchedule } from "../../src/shared/schedule/ncrontab";
import { formatTimeSpan, parseTimeSpan } from "../../src/shared/schedule/timeSpan";

/*
 * The app's NCRONTAB, TimeSpan and time-zone code (src/shared/schedule), which checks its
 * schedules at start-up. The local Functions host (packages/functions-host) has an implementation
 * of its own, written apart from this one: the last tests hold the two against each other.
 */
const next = (expression: string, after: string, timeZone?: string) => parseSchedule(expression, timeZone).next(new Date(after)).toISOString();

describe("NCRONTAB schedules", () => {
    it("reads six fields with steps, ranges, lists and names", () => {
        expect(next("*/15 * * * * *", "2025-03-01T00:00:07.500Z")).toBe("2025-03-01T00:00:15.000Z");
        expect(next("0 0,30 * * * *", "2025-03-01T10:05:00Z")).toBe("2025-03-01T10:30:00.000Z");
        expect(next("0 30 9 * * MON-FRI", "2025-03-01T12:00:00Z")).toBe("2025-03-03T09:30:00.000Z"); // Saturday → Monday
        expect(next("0 0 0 1 JAN *", "2025-03-01T00:00:00Z")).toBe("2026-01-01T00:00:00.000Z");
        expect(next("5/20 * * * * *", "2025-03-01T00:00:06Z")).toBe("2025-03-01T00:00:25.000Z");
    });

    it("is strictly after the given time", () => {
        expect(next("0 * * * * *", "2025-03-01T00:01:00Z")).toBe("2025-03-01T00:02:00.000Z");
    });

    it("requires day-of-month and day-of-week to both match, as NCrontab does", () => {
        expect(next("0 0 0 13 * FRI", "2025-01-01T00:00:00Z")).toBe("2025-06-13T00:00:00.000Z");
    });

    it("accepts five-field expressions (seconds = 0)", () => {
        expect(next("*/5 * * * *", "2025-03-01T00:01:30Z")).toBe("2025-03-01T00:05:00.000Z");
    });

    it("accepts a TimeSpan as a fixed interval", () => {
        const schedule = parseSchedule("00:00:30");
        expect(schedule.kind).toBe("interval");
        expect(schedule.next(new Date("2025-03-01T00:00:07Z")).toISOString()).toBe("2025-03-01T00:00:37.000Z");
    });

    it("evaluates in WEBSITE_TIME_ZONE when given", () => {
        expect(next("0 0 9 * * *", "2025-01-15T00:00:00Z", "America/New_York")).toBe("2025-01-15T14:00:00.000Z");
        expect(next("0 0 9 * * *", "2025-07-15T00:00:00Z", "America/New_York")).toBe("2025-07-15T13:00:00.000Z");
    });

    it("keeps the working hours of the default sweep schedule on the local clock across the spring change", () => {
        const sweep = "0 0,30 8-18 * * 1-5";
        expect(next(sweep, "2025-03-28T17:00:00Z", "Europe/Berlin")).toBe("2025-03-28T17:30:00.000Z"); // Friday 18:30 CET
        expect(next(sweep, "2025-03-28T17:30:00Z", "Europe/Berlin")).toBe("2025-03-31T06:00:00.000Z"); // Monday 08:00 CEST
    });

    it("runs a time the clocks skip at the same moment after the change, as the Functions timer does", () => {
        expect(next("0 30 2 * * *", "2025-03-09T05:00:00Z", "America/New_York")).toBe("2025-03-09T07:30:00.000Z"); // 03:30 EDT
        expect(next("0 30 2 * * *", "2025-03-09T07:30:00Z", "America/New_York")).toBe("2025-03-10T06:30:00.000Z"); // 02:30 EDT
    });

    it("runs a time the clocks show twice once, in standard time, when they go back", () => {
        expect(next("0 30 1 * * *", "2025-11-02T04:00:00Z", "America/New_York")).toBe("2025-11-02T06:30:00.000Z"); // 01:30 EST
        expect(next("0 30 1 * * *", "2025-11-02T06:30:00Z", "America/New_York")).toBe("2025-11-03T06:30:00.000Z");
    });

    it("takes a Windows time-zone id as App Service on Windows does", () => {
        expect(next("0 0 9 * * *", "2025-07-15T00:00:00Z", "Eastern Standard Time")).toBe("2025-07-15T13:00:00.000Z");
        expect(next("0 0 9 * * *", "2025-01-15T00:00:00Z", "w. europe standard time")).toBe("2025-01-15T08:00:00.000Z");
    });

    it("rejects malformed expressions with the field at fault", () => {
        expect(() => parseSchedule("* * * *")).toThrow(/expected 6 fields/);
        expect(() => parseSchedule("61 * * * * *")).toThrow(/Second field '61'/);
        expect(() => parseSchedule("0 0 0 * * 7")).toThrow(/DayOfWeek field '7'/);
        expect(() => parseSchedule("0 0 0 * FOO *")).toThrow(/Month field 'FOO'/);
        expect(() => parseSchedule("0 0 0 * * *", "Not/AZone")).toThrow(/WEBSITE_TIME_ZONE/);
    });
});

describe("TimeSpan text", () => {
    it("parses and formats as .NET does", () => {
        expect(parseTimeSpan("00:10:00")).toBe(600_000);
        expect(parseTimeSpan("1.02:03:04.5")).toBe(93_784_500);
        expect(parseTimeSpan("7")).toBe(7 * 86_400_000);
        expect(parseTimeSpan("soon")).toBeUndefined();
        expect(formatTimeSpan(600_000)).toBe("00:10:00");
        expect(formatTimeSpan(93_784_500)).toBe("1.02:03:04.5000000");
    });
});

/** NCRONTAB fields the generator draws from: `*`, values, ranges, lists and steps, names too. */
function fieldArbitrary(low: number, high: number, names?: readonly string[]): fc.Arbitrary<string> {
    const value = names
        ? fc.oneof(fc.integer({ min: low, max: high }).map(String), fc.integer({ min: low, max: high }).map((v) => names[v - low]!))
        : fc.integer({ min: low, max: high }).map(String);
    const range = fc.tuple(fc.integer({ min: low, max: high }), fc.integer({ min: low, max: high })).map(([a, b]) => `${Math.min(a, b)}-${Math.max(a, b)}`);
    const step = fc.integer({ min: 1, max: Math.max(1, high - low) });
    const item = fc.oneof(
        fc.constant("*"),
        value,
        range,
        fc.tuple(fc.oneof(fc.constant("*"), range, fc.integer({ min: low, max: high }).map(String)), step).map(([base, by]) => `${base}/${by}`),
    );
    return fc.array(item, { minLength: 1, maxLength: 3 }).map((items) => items.join(","));
}

const MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];
const DAYS = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];
const expressionArbitrary = fc
    .tuple(fieldArbitrary(0, 59), fieldArbitrary(0, 59), fieldArbitrary(0, 23), fc.oneof(fc.constant("*"), fieldArbitrary(1, 28)), fieldArbitrary(1, 12, MONTHS), fieldArbitrary(0, 6, DAYS))
    .map((fields) => fields.join(" "));
const instantArbitrary = fc.integer({ min: Date.UTC(2024, 0, 1), max: Date.UTC(2030, 0, 1) }).map((ms) => new Date(ms));
const zoneArbitrary = fc.constantFrom(undefined, "Europe/Berlin", "America/New_York", "Australia/Sydney", "Asia/Kolkata", "W. Europe Standard Time", "Pacific Standard Time");

describe("the app's schedules and the local host's, written apart, agree", () => {
    it("on the next occurrences of any expression, in UTC and in time zones across daylight-saving changes", () => {
        fc.assert(
            fc.property(expressionArbitrary, instantArbitrary, zoneArbitrary, (expression, after, zone) => {
                const app = parseSchedule(expression, zone);
                const host = hostParseSchedule(expression, zone);
                let appAt = after;
                let hostAt = after;
                for (let i = 0; i < 3; i++) {
                    const from = appAt;
                    try {
                        appAt = app.next(appAt);
                    } catch (error) {
                        // The app gives up after five years (seed -844959454: "0/1 0/1 0/1 1 4/9 0", April 1st on a Sunday, next in
                        // 2029): the host may search further, but must find nothing sooner.
                        expect(String(error)).toMatch(/no occurrence in the next five years/);
                        let hostNext: Date | undefined;
                        try {
                            hostNext = host.next(hostAt);
                        } catch {
                            hostNext = undefined;
                        }
                        if (hostNext) expect(hostNext.getTime() - from.getTime()).toBeGreaterThan(5 * 365 * 86_400_000);
                        return;
                    }
                    hostAt = host.next(hostAt);
                    expect(hostAt.toISOString()).toBe(appAt.toISOString());
                }
            }),
            { numRuns: 300 },
        );
    });

    it("on the daylight-saving nights themselves, every quarter hour", () => {
        const nights = [
            ["America/New_York", "2025-03-09T04:00:00Z"],
            ["America/New_York", "2025-11-02T03:00:00Z"],
            ["Europe/Berlin", "2025-03-30T00:00:00Z"],
            ["Europe/Berlin", "2025-10-26T00:00:00Z"],
            ["Australia/Sydney", "2025-04-05T14:00:00Z"],
            ["Australia/Sydney", "2025-10-04T14:00:00Z"],
        ] as const;
        for (const [zone, start] of nights) {
            for (const expression of ["0 */15 * * * *", "0 30 1,2,3 * * *", "0 0 2 * * *"]) {
                let app = new Date(start);
                let host = new Date(start);
                for (let i = 0; i < 12; i++) {
                    app = parseSchedule(expression, zone).next(app);
                    host = hostParseSchedule(expression, zone).next(host);
                    expect(host.toISOString(), `${expression} in ${zone}, occurrence ${i + 1}`).toBe(app.toISOString());
                }
            }
        }
    });

    it("on which expressions are malformed", () => {
        for (const expression of ["* * * *", "61 * * * * *", "0 0 0 * * 7", "0 0 0 * FOO *", "0 0 0 * * 1/0", "0 0 0 5-1 * *", "0 0,,1 * * * *", "0 0 0 * * 1/2/3", "00:00:00", "-00:01:00"]) {
            const appProblem = (() => {
                try {
                    parseSchedule(expression);
                    return undefined;
                } catch (error) {
                    return (error as Error).message;
                }
            })();
            expect(() => hostParseSchedule(expression), expression).toThrow();
            expect(appProblem, expression).toBeDefined();
        }
    });

    it("on TimeSpan text, both ways", () => {
        fc.assert(
            fc.property(fc.integer({ min: -10 * 86_400_000, max: 10 * 86_400_000 }), (ms) => {
                expect(hostFormatTimeSpan(ms)).toBe(formatTimeSpan(ms));
                expect(hostParseTimeSpan(formatTimeSpan(ms))).toBe(parseTimeSpan(formatTimeSpan(ms)));
            }),
        );
        for (const text of ["00:10:00", "1.02:03:04.5", "7", "-00:00:01", "23:59:59.9999999", "24:00:00", "00:60:00", "1:2", "1.2.3:00:00", "soon", "", "00:00:00.12345678"]) {
            expect(hostParseTimeSpan(text), text).toBe(parseTimeSpan(text));
        }
    });
});
