import { alertRetryPolicy } from "../../src/shared/alerts/delivery";
import { WebhookAlertChannel, type Alert } from "../../src/shared/alerts/AlertChannel";
import { describe, expect, it, vi } from "vitest";
import { sweepIntake } from "../../src/shared/intake/intakeSweep";
import { currentInstanceId, formatJobKey, type JobKey, type JobRowInput } from "../../src/shared/jobs/JobRow";
import type { OrchestrationState } from "../../src/shared/orchestration/Orchestrations";
import { PARK_ALERT_FAILURES_PER_RUN, PARK_ALERT_TRIES_PER_RUN } from "../../src/shared/recovery/parkAlertRetries";
import { BACKLOG_PATIENCE_WINDOWS, reap } from "../../src/shared/recovery/reaper";
import { makeJobRow } from "../helpers/jobs";
import { useProvisioningHarness, type Harness } from "../helpers/provisioningHarness";
import { alertInbox } from "../helpers/recoveryKit";

const WINDOW_MS = 15 * 60_000;
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

/** The seeded intake's three jobs: the first two as the test makes them, the third moving now. */
async function jobs(harness: Harness, ...shapes: Array<Partial<JobRowInput> & { orchestration?: OrchestrationState }>): Promise<JobKey[]> {
    const { deps } = harness;
    await sweepIntake(deps);
    const keys = deps.enqueued.slice(0, 3);
    const all = [...shapes, { lastProgressAt: new Date().toISOString(), orchestration: { runtimeStatus: "Running" as const } }];
    for (const [n, { orchestration, ...shape }] of all.entries()) {
        const stored = await deps.jobs.update(keys[n]!, (row) => ({ ...row, state: "running", stage: "copy", ...shape }), { from: ["queued"] });
        if (orchestration) deps.instances.set(stored.row.instanceId!, orchestration);
    }
    return keys;
}

describe("a backlog is not a death", () => {
    const harness = useProvisioningHarness();

    it("leaves alone a stale job whose instance is still Pending while the pipeline moves, and counts it", async () => {
        const { deps } = harness.current;
        await jobs(harness.current, { lastProgressAt: ago(WINDOW_MS + 60_000), orchestration: { runtimeStatus: "Pending" } });
        const report = await reap(deps);
        expect(report).toMatchObject({ stale: 1, backlogged: 1, transitions: [] });
        expect(deps.started).toEqual([]);
        expect(deps.logs).toContainEqual(expect.stringMatching(/^info reaper: 3 active jobs, 1 without progress for 15 min, 1 waiting in a backlog, 0 transitions/));
    });

    it("leaves a Running instance alone while other jobs move, whatever touched its row last", async () => {
        const { deps } = harness.current;
        const lastTouch = WINDOW_MS + 5 * 60_000;
        const [handedOut, touchedSince] = await jobs(
            harness.current,
            // The orchestration scheduled the next step after the last one ended; no worker has it yet.
            { lastProgressAt: ago(lastTouch), orchestration: { runtimeStatus: "Running", lastUpdatedTime: ago(lastTouch - 2_000) } },
            // A duplicate delivery of a finished step touched the row after the orchestration moved on.
            { lastProgressAt: ago(lastTouch), orchestration: { runtimeStatus: "Running", lastUpdatedTime: ago(lastTouch + 2_000) } },
        );
        const report = await reap(deps);
        expect(report).toMatchObject({ stale: 2, backlogged: 2, transitions: [] });
        for (const key of [handedOut!, touchedSince!]) expect((await deps.jobs.require(key)).row).toMatchObject({ attempt: 1, recoveries: 0 });
    });

    it("takes over a stale job whose instance failed, was terminated or is gone, however busy the pipeline", async () => {
        const { deps } = harness.current;
        const stale = ago(WINDOW_MS + 60_000);
        const [failed, gone] = await jobs(
            harness.current,
            { lastProgressAt: stale, orchestration: { runtimeStatus: "Failed" } },
            { lastProgressAt: stale },
        );
        const report = await reap(deps);
        expect(report.backlogged).toBe(0);
        expect(report.transitions.map((line) => line.split(" ")[1])).toEqual(expect.arrayContaining([formatJobKey(failed!), formatJobKey(gone!)]));
    });

    it("takes over a job waiting behind others once it has waited longer than the patience allows", async () => {
        const { deps } = harness.current;
        const idle = BACKLOG_PATIENCE_WINDOWS * WINDOW_MS + 60_000;
        const [lost] = await jobs(harness.current, { lastProgressAt: ago(idle), orchestration: { runtimeStatus: "Pending" } });
        const report = await reap(deps);
        expect(report.backlogged).toBe(0);
        expect(report.transitions).toEqual([expect.stringMatching(new RegExp(`^job ${formatJobKey(lost!)} running → running \\(recovery 1/3`))]);
    });

    it("takes over a waiting-looking job when nothing in the pipeline moved within the window", async () => {
        const { deps } = harness.current;
        await sweepIntake(deps);
        const [only] = deps.enqueued;
        // The other two jobs finished long ago; this one is all there is, and it does not move.
        for (const key of deps.enqueued.slice(1, 3)) await deps.jobs.update(key, (row) => ({ ...row, state: "done" }), { from: ["queued"] });
        const stored = await deps.jobs.update(only!, (row) => ({ ...row, state: "running", lastProgressAt: ago(WINDOW_MS + 60_000) }), { from: ["queued"] });
        deps.instances.set(stored.row.instanceId!, { runtimeStatus: "Pending" });
        const report = await reap(deps);
        expect(report.backlogged).toBe(0);
        expect(report.transitions).toHaveLength(1);
    });

    it("measures staleness from quietUntil: a job waiting on a durable timer is not taken over before the window after it", async () => {
        const { deps } = harness.current;
        const [quiet, quietLonger] = await jobs(
            harness.current,
            { lastProgressAt: ago(2 * WINDOW_MS), quietUntil: ago(WINDOW_MS - 60_000), orchestration: { runtimeStatus: "Failed" } },
            { lastProgressAt: ago(3 * WINDOW_MS), quietUntil: ago(WINDOW_MS + 60_000), orchestration: { runtimeStatus: "Failed" } },
        );
        const report = await reap(deps);
        expect(report.stale).toBe(1);
        expect(report.transitions).toEqual([expect.stringMatching(new RegExp(`^job ${formatJobKey(quietLonger!)} running → running`))]);
        expect((await deps.jobs.require(quiet!)).row.attempt).toBe(1);
    });
});

