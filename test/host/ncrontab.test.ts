import { describe, expect, it } from "vitest";
import { parseSchedule } from "../../tools/functions-host/ncrontab";

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

    it("rejects malformed expressions with the field at fault", () => {
        expect(() => parseSchedule("* * * *")).toThrow(/expected 6 fields/);
        expect(() => parseSchedule("61 * * * * *")).toThrow(/Second field '61'/);
        expect(() => parseSchedule("0 0 0 * * 7")).toThrow(/DayOfWeek field '7'/);
        expect(() => parseSchedule("0 0 0 * FOO *")).toThrow(/Month field 'FOO'/);
        expect(() => parseSchedule("0 0 0 * * *", "Not/AZone")).toThrow(/WEBSITE_TIME_ZONE/);
    });
});
