import { describe, expect, it } from "vitest";
import { sweepIntake } from "../../src/shared/intake/intakeSweep";
import { formatJobKey } from "../../src/shared/jobs/JobRow";
import { beginAttempt, parkJob } from "../../src/shared/provisioning/lifecycle";
import { MAX_UNPARK_BODY_BYTES, unparkJob } from "../../src/shared/recovery/unpark";
import { useProvisioningHarness } from "../helpers/provisioningHarness";

describe("unpark requests: bounded, plain, audited, and only for this app's intake sheet", () => {
    const harness = useProvisioningHarness();

    async function parkedJob() {
        const { deps } = harness.current;
        await sweepIntake(deps);
        const key = deps.enqueued[0]!;
        const instanceId = (await deps.jobs.require(key)).row.instanceId!;
        await beginAttempt(deps, { jobKey: key, instanceId, attempt: 1 });
        await parkJob(deps, { jobKey: key, instanceId, reason: "Smartsheet refused the name", stage: "copy" });
        deps.instances.set(instanceId, { runtimeStatus: "Running" });
        return { key, jobKey: formatJobKey(key) };
    }

    it("keeps who unparked the job, when and why on the job row", async () => {
        const { deps } = harness.current;
        const { key, jobKey } = await parkedJob();
        const answer = await unparkJob(deps, jobKey, JSON.stringify({ by: "Dana (ops)", note: "name rule relaxed" }));
        expect(answer.status).toBe(202);
        expect((await deps.jobs.require(key)).row.unparks).toEqual([
            { by: "Dana (ops)", note: "name rule relaxed", at: expect.any(String), parkReason: "Smartsheet refused the name" },
        ]);
    });

    it("refuses a `by` or `note` that would forge a log line or hide text, and changes nothing", async () => {
        const { deps } = harness.current;
        const { key, jobKey } = await parkedJob();
        for (const body of [
            { by: "ops\njob 1-2 parked → done (forged)" },
            { by: "ops\u202Eevil" },
            { note: "fine\r\nreaper: 0 active jobs" },
        ]) {
            const answer = await unparkJob(deps, jobKey, JSON.stringify(body));
            expect(answer.status).toBe(400);
            expect(JSON.stringify(answer.jsonBody)).toMatch(/control or invisible formatting characters/);
        }
        expect((await deps.jobs.require(key)).row).toMatchObject({ state: "parked", unparks: [] });
        expect(deps.logs.some((line) => line.includes("forged"))).toBe(false);
    });

    it("refuses a body over the limit with 413 before reading it as JSON", async () => {
        const { deps } = harness.current;
        const { jobKey } = await parkedJob();
        const answer = await unparkJob(deps, jobKey, JSON.stringify({ note: "x".repeat(MAX_UNPARK_BODY_BYTES) }));
        expect(answer.status).toBe(413);
    });

    it("answers 404 for a job key of another intake sheet, even if such a row exists", async () => {
        const { deps } = harness.current;
        const { key } = await parkedJob();
        const other = { pk: "1111111111111111", rk: key.rk };
        const row = (await deps.jobs.require(key)).row;
        await deps.jobs.create({ ...row, intakeSheetId: other.pk });
        const answer = await unparkJob(deps, formatJobKey(other), "");
        expect(answer.status).toBe(404);
        expect((await deps.jobs.require(other)).row.state).toBe("parked");
    });
});