describe("never silent: the reaper retries park alerts that did not go through", () => {
    const harness = useProvisioningHarness();

    it("retries each run until the webhook answers 2xx, then stops", async () => {
        const inbox = await alertInbox();
        try {
            inbox.answer = 500;
            const base = harness.current.deps;
            const deps = { ...base, alerts: new WebhookAlertChannel(inbox.url) };
            await sweepIntake(deps);
            const key = deps.enqueued[0]!;
            const stored = await deps.jobs.update(key, (row) => ({ ...row, state: "running", recoveries: 3, lastProgressAt: ago(WINDOW_MS + 60_000) }), { from: ["queued"] });
            deps.instances.set(stored.row.instanceId!, { runtimeStatus: "Failed" });

            await reap(deps); // parks it; the webhook answers 500
            expect((await deps.jobs.require(key)).row).toMatchObject({ state: "parked", parkAlerted: false, parkAlertAttempts: 1 });
            expect(base.logs.filter((line) => /^error .*park alert webhook failed \(try 1\)/.test(line))).toHaveLength(1);

            await reap(deps); // before the back-off: not tried
            expect((await deps.jobs.require(key)).row).toMatchObject({ parkAlertAttempts: 1 });
            const afterBackOff = async () => {
                const retryAt = Date.parse((await deps.jobs.require(key)).row.parkAlertRetryAt!);
                return { ...deps, now: () => new Date(Math.max(Date.now(), retryAt + 1)) };
            };

            await reap(await afterBackOff()); // still 500
            expect((await deps.jobs.require(key)).row).toMatchObject({ parkAlerted: false, parkAlertAttempts: 2, parkAlertError: "the webhook answered 500" });
            expect(base.logs).toContainEqual(expect.stringMatching(new RegExp(`^error park alert, try 2: job ${formatJobKey(key)} running → parked \\(No progress after 3 recoveries`)));

            inbox.answer = 204;
            const later = await afterBackOff();
            await reap(later);
            expect((await deps.jobs.require(key)).row).toMatchObject({ parkAlerted: true, parkAlertAttempts: 3 });
            await reap(later);
            expect(inbox.alerts).toHaveLength(3);
            expect(inbox.alerts[2]).toMatchObject({ event: "job.parked", jobKey: formatJobKey(key) });
        } finally {
            await inbox.close();
        }
    });

    it("regression parking.test two alerts: leaves a park whose first alert may still be on its way to its worker, and sends it itself once that worker cannot be at it", async () => {
        const inbox = await alertInbox();
        try {
            const deps = { ...harness.current.deps, alerts: new WebhookAlertChannel(inbox.url) };
            await sweepIntake(deps);
            const key = deps.enqueued[0]!;
            // Parked a moment ago by a worker that has not told ops yet (or died before it could).
            const parkedNow = { state: "parked" as const, stage: "copy" as const, parkReason: "Smartsheet refused the name", parkedAt: ago(1_000), lastProgressAt: ago(1_000) };
            await deps.jobs.update(key, (row) => ({ ...row, ...parkedNow }), { from: ["queued"] });

            await reap(deps);
            expect(inbox.alerts).toEqual([]);
            expect((await deps.jobs.require(key)).row).toMatchObject({ state: "parked", parkAlerted: false, parkAlertAttempts: 0 });

            await deps.jobs.update(key, (row) => ({ ...row, parkedAt: ago(WINDOW_MS + 1_000), lastProgressAt: ago(WINDOW_MS + 1_000) }), { from: ["parked"] });
            await reap(deps);
            expect(inbox.alerts).toEqual([expect.objectContaining({ event: "job.parked", jobKey: formatJobKey(key), reason: "Smartsheet refused the name" })]);
            expect((await deps.jobs.require(key)).row).toMatchObject({ parkAlerted: true, parkAlertAttempts: 1 });
            await reap(deps);
            expect(inbox.alerts).toHaveLength(1);
        } finally {
            await inbox.close();
        }
    });
});

