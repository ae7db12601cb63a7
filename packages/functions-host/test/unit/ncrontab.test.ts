import { describe, expect, it } from "vitest";
import { parseSchedule } from "../../src/schedule/ncrontab";

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
