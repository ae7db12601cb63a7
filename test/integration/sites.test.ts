import { alertRetryPolicy } from "../../src/shared/alerts/delivery";
import { describe, expect, it } from "vitest";
import type { Alert } from "../../src/shared/alerts/AlertChannel";
import { sweepIntake } from "../../src/shared/intake/intakeSweep";
import { formatJobKey, type JobKey } from "../../src/shared/jobs/JobRow";
import { JobStore } from "../../src/shared/jobs/JobStore";
import { getJob, listJobs } from "../../src/shared/recovery/jobsApi";
import { reap } from "../../src/shared/recovery/reaper";
import { reconcileJobs } from "../../src/shared/recovery/reconcile";
import { unparkJob } from "../../src/shared/recovery/unpark";
import { SdkSmartsheet } from "../../src/shared/smartsheet/SdkSmartsheet";
import { sitesFrom, type Site } from "../../src/shared/sites/Sites";
import { intakeRow, inspectProduct } from "../helpers/inspectProduct";
import { makeJobRow } from "../helpers/jobs";
import { useProvisioningHarness, type Harness } from "../helpers/provisioningHarness";
import { runStepsOrPark } from "../helpers/runSteps";

const CODES = ["IND-1042", "CON-2201", "IND-1043"];
const codesOf = (site: Site) => (site.name === "demo" ? CODES : CODES.map((code) => `${code}-S2`));

/** The harness's deps with alerts captured. */
function alerting(h: Harness) {
    const alerts: Alert[] = [];
    return { deps: { ...h.deps, alerts: { send: async (alert: Alert) => void alerts.push(alert) } }, alerts };
}

/** The harness's sites, one of them on a token Smartsheet refuses (revoked). */
function withRevokedToken(h: Harness, name: string) {
    const configs = h.config.sites.map((site) => (site.name === name ? { ...site, token: "revoked-token" } : site));
    return sitesFrom(configs, (accessToken) => new SdkSmartsheet({ accessToken, baseUrl: h.sim.baseUrl, callTimeoutMs: 2_000 }));
}

/** Whether a product folder lies under the site's products folder (in its product-line folder). */
function productFolderSite(h: Harness, code: string): string | undefined {
    const state = h.sim.core.state();
    const folder = inspectProduct(state, code).folder;
    const line = state.folders.find((candidate) => candidate.id === folder?.parentId);
    return h.sites.find((site) => site.productsFolderId === line?.parentId)?.name;
}