describe("a webhook that hangs holds up no take-over and no site", () => {
    const harness = useProvisioningHarness({ simulator: { sites: 2 } });

    it("regression #18.7 hanging webhook stalls the reaper: alert retries are bounded per run in total and go beside the take-overs of every site", async () => {
        const { deps, sites } = harness.current;
        const [first, second] = sites.map((site) => String(site.intakeSheetId));
        const longAgo = ago(WINDOW_MS + 60_000);
        const parked: JobKey[] = [];
        for (let n = 0; n < 12; n++) {
            const row = makeJobRow({
                intakeSheetId: first,
                state: "parked",
                stage: "copy",
                parkReason: "Smartsheet refused the name",
                parkedAt: longAgo,
                lastProgressAt: longAgo,
                parkAlertAttempts: 1,
                parkAlertError: "the webhook answered 500",
            });
            parked.push({ pk: first!, rk: row.intakeRowId });
            await deps.jobs.create(row);
        }
        const stale = (await deps.jobs.create(makeJobRow({ intakeSheetId: second, state: "running", stage: "copy", lastProgressAt: longAgo }))).row;
        deps.instances.set(currentInstanceId(stale), { runtimeStatus: "Failed" });

        // Accepts each alert and never answers, until the test lets go.
        let letGo!: () => void;
        const hung = new Promise<void>((resolve) => (letGo = resolve));
        const tried: string[] = [];
        const hanging = {
            send: async (alert: Alert) => {
                tried.push(alert.event === "job.parked" ? alert.jobKey : alert.event);
                await hung;
                throw new Error("the webhook did not answer within 10 s");
            },
        };
        const reaping = reap({ ...deps, alerts: hanging });
        try {
            await vi.waitFor(() => expect(deps.started).toEqual([`provision-${second}-${stale.intakeRowId}-a2`]), { timeout: 20_000 });
        } finally {
            letGo();
        }
        const report = await reaping;
        expect(report.alerts).toEqual({ sent: 0, failed: PARK_ALERT_FAILURES_PER_RUN, deferred: 12 - PARK_ALERT_FAILURES_PER_RUN });
        expect(tried).toHaveLength(PARK_ALERT_FAILURES_PER_RUN);
        expect(report.transitions).toEqual([expect.stringMatching(new RegExp(`^job ${second}-${stale.intakeRowId} running → running \\(recovery 1/3`))]);
        expect(deps.logs).toContainEqual(expect.stringMatching(new RegExp(`; park alerts: 0 sent, ${PARK_ALERT_FAILURES_PER_RUN} failed, ${12 - PARK_ALERT_FAILURES_PER_RUN} left for the next run$`)));

        // The webhook answers again: each run tells ops of at most its share, until every parking is told.
        const inbox: Alert[] = [];
        // After the back-off of the three failed tries (their second: twice the first wait).
        const backOff = 2 * alertRetryPolicy(deps.config.STALE_AFTER_MINUTES).firstMs;
        const answering = { ...deps, now: () => new Date(Date.now() + backOff), alerts: { send: async (alert: Alert) => void inbox.push(alert) } };
        expect((await reap(answering)).alerts).toEqual({ sent: PARK_ALERT_TRIES_PER_RUN, failed: 0, deferred: 12 - PARK_ALERT_TRIES_PER_RUN });
        expect((await reap(answering)).alerts).toEqual({ sent: 12 - PARK_ALERT_TRIES_PER_RUN, failed: 0, deferred: 0 });
        expect(new Set(inbox.map((alert) => (alert.event === "job.parked" ? alert.jobKey : "")))).toEqual(new Set(parked.map(formatJobKey)));
        for (const key of parked) expect((await deps.jobs.require(key)).row.parkAlerted).toBe(true);
    });
});
