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
            { by: "Dana (ops)", claimedBy: "Dana (ops)", note: "name rule relaxed", at: expect.any(String), parkReason: "Smartsheet refused the name" },
        ]);
    });

    it("regression: unpark raced by the parking's own bookkeeping (its alert written between the unpark's read and write) reads again and unparks, instead of answering 409", async () => {
        const { deps } = harness.current;
        const { key, jobKey } = await parkedJob();
        let raced = 0;
        const jobs = Object.assign(Object.create(Object.getPrototypeOf(deps.jobs) as object) as typeof deps.jobs, deps.jobs, {
            replace: async (...args: Parameters<typeof deps.jobs.replace>) => {
                // Twice, the park alert's write lands first: the unpark's write names a stale ETag.
                if (raced < 2) {
                    raced += 1;
                    await deps.jobs.update(key, (row) => ({ ...row, parkAlertAttempts: row.parkAlertAttempts + 1 }), { from: ["parked"] });
                }
                return deps.jobs.replace(...args);
            },
        });
        const answer = await unparkJob({ ...deps, jobs }, jobKey, JSON.stringify({ by: "Dana (ops)" }));
        expect(answer.status, JSON.stringify(answer.jsonBody)).toBe(202);
        expect(raced).toBe(2);
        expect((await deps.jobs.require(key)).row.unparks).toEqual([expect.objectContaining({ by: "Dana (ops)" })]);
    });

    const principal = (claims: Array<{ typ: string; val: string }>) =>
        Buffer.from(JSON.stringify({ auth_typ: "aad", name_typ: "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name", role_typ: "roles", claims })).toString("base64");

    it("with App Service authentication on, records the platform's identity as who unparked, and keeps the body's `by` as what was claimed", async () => {
        const { deps } = harness.current;
        const { key, jobKey } = await parkedJob();
        const easyAuth = { ...deps, config: { ...deps.config, WEBSITE_AUTH_ENABLED: true } };
        const answer = await unparkJob(easyAuth, jobKey, JSON.stringify({ by: "Dana (ops)", note: "name rule relaxed" }), {
            principalName: "dana@contoso.com",
            principalIdp: "aad",
            principal: principal([{ typ: "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name", val: "dana@contoso.com" }]),
        });
        expect(answer.status).toBe(202);
        expect((await deps.jobs.require(key)).row.unparks).toEqual([
            { by: "dana@contoso.com", claimedBy: "Dana (ops)", identityProvider: "aad", note: "name rule relaxed", at: expect.any(String), parkReason: "Smartsheet refused the name" },
        ]);
        expect(deps.logs.filter((line) => line.includes('unpark requested by dana@contoso.com (aad; claimed "Dana (ops)")'))).toHaveLength(1);
    });

    it("with App Service authentication on, takes the name from the principal's claims when the name header is absent", async () => {
        const { deps } = harness.current;
        const { key, jobKey } = await parkedJob();
        const easyAuth = { ...deps, config: { ...deps.config, WEBSITE_AUTH_ENABLED: true } };
        const answer = await unparkJob(easyAuth, jobKey, "", { principal: principal([{ typ: "preferred_username", val: "lee@contoso.com" }]) });
        expect(answer.status).toBe(202);
        const [unpark] = (await deps.jobs.require(key)).row.unparks;
        expect(unpark).toMatchObject({ by: "lee@contoso.com", identityProvider: "aad" });
        expect(unpark).not.toHaveProperty("claimedBy");
    });

    it("regression #19 forged identity: without App Service authentication, X-MS-CLIENT-PRINCIPAL headers are ignored and ops is warned", async () => {
        const { deps } = harness.current;
        const { key, jobKey } = await parkedJob();
        expect(deps.config.WEBSITE_AUTH_ENABLED).toBeUndefined();
        const answer = await unparkJob(deps, jobKey, JSON.stringify({ by: "mallory" }), {
            principalName: "ceo@contoso.com",
            principalIdp: "aad",
            principal: principal([{ typ: "name", val: "ceo@contoso.com" }]),
        });
        expect(answer.status).toBe(202);
        const [unpark] = (await deps.jobs.require(key)).row.unparks;
        expect(unpark).toMatchObject({ by: "mallory", claimedBy: "mallory" });
        expect(unpark).not.toHaveProperty("identityProvider");
        expect(JSON.stringify(unpark)).not.toContain("ceo@contoso.com");
        expect(deps.logs.filter((line) => line.startsWith("warn ") && line.includes("X-MS-CLIENT-PRINCIPAL headers but App Service authentication is off"))).toHaveLength(1);
        expect(deps.logs.filter((line) => line.includes("unpark requested by mallory (claimed, not authenticated)"))).toHaveLength(1);
    });

    it("with App Service authentication set to False, a principal header is as forged as without it", async () => {
        const { deps } = harness.current;
        const { key, jobKey } = await parkedJob();
        const authOff = { ...deps, config: { ...deps.config, WEBSITE_AUTH_ENABLED: false } };
        expect((await unparkJob(authOff, jobKey, "", { principalName: "ceo@contoso.com" })).status).toBe(202);
        const [unpark] = (await deps.jobs.require(key)).row.unparks;
        expect(unpark).toMatchObject({ by: "ops" });
        expect(unpark).not.toHaveProperty("identityProvider");
    });

    it("with App Service authentication on but an anonymous caller (no principal headers), the claim stands, marked as a claim", async () => {
        const { deps } = harness.current;
        const { key, jobKey } = await parkedJob();
        const authOn = { ...deps, config: { ...deps.config, WEBSITE_AUTH_ENABLED: true } };
        expect((await unparkJob(authOn, jobKey, JSON.stringify({ by: "Dana" }), {})).status).toBe(202);
        const [unpark] = (await deps.jobs.require(key)).row.unparks;
        expect(unpark).toMatchObject({ by: "Dana", claimedBy: "Dana" });
        expect(unpark).not.toHaveProperty("identityProvider");
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
