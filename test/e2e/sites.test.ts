import { describe, expect, it } from "vitest";
import type { SimSite } from "../../tools/smartsheet-sim";
import { useE2E, waitFor, startE2E, type E2E } from "../helpers/e2e";
import { inspectProduct } from "../helpers/inspectProduct";
import { alertInbox, job, jobIn } from "../helpers/recoveryKit";

/** The job keys of a site's approved intake rows. */
function approvedKeys(e2e: E2E, site: SimSite): string[] {
    const state = e2e.sim.core.state();
    const intake = state.sheets.find((sheet) => sheet.id === site.intakeSheetId)!;
    const approved = intake.columns.find((column) => column.title === "Approved")!.id;
    return intake.rows.filter((row) => row.cells.find((cell) => cell.columnId === approved)?.value === true).map((row) => `${intake.id}-${row.id}`);
}

describe("two customer sites side by side in one local host", { timeout: 240_000 }, () => {
    const stack = useE2E(startE2E);

    it("one site's template folder is deleted mid-job: its jobs park and alert, the other site's finish, and its next sweep fails alone", async () => {
        const hook = await alertInbox();
        stack.defer(hook.close);
        const e2e = await stack.start({ simulator: { sites: 2 }, settings: { ALERT_WEBHOOK_URL: hook.url } });
        expect(JSON.parse(e2e.settings.SITES!).map((site: { name: string; tokenSetting: string }) => [site.name, site.tokenSetting])).toEqual([
            ["demo", "SMARTSHEET_TOKEN_DEMO"],
            ["demo-2", "SMARTSHEET_TOKEN_DEMO_2"],
        ]);
        const [demo, demo2] = e2e.sim.core.sites();
        // The second site's product folders take 4 s to make: time to delete its template folder once its jobs run.
        e2e.sim.core.setFaults([{ op: "createFolder", kind: "delay", delayMs: 4_000, times: 3, match: "-S2 " }]);
        await e2e.fire("intakeSweep");

        const secondKeys = approvedKeys(e2e, demo2!);
        await waitFor(
            async () => (await Promise.all(secondKeys.map((key) => job(e2e, key)))).some((found) => found?.state === "running") || undefined,
            "a job of the second site to run",
        );
        const deleted = await fetch(new URL(`folders/${demo2!.templateFolderId}`, e2e.sim.baseUrl), {
            method: "DELETE",
            headers: { authorization: `Bearer ${demo2!.token}` },
        });
        expect(deleted.status).toBe(200);

        for (const key of approvedKeys(e2e, demo!)) await jobIn(e2e, key, "done");
        for (const key of secondKeys) expect((await jobIn(e2e, key, "parked")).parkReason).toMatch(/404/);
        const state = e2e.sim.core.state();
        for (const code of ["IND-1042", "CON-2201", "IND-1043"]) {
            const product = inspectProduct(state, code, demo!.filingIndexSheetId);
            expect(product.sheets).toHaveLength(7);
            expect(product.filingRows).toHaveLength(1);
        }
        await waitFor(async () => hook.alerts.filter((alert) => alert.event === "job.parked").length >= 3 || undefined, "three park alerts");
        expect(hook.alerts.filter((alert) => alert.event === "job.parked").map((alert) => [alert.site, alert.jobKey]).sort()).toEqual(
            secondKeys.map((key) => ["demo-2", key]).sort(),
        );
        expect(e2e.sim.core.calls().byToken).toEqual({ "sim-token": expect.any(Number), "sim-token-2": expect.any(Number) });

        const parked = (await (await e2e.api("jobs?state=parked&site=demo-2")).json()) as { jobs: Array<{ jobKey: string; site: string }> };
        expect(parked.jobs.map((job) => job.jobKey).sort()).toEqual([...secondKeys].sort());

        await e2e.fire("intakeSweep");
        await waitFor(async () => hook.alerts.some((alert) => alert.event === "site.failed") || undefined, "the site failure alert");
        expect(hook.alerts.filter((alert) => alert.event === "site.failed")).toEqual([
            { event: "site.failed", site: "demo-2", run: "intake sweep", reason: expect.stringMatching(/^a sheet or folder of the site is gone/), failedAt: expect.any(String) },
        ]);
        expect(e2e.host.logs.some((line) => /intake sweep: site demo-2 failed: a sheet or folder of the site is gone/.test(line))).toBe(true);
        expect(e2e.host.logs.some((line) => /intake sweep of site demo \(routine/.test(line))).toBe(true);
    });
});