describe("two customer sites served by one app, against one simulator with two tokens", () => {
    const harness = useProvisioningHarness({ simulator: { sites: 2 } });

    it("the sweep and the steps provision each site's products into its own folders and Filing Index, each token's calls counted apart", async () => {
        const h = harness.current;
        const [demo, demo2] = h.sites;
        expect(h.sites.map((site) => [site.name, site.tokenSetting])).toEqual([
            ["demo", "SMARTSHEET_TOKEN_DEMO"],
            ["demo-2", "SMARTSHEET_TOKEN_DEMO_2"],
        ]);
        h.sim.core.resetCalls();

        const run = await sweepIntake(h.deps);
        expect(run.failed).toEqual([]);
        expect(run.sites.map((report) => [report.site, report.queued.length])).toEqual([
            ["demo", 3],
            ["demo-2", 3],
        ]);
        expect(h.deps.enqueued.map((key) => key.pk)).toEqual([...Array(3).fill(String(demo!.intakeSheetId)), ...Array(3).fill(String(demo2!.intakeSheetId))]);
        for (const key of h.deps.enqueued) expect(await runStepsOrPark(h.deps, key)).toBe("done");

        const state = h.sim.core.state();
        for (const site of h.sites) {
            for (const code of codesOf(site)) {
                expect(productFolderSite(h, code)).toBe(site.name);
                const product = inspectProduct(state, code, site.filingIndexSheetId);
                expect(product.sheets).toHaveLength(7);
                expect(product.foreignFormulas).toEqual([]);
                expect(product.filingRows).toHaveLength(1);
                expect(intakeRow(state, code, site.intakeSheetId)).toMatchObject({ Status: "Done" });
            }
            // The other site's products are not in this site's Filing Index.
            const other = h.sites.find((candidate) => candidate !== site)!;
            for (const code of codesOf(other)) expect(inspectProduct(state, code, site.filingIndexSheetId).filingRows).toEqual([]);
        }

        // Each site's calls went out on its own token: none was refused for reaching the other's workspace.
        const calls = h.sim.core.calls();
        expect(Object.keys(calls.byToken).sort()).toEqual(["sim-token", "sim-token-2"]);
        expect(calls.log.filter((entry) => entry.status === 403)).toEqual([]);
        const jobs = await Promise.all(h.deps.enqueued.map(async (key) => (await h.jobs.require(key)).row));
        for (const [site, token] of [[demo!, "sim-token"], [demo2!, "sim-token-2"]] as const) {
            const spent = jobs.filter((job) => job.intakeSheetId === String(site.intakeSheetId)).reduce((sum, job) => sum + job.smartsheetCalls, 0);
            expect(spent).toBeGreaterThan(0);
            expect(calls.byToken[token]!).toBeGreaterThanOrEqual(spent);
        }
        // Each template folder has its own blueprint, and each intake sheet its own cursor.
        const versions = new Map(h.sites.map((site) => [site.name, new Set(jobs.filter((job) => job.intakeSheetId === String(site.intakeSheetId)).map((job) => job.blueprintVersion))]));
        expect([...versions.values()].map((set) => set.size)).toEqual([1, 1]);
        expect(new Set([...versions.values()].flatMap((set) => [...set])).size).toBe(2);
        for (const site of h.sites) expect((await h.deps.cursors.read(site.intakeSheetId)).cursor).toBeDefined();
    });

    it("a site whose template folder is deleted mid-job parks its jobs and alerts, while the other site's jobs finish; its next sweep fails alone", async () => {
        const h = harness.current;
        const [demo, demo2] = h.sites;
        const { deps, alerts } = alerting(h);
        await sweepIntake(deps);
        await demo2!.smartsheet.deleteFolder(demo2!.templateFolderId);

        for (const key of h.deps.enqueued) await runStepsOrPark(deps, key);
        for (const key of h.deps.enqueued) {
            const row = (await h.jobs.require(key)).row;
            if (key.pk === String(demo!.intakeSheetId)) expect(row).toMatchObject({ state: "done" });
            else expect(row).toMatchObject({ state: "parked", parkReason: expect.stringMatching(/404/), parkAlerted: true });
        }
        const parkAlerts = alerts.filter((alert) => alert.event === "job.parked");
        expect(parkAlerts.map((alert) => alert.site)).toEqual(["demo-2", "demo-2", "demo-2"]);
        expect(h.deps.logs.filter((line) => /^error job \d+-\d+ running → parked/.test(line))).toHaveLength(3);

        alerts.length = 0;
        const next = await sweepIntake(deps);
        expect(next.sites.map((report) => report.site)).toEqual(["demo"]);
        expect(next.failed).toEqual([{ site: "demo-2", reason: expect.stringMatching(/^a sheet or folder of the site is gone \(Smartsheet getFolderChildren failed with 404\/1006.*restore it, or correct the site's ids in SITES/), kind: "permanent" }]);
        expect(alerts).toEqual([{ event: "site.failed", site: "demo-2", run: "intake sweep", reason: next.failed[0]!.reason, failedAt: expect.any(String) }]);
        expect(h.deps.logs).toContainEqual(expect.stringMatching(/^error intake sweep: site demo-2 failed: a sheet or folder of the site is gone .*; the other sites carry on$/));
    });

    it("a site whose token is revoked fails its sweep alone, first in the list or not, even when the alert cannot go out; its cursor stays", async () => {
        const h = harness.current;
        const sent: Alert[] = [];
        let alertUp = false;
        const deps = {
            ...h.deps,
            sites: withRevokedToken(h, "demo"),
            alerts: {
                send: async (alert: Alert) => {
                    if (!alertUp) throw new Error("the webhook answered 503");
                    sent.push(alert);
                },
            },
        };
        const run = await sweepIntake(deps);
        expect(run.sites.map((report) => [report.site, report.queued.length])).toEqual([["demo-2", 3]]);
        expect(run.failed).toEqual([
            { site: "demo", reason: expect.stringMatching(/^Smartsheet refused the site's token \(.*401\/1002.*\); put a valid token into the app setting SMARTSHEET_TOKEN_DEMO$/), kind: "permanent" },
        ]);
        expect(h.deps.logs).toContainEqual(expect.stringMatching(/^error intake sweep: site demo failed: Smartsheet refused the site's token/));
        expect(h.deps.logs).toContainEqual(expect.stringMatching(/^error intake sweep: the alert that site demo failed did not go through \(the webhook answered 503\)/));
        expect((await h.deps.cursors.read(h.site.intakeSheetId)).cursor).toBeUndefined();
        expect(h.deps.logs.join("\n")).not.toContain("revoked-token");

        alertUp = true;
        // The failed alert is tried again by the first run after its back-off (1 min on Azure), not sooner.
        await sweepIntake(deps, "full");
        expect(sent).toEqual([]);
        const firstRetry = alertRetryPolicy(h.config.STALE_AFTER_MINUTES).firstMs;
        await sweepIntake({ ...deps, now: () => new Date(Date.now() + firstRetry) }, "full");
        expect(sent).toEqual([expect.objectContaining({ event: "site.failed", site: "demo", run: "full intake sweep" })]);
    });

    it("the reaper and the reconciliation look after every site, and carry on past a site whose jobs cannot be listed", async () => {
        const h = harness.current;
        const [demo, demo2] = h.sites;
        const longAgo = "2026-01-01T00:00:00.000Z";
        const stale = async (site: Site) =>
            (await h.jobs.create(makeJobRow({ intakeSheetId: String(site.intakeSheetId), state: "running", stage: "copy", lastProgressAt: longAgo }))).row;
        const first = await stale(demo!);
        const second = await stale(demo2!);

        const both = await reap(h.deps);
        expect(both.failed).toEqual([]);
        expect(both.transitions.map((line) => line.split(" ")[1])).toEqual([formatJobKey({ pk: first.intakeSheetId, rk: first.intakeRowId }), formatJobKey({ pk: second.intakeSheetId, rk: second.intakeRowId })]);

        // Listing the first site's jobs fails: the second site is still looked after.
        const broken = String(demo!.intakeSheetId);
        const jobs: JobStore = Object.assign(Object.create(JobStore.prototype) as JobStore, h.jobs, {
            listActiveIndex: (pk: string, filter?: Parameters<JobStore["listActiveIndex"]>[1]) =>
                pk === broken ? Promise.reject(new Error("The table service is unavailable")) : h.jobs.listActiveIndex(pk, filter),
            withOwnCount: () => jobs,
        });
        const { deps, alerts } = alerting(h);
        await h.jobs.update({ pk: second.intakeSheetId, rk: second.intakeRowId }, (row) => ({ ...row, lastProgressAt: longAgo }), { from: ["running"] });
        const one = await reap({ ...deps, jobs });
        expect(one.failed).toEqual([{ site: "demo", reason: "The table service is unavailable", kind: "bug" }]);
        expect(one.transitions).toEqual([expect.stringMatching(new RegExp(`^job ${second.intakeSheetId}-${second.intakeRowId} running → running \\(recovery 2/3`))]);
        expect(alerts).toEqual([expect.objectContaining({ event: "site.failed", site: "demo", run: "reaper" })]);
        expect(h.deps.logs).toContainEqual(expect.stringMatching(/^info reaper: 1 active jobs, 1 without progress .*; 1 site failed \(demo\)$/));

        const reconciled = await reconcileJobs({ ...deps, jobs }, "start-up");
        expect(reconciled).toMatchObject({ checked: 1, failed: [{ site: "demo" }] });
    });

    it("unpark takes a parked job of any site's intake sheet, GET /api/jobs lists every site's jobs (or one site's), and a job of no site is refused", async () => {
        const h = harness.current;
        const [demo, demo2] = h.sites;
        await sweepIntake(h.deps);
        const key = h.deps.enqueued.find((candidate) => candidate.pk === String(demo2!.intakeSheetId))!;
        await h.jobs.update(key, (row) => ({ ...row, state: "parked", parkReason: "Template sheet missing", parkedAt: new Date().toISOString() }), { from: ["queued"] });
        h.deps.instances.set((await h.jobs.require(key)).row.instanceId!, { runtimeStatus: "Running" });

        expect((await unparkJob(h.deps, formatJobKey(key), "")).status).toBe(202);
        const elsewhere: JobKey = { pk: "4000000000000009", rk: key.rk };
        const refused = await unparkJob(h.deps, formatJobKey(elsewhere), "");
        expect(refused).toMatchObject({
            status: 404,
            jsonBody: { error: `There is no job ${formatJobKey(elsewhere)} on this app's intake sheets (demo: ${demo!.intakeSheetId}, demo-2: ${demo2!.intakeSheetId}).` },
        });

        const all = (await listJobs(h.deps, { state: null })).jsonBody as { jobs: Array<{ site: string }> };
        expect(all.jobs.map((job) => job.site)).toEqual(["demo", "demo", "demo", "demo-2", "demo-2", "demo-2"]);
        const one = (await listJobs(h.deps, { state: "queued", site: "demo-2" })).jsonBody as { site: string; jobs: Array<{ site: string }> };
        expect(one.site).toBe("demo-2");
        expect(one.jobs.map((job) => job.site)).toEqual(["demo-2", "demo-2"]);
        expect(await listJobs(h.deps, { state: null, site: "initech" })).toEqual({ status: 400, jsonBody: { error: 'Unknown site "initech"; use one of demo, demo-2.' } });
        expect((await getJob(h.deps, h.deps.orchestrations, formatJobKey(key))).jsonBody).toMatchObject({ site: "demo-2", state: "parked" });
    });

    it("a job whose intake sheet belongs to no site any more parks with a reason that says what to do, and writes nothing to Smartsheet", async () => {
        const h = harness.current;
        const { deps, alerts } = alerting(h);
        await sweepIntake(deps);
        const key = h.deps.enqueued.find((candidate) => candidate.pk === String(h.sites[1]!.intakeSheetId))!;
        const onlyFirst = sitesFrom(h.config.sites.slice(0, 1), () => h.site.smartsheet);
        h.sim.core.resetCalls();
        expect(await runStepsOrPark({ ...deps, sites: onlyFirst }, key)).toBe("parked");
        const row = (await h.jobs.require(key)).row;
        expect(row.parkReason).toMatch(new RegExp(`^Intake sheet ${key.pk} belongs to no site this app serves \\(demo: \\d+\\); add its site back to SITES, then unpark the job\\.$`));
        expect(alerts).toEqual([expect.objectContaining({ event: "job.parked", site: undefined, jobKey: formatJobKey(key) })]);
        expect(h.sim.core.calls().total).toBe(0);
        expect(h.deps.logs).toContainEqual(expect.stringMatching(/could not write "Stalled — Intake sheet .*belongs to no site.*; the job goes on/));
    });

    it("regression #18.10 site removed from SITES: its jobs are listed, reaped and reconciled, counted as orphaned by configuration, and ops is told once", async () => {
        const h = harness.current;
        const removed = String(h.sites[1]!.intakeSheetId);
        await sweepIntake(h.deps);
        const [stale, parked, finished] = h.deps.enqueued.filter((key) => key.pk === removed);
        const longAgo = "2026-01-01T00:00:00.000Z";
        const staleRow = (await h.jobs.update(stale!, (row) => ({ ...row, state: "running", stage: "copy", lastProgressAt: longAgo }), { from: ["queued"] })).row;
        h.deps.instances.set(staleRow.instanceId!, { runtimeStatus: "Failed" });
        const parkedAfterAFailedAlert = { state: "parked" as const, stage: "copy" as const, parkReason: "Template sheet missing", parkedAt: longAgo, lastProgressAt: longAgo, parkAlertAttempts: 1 };
        await h.jobs.update(parked!, (row) => ({ ...row, ...parkedAfterAFailedAlert }), { from: ["queued"] });
        const finishedRow = (await h.jobs.update(finished!, (row) => ({ ...row, state: "running", stage: "register" }), { from: ["queued"] })).row;
        h.deps.instances.set(finishedRow.instanceId!, { runtimeStatus: "Completed", output: { result: "done" } });

        // The site is taken out of SITES; two instances of the app run the reaper at once.
        const { deps, alerts } = alerting(h);
        const onlyFirst = { ...deps, sites: sitesFrom(h.config.sites.slice(0, 1), () => h.site.smartsheet) };
        const listed = (await listJobs(onlyFirst, { state: null })).jsonBody as { jobs: Array<{ jobKey: string; site?: string }> };
        expect(listed.jobs.filter((job) => job.site === undefined).map((job) => job.jobKey).sort()).toEqual([stale, parked, finished].map((key) => formatJobKey(key!)).sort());

        const reports = await Promise.all([reap(onlyFirst), reap(onlyFirst)]);
        for (const report of reports) expect(report.orphaned).toEqual([{ intakeSheetId: removed, active: 3 }]);
        expect(h.deps.logs).toContainEqual(expect.stringMatching(new RegExp(`^info reaper: 3 active jobs, .*; 3 active jobs orphaned by configuration \\(intake sheet ${removed} in no site of SITES\\)`)));
        expect((await h.jobs.require(stale!)).row).toMatchObject({ attempt: 2, recoveries: 1 });
        expect((await h.jobs.require(finished!)).row.state).toBe("done");
        expect((await h.jobs.require(parked!)).row).toMatchObject({ parkAlerted: true, parkAlertAttempts: 2 });
        await reap(onlyFirst);
        expect(alerts.filter((alert) => alert.event === "jobs.orphaned")).toEqual([
            expect.objectContaining({ intakeSheetId: removed, activeJobs: 3, reason: expect.stringMatching(/add its site back to SITES/) }),
        ]);
        expect(alerts.filter((alert) => alert.event === "job.parked")).toEqual([expect.objectContaining({ jobKey: formatJobKey(parked!) })]);
    });
});

