import { describe, expect, it } from "vitest";
import type { Alert } from "../../src/shared/alerts/AlertChannel";
import { sweepSite } from "../../src/shared/intake/intakeSweep";
import { JobStore } from "../../src/shared/jobs/JobStore";
import { storageAccessOf, tableClientFor } from "../../src/shared/storage";
import type { SmartsheetPort } from "../../src/shared/smartsheet/SmartsheetPort";
import type { Site } from "../../src/shared/sites/Sites";
import { approvedRequest, intakeSheet } from "../helpers/intakeSheet";
import { useProvisioningHarness } from "../helpers/provisioningHarness";

describe("an intake row Smartsheet refuses to write", () => {
    const harness = useProvisioningHarness();

    it("regression #18.1 one row the Jobs table refuses wedges the sweep: a product line holding U+2028, quoted in its rejection (Azurite fails a transaction holding it) stops no other row; that row is named in an error line and tried again, the cursor stays", async () => {
        const h = harness.current;
        // The storage client re-sends the failed transaction as always (three times), but without its 0.8 s, 1.6 s, 3.2 s back-off.
        const table = tableClientFor(storageAccessOf(h.config), h.config.JOBS_TABLE, { retryOptions: { retryDelayInMs: 10, maxRetryDelayInMs: 40 } });
        const deps = { ...h.deps, jobs: new JobStore(table) };
        const sheet = intakeSheet(h);
        await sheet.add([approvedRequest("SEP-1"), approvedRequest("SEP-2", { "Product Line": "Industrial\u2028Line two" }), approvedRequest("SEP-3")]);

        const first = await sweepSite(deps, h.site);

        expect(first.queued).toEqual(expect.arrayContaining(["SEP-1", "SEP-3"].map(sheet.jobKeyOf)));
        expect(["SEP-1", "SEP-3"].map(sheet.status)).toEqual(["Queued", "Queued"]);
        const sent = h.deps.enqueued.map((key) => `${key.pk}-${key.rk}`);
        expect(sent).toEqual(expect.arrayContaining(["SEP-1", "SEP-3"].map(sheet.jobKeyOf)));
        expect(sent).not.toContain(sheet.jobKeyOf("SEP-2"));
        const refused = h.deps.logs.filter((line) => line.includes(`job ${sheet.jobKeyOf("SEP-2")} could not be written to the Jobs table`));
        expect(refused).toEqual([expect.stringMatching(/^error .*the other rows go on, this row is tried again next sweep/)]);
        expect(sheet.status("SEP-2")).toBeUndefined();
        expect((await h.deps.cursors.read(sheet.sheetId())).cursor).toBeUndefined();
        const second = await sweepSite(deps, h.site);
        expect(second.queued).toEqual([]);
        expect(h.deps.logs.filter((line) => line.includes(`job ${sheet.jobKeyOf("SEP-2")} could not be written to the Jobs table`))).toHaveLength(2);
    });

    it("regression chaos seed 3691165713 two overlapping sweeps both named a locked row to ops: the refusal's alert is claimed with the note, one alert", async () => {
        const h = harness.current;
        const sheet = intakeSheet(h);
        await sheet.add([approvedRequest("TWO-1"), approvedRequest("TWO-2")]);
        const alerts: Alert[] = [];
        // A webhook that takes its time: the other sweep notes the refusal while the first is still telling ops.
        const send = async (alert: Alert) => {
            alerts.push(alert);
            await new Promise((resolve) => setTimeout(resolve, 1_000));
        };
        const deps = { ...h.deps, alerts: { send } };
        await sweepSite(deps, h.site);
        // The job finished while its row was locked: its Done is owed, and both sweeps write it.
        await h.jobs.update(sheet.keyOf("TWO-2"), (row) => ({ ...row, state: "done", stage: "register" }), { from: ["queued"] });
        h.sim.core.lockRows(sheet.sheetId(), [sheet.rowIdOf("TWO-2")], true);

        // Both sweeps send their status writes before either hears the refusal: how the chaos run's
        // sweeps overlapped, and on a loaded machine otherwise one sweep may finish before the other
        // reads the job (then it rightly leaves a refusal that is backing off alone).
        const overlapping = statusWritesMeet(h.site, 2);
        const sweeps = await Promise.all([sweepSite(deps, overlapping, "full"), sweepSite(deps, overlapping, "full")]);

        expect(sweeps.flatMap((sweep) => sweep.statusesRefused)).toEqual([sheet.jobKeyOf("TWO-2"), sheet.jobKeyOf("TWO-2")]);
        expect(alerts.filter((alert) => alert.event === "intake.rowRefused")).toHaveLength(1);
        const lines = h.deps.logs.filter((line) => line.includes(`intake row ${sheet.rowIdOf("TWO-2")}`) && line.includes("refused"));
        expect(lines.map((line) => line.split(" ")[0])).toEqual(["error", "warn"]);
        expect((await h.jobs.require(sheet.keyOf("TWO-2"))).row.intakeStatusRefusal).toMatchObject({ refusals: 2, alerted: true });
    });

    it("regression #18.1 one locked intake row wedges the sweep: every other row is queued, its Queued written and its message sent, the cursor moves; the locked row is named to ops once, left alone while it backs off, and written once it is unlocked", async () => {
        const h = harness.current;
        const sheet = intakeSheet(h);
        await sheet.add([approvedRequest("LCK-1"), approvedRequest("LCK-2"), approvedRequest("LCK-3")]);
        h.sim.core.lockRows(sheet.sheetId(), [sheet.rowIdOf("LCK-2")], true);
        const alerts: Alert[] = [];
        let offsetMs = 0;
        const deps = { ...h.deps, alerts: { send: async (alert: Alert) => void alerts.push(alert) }, now: () => new Date(Date.now() + offsetMs) };

        const first = await sweepSite(deps, h.site);

        expect(first.queued).toEqual(expect.arrayContaining(["LCK-1", "LCK-2", "LCK-3"].map(sheet.jobKeyOf)));
        expect(first.statusesRefused).toEqual([sheet.jobKeyOf("LCK-2")]);
        expect(["LCK-1", "LCK-2", "LCK-3"].map(sheet.status)).toEqual(["Queued", "", "Queued"].map((status) => status || undefined));
        // The locked row's job is queued too: its Queued was refused, so nothing of it can land over a later status.
        expect(h.deps.enqueued.map((key) => `${key.pk}-${key.rk}`)).toEqual(expect.arrayContaining(["LCK-1", "LCK-2", "LCK-3"].map(sheet.jobKeyOf)));
        expect((await h.deps.cursors.read(sheet.sheetId())).cursor).toBeDefined();
        expect(alerts).toEqual([
            expect.objectContaining({
                event: "intake.rowRefused",
                jobKey: sheet.jobKeyOf("LCK-2"),
                intakeRowId: String(sheet.rowIdOf("LCK-2")),
                status: "Queued",
                errorCode: 1050,
                message: "You cannot edit a locked row.",
            }),
        ]);
        const refusalLines = () => h.deps.logs.filter((line) => line.includes(`intake row ${sheet.rowIdOf("LCK-2")}`) && line.includes("refused"));
        expect(refusalLines()).toEqual([expect.stringMatching(/^error .*refused "Queued" \(Smartsheet said 1050: You cannot edit a locked row\.\)/)]);
        const refused = await h.jobs.require(sheet.keyOf("LCK-2"));
        expect(refused.row).toMatchObject({ state: "queued", intakeStatusRefusal: { status: "Queued", errorCode: 1050, refusals: 1, alerted: true } });

        // Within its back-off the row is not written again, and ops is not told again.
        h.sim.core.resetCalls();
        const second = await sweepSite({ ...deps, jobs: h.jobs }, h.site, "full");
        expect(second.statusesRefused).toEqual([]);
        expect(h.sim.core.calls().byOperation.updateRows ?? 0).toBe(0);

        // Past it, still locked: refused again, a warning, no second alert.
        offsetMs = 3 * 60_000;
        const third = await sweepSite(deps, h.site);
        expect(third.statusesRefused).toEqual([sheet.jobKeyOf("LCK-2")]);
        expect(alerts).toHaveLength(1);
        expect(refusalLines().map((line) => line.split(" ")[0])).toEqual(["error", "warn"]);
        expect((await h.jobs.require(sheet.keyOf("LCK-2"))).row.intakeStatusRefusal).toMatchObject({ refusals: 2 });

        // Unlocked and past the next back-off: the row gets what its job owes, and the refusal is over.
        h.sim.core.lockRows(sheet.sheetId(), [sheet.rowIdOf("LCK-2")], false);
        offsetMs = 10 * 60_000;
        const fourth = await sweepSite(deps, h.site);
        expect(fourth.statusesRefused).toEqual([]);
        expect(sheet.status("LCK-2")).toBe("Queued");
        const settled = (await h.jobs.require(sheet.keyOf("LCK-2"))).row;
        expect(settled.intakeStatusRefusal).toBeUndefined();
        expect(settled.intakeStatusRetryAt).toBeUndefined();
        expect(alerts).toHaveLength(1);
    });
});

/**
 * The site with its Smartsheet client holding each row-status write (updateRowsEach) until
 * `parties` of them have been sent, then letting every one through, and any after them at once.
 */
function statusWritesMeet(site: Site, parties: number): Site {
    const waiting: Array<() => void> = [];
    let met = false;
    const arrive = () =>
        met
            ? Promise.resolve()
            : new Promise<void>((resolve) => {
                  waiting.push(resolve);
                  if (waiting.length === parties) {
                      met = true;
                      for (const release of waiting) release();
                  }
              });
    const holding = (port: SmartsheetPort): SmartsheetPort =>
        new Proxy(port, {
            get(target, property) {
                if (property === "withOwnTally") return (...args: Parameters<SmartsheetPort["withOwnTally"]>) => holding(target.withOwnTally(...args));
                if (property === "updateRowsEach")
                    return async (...args: Parameters<SmartsheetPort["updateRowsEach"]>) => {
                        await arrive();
                        return target.updateRowsEach(...args);
                    };
                const value: unknown = Reflect.get(target, property, target);
                return typeof value === "function" ? value.bind(target) : value;
            },
        });
    return { ...site, smartsheet: holding(site.smartsheet) };
}
