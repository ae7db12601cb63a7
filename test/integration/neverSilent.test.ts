import { RestError } from "@azure/data-tables";
import { setTimeout as sleep } from "node:timers/promises";
import { WebhookAlertChannel, type Alert } from "../../src/shared/alerts/AlertChannel";
import { afterEach, describe, expect, it } from "vitest";
import { sweepIntake } from "../../src/shared/intake/intakeSweep";
import { formatJobKey } from "../../src/shared/jobs/JobRow";
import { beginAttempt, parkJob } from "../../src/shared/provisioning/lifecycle";
import { tellOpsOfParking } from "../../src/shared/provisioning/parkAlert";
import { reap } from "../../src/shared/recovery/reaper";
import { useProvisioningHarness } from "../helpers/provisioningHarness";
import { intakeRow } from "../helpers/inspectProduct";
import { alertInbox } from "../helpers/recoveryKit";
import { runSteps } from "../helpers/runSteps";


describe("never silent: the customer's intake row is not the only way ops hears", () => {
    const harness = useProvisioningHarness();
    const closers: Array<() => Promise<void>> = [];
    afterEach(async () => {
        for (const close of closers.splice(0)) await close();
    });

    /** A begun job of an app whose alert webhook is a test inbox. */
    async function runningJobWithWebhook() {
        const { deps } = harness.current;
        const hook = await alertInbox();
        closers.push(hook.close);
        const alerting = { ...deps, alerts: new WebhookAlertChannel(hook.url) };
        await sweepIntake(alerting);
        const key = deps.enqueued[0]!;
        const step = { jobKey: key, instanceId: (await deps.jobs.require(key)).row.instanceId! };
        await beginAttempt(alerting, { ...step, attempt: 1 });
        return { hook, alerting, key, step };
    }

    async function deleteIntakeRow(rowId: string) {
        const { sim } = harness.current;
        const sheetId = sim.core.state().intakeSheetId!;
        const response = await fetch(new URL(`sheets/${sheetId}/rows?ids=${rowId}`, sim.baseUrl), {
            method: "DELETE",
            headers: { authorization: "Bearer sim-token" },
        });
        expect(response.status).toBe(200);
    }

    it("a job whose intake row was deleted mid-job is still finished; the row says why the status could not be written, and ops gets an error line", async () => {
        const { deps } = harness.current;
        await sweepIntake(deps);
        const key = deps.enqueued[0]!;
        await deleteIntakeRow(key.rk);
        await runSteps(deps, key);
        const row = (await deps.jobs.require(key)).row;
        expect(row.state).toBe("done");
        expect(row.intakeStatusError).toMatch(/404|1006|Not Found/);
        expect(deps.logs.filter((line) => line.startsWith(`error job ${formatJobKey(key)}: could not write`)).length).toBeGreaterThan(0);
    });

    it("a park whose intake row is gone still alerts ops first, and marks the job alerted only after the webhook's 2xx", async () => {
        const { deps } = harness.current;
        const { hook, alerting, key, step } = await runningJobWithWebhook();
        await deleteIntakeRow(key.rk);

        const parked = await parkJob(alerting, { ...step, reason: "The template has no sheet named \"Approvals\" any more.", stage: "copy" });
        expect(parked.outcome).toBe("done");
        const row = (await deps.jobs.require(key)).row;
        expect(row).toMatchObject({ state: "parked", parkAlerted: true, parkAlertAttempts: 1 });
        expect(hook.alerts).toEqual([expect.objectContaining({ event: "job.parked", jobKey: formatJobKey(key) })]);
        expect(deps.logs.some((line) => line.startsWith(`error job ${formatJobKey(key)} running → parked`))).toBe(true);
        expect(row.intakeStatusError).toBeDefined();
    });

    it("a webhook that fails leaves the job unalerted with the failure on the row; telling ops again succeeds once it answers 2xx", async () => {
        const { deps, sim } = harness.current;
        const { hook, alerting, key, step } = await runningJobWithWebhook();
        hook.answer = 500;

        await parkJob(alerting, { ...step, reason: "Smartsheet refused the name", stage: "copy" });
        const unalerted = (await deps.jobs.require(key)).row;
        expect(unalerted).toMatchObject({ state: "parked", parkAlerted: false, parkAlertAttempts: 1, parkAlertError: "the webhook answered 500" });
        expect(deps.logs.some((line) => /^error .*the park alert webhook failed \(try 1\): the webhook answered 500/.test(line))).toBe(true);
        // The customer still hears, even though ops' webhook is down.
        expect(intakeRow(sim.core.state(), unalerted.productCode)?.Status).toBe("Stalled — Smartsheet refused the name");

        hook.answer = 200;
        // Not before the back-off the failure set on the row.
        expect(unalerted.parkAlertRetryAt).toBeDefined();
        expect(await tellOpsOfParking(alerting, key, "job parked (alert retry)")).toBe("left");
        const afterBackOff = { ...alerting, now: () => new Date(Date.parse(unalerted.parkAlertRetryAt!) + 1) };
        expect(await tellOpsOfParking(afterBackOff, key, "job parked (alert retry)")).toBe("sent");
        const alerted = (await deps.jobs.require(key)).row;
        expect(alerted).toMatchObject({ parkAlerted: true, parkAlertAttempts: 2 });
        expect(alerted.parkAlertError).toBeUndefined();
        expect(hook.alerts).toHaveLength(2);
    });

    it("regression #18.5 park step run twice at once: ops is alerted exactly once for the parking", async () => {
        const { deps } = harness.current;
        const { hook, alerting, key, step } = await runningJobWithWebhook();
        // A webhook slow enough that both runs are past their first read before either hears back.
        const slow = { ...alerting, alerts: { send: async (alert: Alert) => (await sleep(300), alerting.alerts.send(alert)) } };
        const input = { ...step, reason: "Smartsheet refused the name", stage: "copy" as const };

        const outcomes = await Promise.all([parkJob(slow, input), parkJob(slow, input)]);
        expect(outcomes.map((one) => one.outcome)).toEqual(["done", "done"]);
        expect(hook.alerts).toEqual([expect.objectContaining({ event: "job.parked", jobKey: formatJobKey(key) })]);
        expect((await deps.jobs.require(key)).row).toMatchObject({ state: "parked", parkAlerted: true, parkAlertAttempts: 1 });
        expect(deps.logs.filter((line) => line.startsWith(`error job ${formatJobKey(key)} running → parked`))).toHaveLength(1);
    });

    it("regression #18.5 parkAlerted not written after a 2xx: the retried park step does not alert again", async () => {
        const { deps } = harness.current;
        const { hook, alerting, key, step } = await runningJobWithWebhook();
        // Once the webhook answered, storage refuses every write of the first run's step.
        let refusing = false;
        const storageDown = new RestError("the table answered 503 Server Busy", { statusCode: 503 });
        const jobs = Object.create(deps.jobs) as typeof deps.jobs;
        jobs.update = (...args) => (refusing ? Promise.reject(storageDown) : deps.jobs.update(...args));
        const sends = { send: async (alert: Alert) => (await alerting.alerts.send(alert), void (refusing = true)) };
        const input = { ...step, reason: "Smartsheet refused the name", stage: "copy" as const };

        await expect(parkJob({ ...alerting, jobs, alerts: sends }, input)).rejects.toThrow(storageDown);
        expect(hook.alerts).toHaveLength(1);
        refusing = false;
        // Durable Functions runs the failed activity again.
        expect((await parkJob(alerting, input)).outcome).toBe("done");
        expect(hook.alerts).toHaveLength(1);
        expect((await deps.jobs.require(key)).row).toMatchObject({ state: "parked", parkAlerted: false, parkAlertClaim: expect.objectContaining({ claimedAt: expect.any(String) }) });

        // The reaper leaves a claim its run may still be at; once no run can be, it tells ops again: at least once wins.
        await reap(alerting);
        expect(hook.alerts).toHaveLength(1);
        const longAgo = new Date(Date.now() - (harness.current.config.STALE_AFTER_MINUTES + 1) * 60_000).toISOString();
        await deps.jobs.update(key, (row) => ({ ...row, parkAlertClaim: { ...row.parkAlertClaim!, claimedAt: longAgo } }), { from: ["parked"] });
        await reap(alerting);
        expect(hook.alerts).toHaveLength(2);
        const told = (await deps.jobs.require(key)).row;
        expect(told).toMatchObject({ parkAlerted: true, parkAlertAttempts: 1 });
        expect(told.parkAlertClaim).toBeUndefined();
    });
});

