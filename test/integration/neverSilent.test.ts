import { WebhookAlertChannel } from "../../src/shared/alerts/AlertChannel";
import { afterEach, describe, expect, it } from "vitest";
import { sweepIntake } from "../../src/shared/intake/intakeSweep";
import { formatJobKey } from "../../src/shared/jobs/JobRow";
import { beginAttempt, parkJob } from "../../src/shared/provisioning/lifecycle";
import { tellOpsOfParking } from "../../src/shared/provisioning/parkAlert";
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
        expect(await tellOpsOfParking(alerting, key, "job parked (alert retry)")).toBe(true);
        const alerted = (await deps.jobs.require(key)).row;
        expect(alerted).toMatchObject({ parkAlerted: true, parkAlertAttempts: 2 });
        expect(alerted.parkAlertError).toBeUndefined();
        expect(hook.alerts).toHaveLength(2);
    });
});
