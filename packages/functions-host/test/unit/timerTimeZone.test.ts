import { describe, expect, it } from "vitest";
import { AppSettings } from "../../src/config/appSettings";
import { buildCatalog } from "../../src/functionCatalog";
import type { CapturedFunction } from "../../src/worker/coreApi";

const sweep: CapturedFunction = {
    metadata: { name: "intakeSweep", bindings: { timer: { type: "timerTrigger", direction: "in", schedule: "%INTAKE_SWEEP_SCHEDULE%" } } },
    callback: () => undefined,
};

function nextRun(timeZone: string | undefined, after: string): string | undefined {
    const errors: string[] = [];
    const settings = new AppSettings({ INTAKE_SWEEP_SCHEDULE: "0 0,30 8-18 * * 1-5" });
    const [fn] = buildCatalog([sweep], settings, { timeZone, onError: (_name, error) => errors.push(error.message) });
    expect(errors).toEqual([]);
    return fn?.timer?.schedule.next(new Date(after)).toISOString();
}

describe("the local host's timers in WEBSITE_TIME_ZONE", () => {
    it("runs the default sweep's working hours in UTC without it", () => {
        expect(nextRun(undefined, "2025-03-31T05:00:00Z")).toBe("2025-03-31T08:00:00.000Z");
    });

    it("runs them on the zone's clock, a Windows id as well as an IANA one, and follows the change to summer time", () => {
        expect(nextRun("W. Europe Standard Time", "2025-03-28T05:00:00Z")).toBe("2025-03-28T07:00:00.000Z"); // 08:00 CET
        expect(nextRun("Europe/Berlin", "2025-03-31T05:00:00Z")).toBe("2025-03-31T06:00:00.000Z"); // 08:00 CEST
    });

    it("reports a zone it cannot read as the function's load error, naming the setting", () => {
        const errors: string[] = [];
        buildCatalog([sweep], new AppSettings({ INTAKE_SWEEP_SCHEDULE: "0 0 9 * * *" }), { timeZone: "Middle Earth Standard Time", onError: (_name, error) => errors.push(error.message) });
        expect(errors).toEqual([expect.stringMatching(/^WEBSITE_TIME_ZONE: "Middle Earth Standard Time" is neither an IANA time-zone id/)]);
    });
});
