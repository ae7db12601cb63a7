import { describe, expect, it } from "vitest";
import { WebhookAlertChannel } from "../../src/shared/alerts/AlertChannel";
import { ALERT_MAX_TRIES, alertRetryPolicy } from "../../src/shared/alerts/delivery";
import { SiteOutages } from "../../src/shared/alerts/SiteOutages";
import { sweepIntake, sweepSite } from "../../src/shared/intake/intakeSweep";
import { formatJobKey, type JobKey } from "../../src/shared/jobs/JobRow";
import { reap } from "../../src/shared/recovery/reaper";
import { storageAccessOf, tableClientFor } from "../../src/shared/storage";
import { SdkSmartsheet } from "../../src/shared/smartsheet/SdkSmartsheet";
import { sitesFrom } from "../../src/shared/sites/Sites";
import { approvedRequest, intakeSheet } from "../helpers/intakeSheet";
import { makeJobRow } from "../helpers/jobs";
import { useProvisioningHarness, type Harness } from "../helpers/provisioningHarness";
import { RecordingTelemetry } from "../helpers/recordingTelemetry";
import { alertInbox, type AlertInbox } from "../helpers/recoveryKit";

const LONG_AGO = "2026-01-01T00:00:00.000Z";

/** The harness's deps with a real webhook channel to `inbox` and a clock the test moves on. */
function withWebhook(h: Harness, inbox: AlertInbox) {
    const clock = { offsetMs: 0 };
    const telemetry = new RecordingTelemetry();
    const deps = { ...h.deps, telemetry, alerts: new WebhookAlertChannel(inbox.url, { appHost: undefined }), now: () => new Date(Date.now() + clock.offsetMs) };
    const policy = alertRetryPolicy(h.config.STALE_AFTER_MINUTES);
    return {
        deps,
        telemetry,
        /** Moves the clock past the longest wait between two tries. */
        pastBackOff: () => void (clock.offsetMs += policy.maxMs + 1_000),
    };
}

function alertFailedLines(h: Harness, alert: string): string[] {
    return h.deps.logs.filter((line) => line.startsWith("error ") && line.includes(`{"event":"alert.failed","alert":"${alert}"`));
}

async function parkedUnalerted(h: Harness): Promise<JobKey> {
    const row = makeJobRow({ intakeSheetId: String(h.site.intakeSheetId), state: "parked", stage: "copy", parkReason: "Smartsheet refused the name", parkedAt: LONG_AGO, lastProgressAt: LONG_AGO });
    await h.jobs.create(row);
    return { pk: row.intakeSheetId, rk: row.intakeRowId };
}

/** The harness's sites with `name`'s token one Smartsheet refuses (revoked), or all of them as configured. */
function sitesWith(h: Harness, revoked?: string) {
    const configs = h.config.sites.map((site) => (site.name === revoked ? { ...site, token: "revoked-token" } : site));
    return sitesFrom(configs, (accessToken) => new SdkSmartsheet({ accessToken, baseUrl: h.sim.baseUrl, callTimeoutMs: 2_000 }));
}

describe("park alerts: permanent and transient answers", () => {
    const harness = useProvisioningHarness();

    it("a 404 gives the park alert up after one try: marked failed on the row, one alert.failed line and telemetry event, no reaper run sends it again", async () => {
        const h = harness.current;
        const inbox = await alertInbox();
        try {
            inbox.answer = 404;
            const { deps, telemetry, pastBackOff } = withWebhook(h, inbox);
            const key = await parkedUnalerted(h);
            for (let run = 0; run < 4; run++) {
                await reap(deps);
                pastBackOff();
            }
            expect(inbox.alerts).toHaveLength(1);
            const row = (await h.jobs.require(key)).row;
            expect(row).toMatchObject({ parkAlerted: false, parkAlertAttempts: 1, parkAlertFailed: { status: 404, tries: 1 } });
            expect(row.parkAlertRetryAt).toBeUndefined();
            expect(alertFailedLines(h, "job.parked")).toEqual([expect.stringContaining(`job ${formatJobKey(key)}: the job.parked alert was given up after 1 try (the webhook answered 404`)]);
            expect(telemetry.events("alert.failed")).toEqual([expect.objectContaining({ alert: "job.parked", about: `job ${formatJobKey(key)}`, status: 404, tries: 1 })]);
        } finally {
            await inbox.close();
        }
    });

    it("a 503 is tried again only once its back-off has passed, ten times in all, then given up once", async () => {
        const h = harness.current;
        const inbox = await alertInbox();
        try {
            inbox.answer = 503;
            const { deps, pastBackOff } = withWebhook(h, inbox);
            const key = await parkedUnalerted(h);
            await reap(deps);
            await reap(deps); // within the back-off: not tried
            expect(inbox.alerts).toHaveLength(1);
            expect((await h.jobs.require(key)).row).toMatchObject({ parkAlertAttempts: 1, parkAlertRetryAt: expect.any(String) });
            for (let run = 0; run < ALERT_MAX_TRIES + 3; run++) {
                pastBackOff();
                await reap(deps);
            }
            expect(inbox.alerts).toHaveLength(ALERT_MAX_TRIES);
            expect((await h.jobs.require(key)).row).toMatchObject({ parkAlerted: false, parkAlertAttempts: ALERT_MAX_TRIES, parkAlertFailed: { status: 503, tries: ALERT_MAX_TRIES } });
            expect(alertFailedLines(h, "job.parked")).toHaveLength(1);
        } finally {
            await inbox.close();
        }
    });

    it("a 503 then a 2xx: delivered on the first try after the back-off, and never again", async () => {
        const h = harness.current;
        const inbox = await alertInbox();
        try {
            inbox.answer = 503;
            const { deps, pastBackOff } = withWebhook(h, inbox);
            const key = await parkedUnalerted(h);
            await reap(deps);
            inbox.answer = 204;
            for (let run = 0; run < 3; run++) {
                pastBackOff();
                await reap(deps);
            }
            expect(inbox.alerts).toHaveLength(2);
            expect((await h.jobs.require(key)).row).toMatchObject({ parkAlerted: true, parkAlertAttempts: 2 });
            expect((await h.jobs.require(key)).row.parkAlertFailed).toBeUndefined();
            expect(alertFailedLines(h, "job.parked")).toEqual([]);
        } finally {
            await inbox.close();
        }
    });
});

