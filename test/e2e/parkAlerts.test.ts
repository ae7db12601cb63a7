import { describe, it } from "vitest";
import { useE2E, waitFor, type E2E } from "../helpers/e2e";
import { alertInbox, intake, job, jobIn, startRecoveryE2E } from "../helpers/recoveryKit";

interface AlertState {
    parkAlerted: boolean;
    parkAlertAttempts: number;
    parkAlertError?: string;
}

/** A job that parks in its copy stage: its "<code> <name> - Document Register" is 41 characters, the limit 40. */
async function parkingJob(e2e: E2E, code: string): Promise<string> {
    const key = await intake(e2e).add(code, "Coolant Pump", "Industrial");
    e2e.sim.core.configure({ nameLimit: 40 });
    return key;
}

// The tests run side by side, each on its own host and simulator.
describe.concurrent("never silent, end to end: a park alert that did not go through is retried", { timeout: 180_000 }, () => {
    const stack = useE2E(startRecoveryE2E);

    it("the webhook answers 500 at park time: the row says not alerted and the log says why; once it is fixed, the next reaper run delivers", async ({ expect, onTestFinished }) => {
        const hook = await alertInbox();
        stack.defer(hook.close, { onTestFinished });
        hook.answer = 500;
        const e2e = await stack.start({ only: [], settings: { ALERT_WEBHOOK_URL: hook.url } }, { onTestFinished });
        const key = await parkingJob(e2e, "IND-6001");
        await e2e.fire("intakeSweep");

        await jobIn(e2e, key, "parked");
        const failed = (await waitFor(async () => {
            const found = (await job(e2e, key)) as unknown as AlertState | undefined;
            return found && found.parkAlertAttempts >= 1 ? found : undefined;
        }, "the first alert to fail")) as AlertState;
        expect(failed).toMatchObject({ parkAlerted: false, parkAlertError: "the webhook answered 500" });
        expect(e2e.host.logs.some((line) => / Error /.test(line) && line.includes(`job ${key}: the park alert webhook failed (try 1)`))).toBe(true);

        hook.answer = 204;
        const delivered = (await waitFor(async () => {
            const found = (await job(e2e, key)) as unknown as AlertState | undefined;
            return found?.parkAlerted ? found : undefined;
        }, "the alert to be delivered")) as AlertState;
        expect(delivered.parkAlertAttempts).toBeGreaterThanOrEqual(2);
        expect(e2e.host.logs.some((line) => / Error /.test(line) && new RegExp(`park alert, try \\d+: job ${key} running → parked \\(`).test(line))).toBe(true);
        expect(hook.alerts.at(-1)).toMatchObject({ event: "job.parked", jobKey: key });
        // Delivered once is enough: no more tries.
        const tries = hook.alerts.length;
        const reaperRuns = () => e2e.host.logs.filter((line) => /reaper: /.test(line)).length;
        const runs = reaperRuns();
        await waitFor(async () => reaperRuns() >= runs + 3 || undefined, "three more reaper runs", 30_000);
        expect(hook.alerts).toHaveLength(tries);
    });

    it("a job whose intake row was deleted mid-job still alerts ops when it parks", async ({ expect, onTestFinished }) => {
        const hook = await alertInbox();
        stack.defer(hook.close, { onTestFinished });
        const e2e = await stack.start({ only: [], settings: { ALERT_WEBHOOK_URL: hook.url } }, { onTestFinished });
        // Slow copies: time to delete the intake row while the job is in its copy stage.
        e2e.sim.core.configure({ latencyMs: { copySheet: 1_500 } });
        const key = await parkingJob(e2e, "IND-6002");
        await e2e.fire("intakeSweep");
        await waitFor(async () => (await job(e2e, key))?.stage === "copy" || undefined, "the copy stage");
        const [sheetId, rowId] = key.split("-");
        const deleted = await fetch(new URL(`sheets/${sheetId}/rows?ids=${rowId}`, e2e.sim.baseUrl), {
            method: "DELETE",
            headers: { authorization: "Bearer sim-token" },
        });
        expect(deleted.status).toBe(200);

        await jobIn(e2e, key, "parked");
        await waitFor(async () => hook.alerts.some((alert) => alert.jobKey === key) || undefined, "the alert");
        expect(hook.alerts.find((alert) => alert.jobKey === key)).toMatchObject({ event: "job.parked", productCode: "IND-6002", reason: expect.stringMatching(/1041/) });
        await waitFor(async () => ((await job(e2e, key)) as unknown as AlertState | undefined)?.parkAlerted || undefined, "parkAlerted");
        // The intake row is tried after ops is told (parkAlerted), and its error line comes through the host's output.
        await waitFor(
            async () => e2e.host.logs.some((line) => line.includes(`job ${key}: could not write "Stalled — `) && /the job goes on/.test(line)) || undefined,
            "the error line about the deleted intake row",
        );
    });

    it("regression #18.5 park step run twice at once, end to end: with every activity delivered twice at once, ops hears of the parking once", async ({ expect, onTestFinished }) => {
        const hook = await alertInbox();
        stack.defer(hook.close, { onTestFinished });
        const e2e = await stack.start({ only: [], settings: { ALERT_WEBHOOK_URL: hook.url, LOCALHOST_DUPLICATE_ACTIVITIES: "concurrent" } }, { onTestFinished });
        const key = await parkingJob(e2e, "IND-6003");
        await e2e.fire("intakeSweep");

        await jobIn(e2e, key, "parked");
        await waitFor(async () => ((await job(e2e, key)) as unknown as AlertState | undefined)?.parkAlerted || undefined, "parkAlerted");
        const reaperRuns = () => e2e.host.logs.filter((line) => /reaper: /.test(line)).length;
        const runs = reaperRuns();
        await waitFor(async () => reaperRuns() >= runs + 3 || undefined, "three more reaper runs", 30_000);
        expect(hook.alerts.filter((alert) => alert.jobKey === key)).toHaveLength(1);
        expect(((await job(e2e, key)) as unknown as AlertState).parkAlertAttempts).toBe(1);
    });
});

