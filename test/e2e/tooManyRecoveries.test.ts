import { describe, it } from "vitest";
import { useE2E, waitFor } from "../helpers/e2e";
import { inspectProduct, intakeRow } from "../helpers/inspectProduct";
import { alertInbox, intake, job, jobIn, startRecoveryE2E, transitions } from "../helpers/recoveryKit";

/**
 * Three windows pass before the job parks, so this test's window is shorter than FAST_RECOVERY's
 * 12 s: a Smartsheet call may take 3 s (a write 4.5 s with the rate-limit waits, then 1 s to
 * settle), a worker 6 s, which puts the longest a live job can go without progress at 9 s
 * (+ 2 s of step retry delay + 1 s of clock skew); the window is 9.6 s, the late-write horizon
 * 6 s, and the reaper looks every second.
 */
const TIGHTER_WINDOW = {
    AzureFunctionsJobHost__functionTimeout: "00:00:06",
    SMARTSHEET_CALL_TIMEOUT_SECONDS: "3",
    LATE_WRITE_HORIZON_SECONDS: "6",
    STALE_AFTER_MINUTES: "0.16",
    REAPER_SCHEDULE: "* * * * * *",
};

// A file of its own: three reaper windows pass before the job parks, the longest wait of the
// recovery tests, so it runs beside parking's other tests rather than after them.
describe("recovery end to end: too many recoveries", { timeout: 180_000 }, () => {
    const stack = useE2E(startRecoveryE2E);

    it("too many recoveries: a job whose copy keeps failing is recovered MAX_RECOVERIES times, then parked and alerted, and stays parked", async ({ expect, onTestFinished }) => {
        const inbox = await alertInbox();
        stack.defer(inbox.close, { onTestFinished });
        const e2e = await stack.start({ only: ["CON-2201"], settings: { ALERT_WEBHOOK_URL: inbox.url, STEP_RETRY_ATTEMPTS: "1", ...TIGHTER_WINDOW } }, { onTestFinished });
        e2e.sim.core.setFaults([{ op: "copySheet", kind: "error4002", times: 10_000, match: "Suppliers" }]);
        await e2e.fire("intakeSweep");
        const key = intake(e2e).keyOf("CON-2201");
        const parked = await jobIn(e2e, key, "parked", 120_000);
        expect(parked).toMatchObject({ recoveries: 2, attempt: 4 });
        expect(parked.parkReason).toMatch(/^No progress after 2 recoveries: .*ended Failed/);
        expect(transitions(e2e, /recovery [12]\/2/)).toHaveLength(2);
        // The reaper parks the row, then reads it once more to tell ops: the line comes a moment after.
        await waitFor(async () => transitions(e2e, /running → parked \(No progress after 2 recoveries/).length > 0 || undefined, "the park line");
        expect(transitions(e2e, /running → parked \(No progress after 2 recoveries/)).toHaveLength(1);
        await waitFor(async () => inbox.alerts.length >= 1 || undefined, "the alert");
        expect(inbox.alerts[0]).toMatchObject({ jobKey: key, recoveries: 2 });
        await waitFor(async () => /^Stalled — No progress after 2 recoveries/.test(String(intakeRow(e2e.sim.core.state(), "CON-2201")?.Status)) || undefined, "the intake row to say Stalled");
        // It does not loop: a parked job is the reaper's no more.
        const reaperRuns = () => e2e.host.logs.filter((line) => /reaper: /.test(line)).length;
        const runsAtPark = reaperRuns();
        await waitFor(async () => reaperRuns() >= runsAtPark + 4 || undefined, "four more reaper runs", 30_000);
        expect(transitions(e2e, /recovery|→ parked/)).toHaveLength(3);
        expect((await job(e2e, key))?.state).toBe("parked");
        expect(inspectProduct(e2e.sim.core.state(), "CON-2201").sheets).toHaveLength(6);
    });
});