describe("orphaned-jobs alerts: permanent and transient answers", () => {
    const harness = useProvisioningHarness();
    const orphanSheet = "9000000000000009";

    it("a 410 gives the notice up after one try, across reaper runs; a 429 is tried again after its back-off", async () => {
        const h = harness.current;
        const inbox = await alertInbox();
        try {
            const { deps, pastBackOff } = withWebhook(h, inbox);
            await h.jobs.create(makeJobRow({ intakeSheetId: orphanSheet, state: "queued" }));
            inbox.answer = 410;
            for (let run = 0; run < 3; run++) {
                await reap(deps);
                pastBackOff();
            }
            expect(inbox.alerts.filter((alert) => alert.event === "jobs.orphaned")).toHaveLength(1);
            expect(alertFailedLines(h, "jobs.orphaned")).toEqual([expect.stringContaining(`intake sheet ${orphanSheet}: the jobs.orphaned alert was given up after 1 try (the webhook answered 410`)]);

            const otherSheet = "9000000000000010";
            await h.jobs.create(makeJobRow({ intakeSheetId: otherSheet, state: "queued" }));
            inbox.answer = 429;
            inbox.alerts.length = 0;
            await reap(deps);
            await reap(deps); // within the back-off
            expect(inbox.alerts.filter((alert) => alert.intakeSheetId === otherSheet)).toHaveLength(1);
            inbox.answer = 204;
            for (let run = 0; run < 3; run++) {
                pastBackOff();
                await reap(deps);
            }
            expect(inbox.alerts.filter((alert) => alert.intakeSheetId === otherSheet)).toHaveLength(2);
            expect(inbox.alerts.filter((alert) => alert.intakeSheetId === orphanSheet)).toHaveLength(0);
            expect(alertFailedLines(h, "jobs.orphaned")).toHaveLength(1);
        } finally {
            await inbox.close();
        }
    });
});

describe("refused-row alerts: permanent and transient answers", () => {
    const harness = useProvisioningHarness();

    it("a 403 gives the row's alert up once: later refusals of that row send nothing; a 500 is tried at the next refusal after its back-off", async () => {
        const h = harness.current;
        const inbox = await alertInbox();
        try {
            const { deps, pastBackOff } = withWebhook(h, inbox);
            const sheet = intakeSheet(h);
            await sheet.add([approvedRequest("REF-1"), approvedRequest("REF-2")]);
            h.sim.core.lockRows(sheet.sheetId(), [sheet.rowIdOf("REF-1")], true);
            inbox.answer = 403;
            await sweepSite(deps, h.site);
            for (let sweep = 0; sweep < 3; sweep++) {
                pastBackOff();
                await sweepSite(deps, h.site);
            }
            const refusedAlerts = () => inbox.alerts.filter((alert) => alert.event === "intake.rowRefused");
            expect(refusedAlerts()).toHaveLength(1);
            const refusal = (await h.jobs.require(sheet.keyOf("REF-1"))).row.intakeStatusRefusal;
            expect(refusal).toMatchObject({ alerted: false, alertFailed: { status: 403, tries: 1 } });
            expect(refusal!.refusals).toBeGreaterThanOrEqual(3);
            expect(alertFailedLines(h, "intake.rowRefused")).toHaveLength(1);

            h.sim.core.lockRows(sheet.sheetId(), [sheet.rowIdOf("REF-2")], true);
            await h.jobs.update(sheet.keyOf("REF-2"), (row) => ({ ...row, state: "done", stage: "register" }), { from: ["queued"] });
            inbox.answer = 500;
            pastBackOff();
            await sweepSite(deps, h.site, "full");
            expect(refusedAlerts().filter((alert) => alert.jobKey === sheet.jobKeyOf("REF-2"))).toHaveLength(1);
            inbox.answer = 204;
            for (let sweep = 0; sweep < 3; sweep++) {
                pastBackOff();
                await sweepSite(deps, h.site, "full");
            }
            expect(refusedAlerts().filter((alert) => alert.jobKey === sheet.jobKeyOf("REF-2"))).toHaveLength(2);
            expect((await h.jobs.require(sheet.keyOf("REF-2"))).row.intakeStatusRefusal).toMatchObject({ alerted: true, alertTries: 1 });
        } finally {
            await inbox.close();
        }
    });
});

describe("site.failed once per outage, then site.recovered", () => {
    const harness = useProvisioningHarness();

    it("a site whose token is refused for several sweeps is alerted once; when it sweeps again, once recovered; the reaper's runs end no sweep outage", async () => {
        const h = harness.current;
        const inbox = await alertInbox();
        try {
            const { deps, pastBackOff } = withWebhook(h, inbox);
            const failing = { ...deps, sites: sitesWith(h, h.site.name) };
            for (let sweep = 0; sweep < 4; sweep++) {
                await sweepIntake(failing, sweep % 2 === 0 ? "routine" : "full");
                pastBackOff();
            }
            expect(inbox.alerts).toEqual([expect.objectContaining({ event: "site.failed", site: h.site.name, run: "intake sweep" })]);
            expect(h.deps.logs.filter((line) => line.startsWith(`error intake sweep: site ${h.site.name} failed`) || line.startsWith(`error full intake sweep: site ${h.site.name} failed`))).toHaveLength(4);
            const since = inbox.alerts[0]!.failedAt;

            await reap(failing); // the reaper reads no Smartsheet to list: it works, and ends no sweep outage
            expect(inbox.alerts).toHaveLength(1);

            const healthy = { ...deps, sites: sitesWith(h) };
            await sweepIntake(healthy);
            await sweepIntake(healthy);
            expect(inbox.alerts).toEqual([
                expect.objectContaining({ event: "site.failed" }),
                { event: "site.recovered", site: h.site.name, run: "intake sweep", failedAt: since, recoveredAt: expect.any(String) },
            ]);
            expect(await h.deps.siteOutages!.open()).toEqual([]);

            // A new outage is a new alert.
            await sweepIntake(failing);
            expect(inbox.alerts.map((alert) => alert.event)).toEqual(["site.failed", "site.recovered", "site.failed"]);
        } finally {
            await inbox.close();
        }
    });

    it("when the outage cannot be recorded (storage failing for it), the site's alert is sent every run rather than never", async () => {
        const h = harness.current;
        const inbox = await alertInbox();
        try {
            const { deps } = withWebhook(h, inbox);
            const unrecorded = new SiteOutages(tableClientFor(storageAccessOf(h.config), "nosuchtable"), alertRetryPolicy(h.config.STALE_AFTER_MINUTES));
            const failing = { ...deps, sites: sitesWith(h, h.site.name), siteOutages: unrecorded };
            await sweepIntake(failing);
            await sweepIntake(failing);
            expect(inbox.alerts.map((alert) => alert.event)).toEqual(["site.failed", "site.failed"]);
            expect(h.deps.logs.filter((line) => line.includes(`the outage of site ${h.site.name} could not be recorded`))).toHaveLength(2);
        } finally {
            await inbox.close();
        }
    });

    it("a failed alert that may pass is tried again by a later failing run after its back-off; one that cannot is given up, and its recovery is not announced", async () => {
        const h = harness.current;
        const inbox = await alertInbox();
        try {
            const { deps, pastBackOff } = withWebhook(h, inbox);
            const failing = { ...deps, sites: sitesWith(h, h.site.name) };
            const healthy = { ...deps, sites: sitesWith(h) };

            inbox.answer = 502;
            await sweepIntake(failing);
            await sweepIntake(failing); // within the back-off
            expect(inbox.alerts).toHaveLength(1);
            inbox.answer = 204;
            pastBackOff();
            await sweepIntake(failing);
            pastBackOff();
            await sweepIntake(failing);
            expect(inbox.alerts.map((alert) => alert.event)).toEqual(["site.failed", "site.failed"]);
            await sweepIntake(healthy);
            expect(inbox.alerts.map((alert) => alert.event)).toEqual(["site.failed", "site.failed", "site.recovered"]);

            inbox.alerts.length = 0;
            inbox.answer = 404;
            for (let sweep = 0; sweep < 3; sweep++) {
                await sweepIntake(failing);
                pastBackOff();
            }
            expect(inbox.alerts.map((alert) => alert.event)).toEqual(["site.failed"]);
            expect(alertFailedLines(h, "site.failed")).toEqual([expect.stringContaining(`site ${h.site.name}: the site.failed alert was given up after 1 try (the webhook answered 404`)]);
            inbox.answer = 204;
            await sweepIntake(healthy);
            expect(inbox.alerts.map((alert) => alert.event)).toEqual(["site.failed"]);
            expect(h.deps.logs).toContainEqual(expect.stringMatching(new RegExp(`^info intake sweep: site ${h.site.name} runs again .*its failure alert had not gone through, so no recovery alert is sent`)));
            expect(await h.deps.siteOutages!.open()).toEqual([]);
        } finally {
            await inbox.close();
        }
    });
});
