import { beforeEach, describe, expect, it } from "vitest";
import { IntakeStatus } from "../../src/shared/intakeRow/intakeStatus";
import { sweepSite, type SweepDeps, type SweepKind } from "../../src/shared/intake/intakeSweep";
import { formatJobKey, type JobKey } from "../../src/shared/jobs/JobRow";
import { listJobs } from "../../src/shared/recovery/jobsApi";
import { reap } from "../../src/shared/recovery/reaper";
import { approvedRequest, intakeSheet, JobStoreFailingCreate } from "../helpers/intakeSheet";
import { useProvisioningHarness, type Harness } from "../helpers/provisioningHarness";

const T0 = Date.parse("2026-03-02T09:00:00.000Z");
const at = (seconds: number) => T0 + seconds * 1000;

/** Smartsheet's clock and ours; equal unless a test skews them. The harness allows 1 s of skew. */
const clocks = { smartsheet: T0, app: T0 };
const setClocks = (ms: number) => {
    clocks.smartsheet = ms;
    clocks.app = ms;
};

describe("the intake sweep's cursor", () => {
    // Before the harness's own reset, so the seeded intake rows are written at T0.
    beforeEach(() => setClocks(T0));
    const harness = useProvisioningHarness({ simulator: { clock: () => clocks.smartsheet } });

    /** The harness's deps on our clock. */
    const depsOf = (h: Harness): Harness["deps"] => ({ ...h.deps, now: () => new Date(clocks.app) });
    const sweep = (h: Harness, kind?: SweepKind, deps: Partial<SweepDeps> = {}) => sweepSite({ ...depsOf(h), ...deps }, h.site, kind);
    /** Every queued job's orchestration runs, so no sweep sends its message again. */
    const running = async (h: Harness, keys: readonly JobKey[]) => {
        for (const key of keys) h.deps.instances.set((await h.jobs.require(key)).row.instanceId!, { runtimeStatus: "Running" });
    };
    const cursorOf = async (h: Harness) => (await h.deps.cursors.read(h.site.intakeSheetId)).cursor;

    it("a first sweep reads every row; the next reads only the rows changed since the cursor it left, which no job listing sees", async () => {
        const h = harness.current;
        const sheet = intakeSheet(h);
        setClocks(at(60));
        const first = await sweep(h);
        expect(first.rowsModifiedSince).toBeUndefined();
        expect(first.rowsRead).toBe(sheet.rowCount());
        expect(first.queued).toHaveLength(3);
        // Smartsheet's time of the read (its answer's Date), not the sheet's last change an hour before.
        expect(await cursorOf(h)).toMatchObject({ sweptAt: new Date(at(60)).toISOString() });
        await running(h, h.deps.enqueued);

        setClocks(at(90));
        await sweep(h);
        setClocks(at(120));
        await sheet.add([approvedRequest("IND-2001")]);
        setClocks(at(180));
        const next = await sweep(h);

        // From the last sweep's read (at 90 s by Smartsheet's clock), less the skew allowed (1 s here), down to a whole
        // second, less one: the new row only, not the first sweep's three Queued rows written at 60 s.
        expect(next.rowsModifiedSince).toBe(new Date(at(88)).toISOString());
        expect(next.rowsRead).toBe(1);
        expect(next.queued).toEqual([sheet.jobKeyOf("IND-2001")]);

        const active = await listJobs(h.deps, { state: null });
        expect(active.jsonBody).toMatchObject({ invalid: [] });
        expect((active.jsonBody as { jobs: unknown[] }).jobs).toHaveLength(4);
        expect((await listJobs(h.deps, { state: "done" })).jsonBody).toMatchObject({ jobs: [], invalid: [] });
        expect(await reap(depsOf(h))).toMatchObject({ transitions: [] });
        expect(h.deps.logs.filter((line) => line.startsWith("error "))).toEqual([]);
    });

    it("regression bench sweepCalls5000: rows typed long before the sweep that read them are not read again by the next routine sweep", async () => {
        const h = harness.current;
        const sheet = intakeSheet(h);
        // Forty requests nobody approved yet, typed in an hour before the first sweep, in one call.
        clocks.smartsheet = at(-3_600);
        await sheet.add(Array.from({ length: 40 }, (_, index) => ({ ...approvedRequest(`OLD-${index}`), Approved: false })));
        setClocks(at(60));
        await sweep(h);
        await running(h, h.deps.enqueued);

        setClocks(at(120));
        await sheet.add([approvedRequest("NEW-1")]);
        setClocks(at(180));
        const next = await sweep(h);

        // From the first sweep's read at 60 s by Smartsheet's clock (less the 1 s of skew allowed here, and a second): the three
        // Queued it wrote and the new row; not the forty typed an hour before, which a cursor at the sheet's last change re-read.
        expect(next.queued).toEqual([sheet.jobKeyOf("NEW-1")]);
        expect(next.rowsRead).toBe(4);
    });

    it("is not advanced when a row's job cannot be written, and the next sweep picks the row up", async () => {
        const h = harness.current;
        const sheet = intakeSheet(h);
        setClocks(at(60));
        await sweep(h);
        await running(h, h.deps.enqueued);
        setClocks(at(120));
        await sheet.add([approvedRequest("IND-2001"), approvedRequest("IND-2002")]);
        // A later edit of a row with no request, so the failed sweep reads the sheet as changed after the new rows.
        setClocks(at(200));
        await sheet.edit("CON-2202", { "Product Name": "Travel Mug, large" });

        setClocks(at(300));
        // The second job's write fails: the first row goes on (queued, its message sent), the cursor stays.
        const failed = await sweep(h, "routine", { jobs: new JobStoreFailingCreate(h.table, 2) });
        expect(failed.queued).toEqual([sheet.jobKeyOf("IND-2001")]);
        expect(h.deps.logs.filter((line) => line.includes(`job ${sheet.jobKeyOf("IND-2002")} could not be written to the Jobs table (The Table service is unavailable (simulated outage))`))).toHaveLength(1);
        expect(await cursorOf(h)).toMatchObject({ sweptAt: new Date(at(60)).toISOString() });

        // Long after: had the failed sweep moved the cursor, these rows would be outside its window.
        setClocks(at(600));
        const next = await sweep(h);
        expect(next.queued).toEqual([sheet.jobKeyOf("IND-2002")]);
        expect(next.requeued).toEqual([sheet.jobKeyOf("IND-2001")]);
        expect(sheet.status("IND-2002")).toBe("Queued");
        // Smartsheet's time of the read.
        expect(await cursorOf(h)).toMatchObject({ sweptAt: new Date(at(600)).toISOString() });
    });

    it("sees a row edited after a sweep read the sheet, in the second its cursor names (Smartsheet's clock a little behind ours)", async () => {
        const h = harness.current;
        const sheet = intakeSheet(h);
        clocks.app = at(61.2);
        clocks.smartsheet = at(60.7);
        await sweep(h);
        await running(h, h.deps.enqueued);

        // After the sweep's read, by Smartsheet's clock, but a second before the sweep's start by ours.
        clocks.smartsheet = at(60.9);
        await sheet.edit("CON-2202", { Approved: true });

        setClocks(at(200));
        const next = await sweep(h);
        expect(next.queued).toEqual([sheet.jobKeyOf("CON-2202")]);
    });

    it("a full sweep finds a row the cursor missed, does its work and logs it by job key", async () => {
        const h = harness.current;
        const sheet = intakeSheet(h);
        setClocks(at(60));
        await sweep(h);
        await running(h, h.deps.enqueued);
        setClocks(at(120));
        await sheet.edit("CON-2202", { Approved: true });
        // Someone moves the cursor past the edit by hand.
        const cursor = (await cursorOf(h))!;
        await h.deps.cursors.advance(h.site.intakeSheetId, { ...cursor, sweptAt: new Date(at(600)).toISOString() }, h.deps.timing.clockSkewMs);

        setClocks(at(700));
        expect((await sweep(h)).queued).toEqual([]);
        const full = await sweep(h, "full");

        const key = sheet.jobKeyOf("CON-2202");
        expect(full.rowsModifiedSince).toBeUndefined();
        expect(full.queued).toEqual([key]);
        expect(full.missedByCursor).toEqual([key]);
        expect(h.deps.logs).toContainEqual(expect.stringMatching(new RegExp(`^warn job ${key}: intake row \\d+ needed work that the cursor missed`)));
        expect(h.deps.logs).toContainEqual(expect.stringMatching(/^info intake sweep of site default \(full, every row\): .*1 queued.*1 missed by the cursor/));

        setClocks(at(800));
        expect((await sweep(h, "full")).missedByCursor).toEqual([]);
    });

    it("a routine sweep sends again the message of a queued job whose row is older than the cursor", async () => {
        const h = harness.current;
        const lost = { enqueue: async () => undefined };
        setClocks(at(60));
        const first = await sweep(h, "routine", lost);
        // The sheet changes after the queued rows (a row with no request is edited), and a sweep reads that.
        setClocks(at(200));
        await intakeSheet(h).edit("CON-2202", { "Product Name": "Travel Mug, large" });
        setClocks(at(300));
        await sweep(h, "routine", lost);

        setClocks(at(600));
        const next = await sweep(h);
        // No row: the queued rows, and the one edited at 200 s, are older than the cursor (the read at 300 s).
        expect(next.rowsRead).toBe(0);
        expect(next.requeued.sort()).toEqual([...first.queued].sort());
        expect(h.deps.enqueued.map(formatJobKey).sort()).toEqual([...first.queued].sort());
    });

    it("a rejected row passes once its product line's folder exists, though nobody edited the row", async () => {
        const h = harness.current;
        const sheet = intakeSheet(h);
        await sheet.add([approvedRequest("KIT-1", { "Product Line": "Kitchen" })]);
        setClocks(at(60));
        expect((await sweep(h)).rejected).toEqual([sheet.jobKeyOf("KIT-1")]);
        await running(h, h.deps.enqueued);
        setClocks(at(200));
        await sheet.edit("CON-2202", { "Product Name": "Travel Mug, large" });
        setClocks(at(300));
        await sweep(h);
        setClocks(at(350));
        // No row: KIT-1, rejected at 60 s, and the row edited at 200 s are older than the cursor (the read at 300 s).
        expect((await sweep(h)).rowsRead).toBe(0);

        setClocks(at(400));
        await h.deps.smartsheet.createFolder(h.site.productsFolderId, "Kitchen");
        setClocks(at(500));
        const next = await sweep(h);

        expect(next.rowsModifiedSince).toBeUndefined();
        expect(next.queued).toEqual([sheet.jobKeyOf("KIT-1")]);
        expect(h.deps.logs).toContainEqual(expect.stringMatching(/intake sweep of site default \(routine, every row: the product lines or the templates changed/));
        setClocks(at(800));
        expect((await sweep(h)).rowsModifiedSince).toBeDefined();
    });

    it("regression #18.9 cursor from a clock ahead: a row changed after the sweep of an instance 10 minutes ahead is read by the next routine sweep of an instance on time", async () => {
        const h = harness.current;
        const sheet = intakeSheet(h);
        setClocks(at(60));
        const tenMinutesAhead = { ...depsOf(h), now: () => new Date(clocks.app + 600_000) };
        await sweepSite(tenMinutesAhead, h.site);
        await running(h, h.deps.enqueued);

        setClocks(at(120));
        await sheet.edit("CON-2202", { Approved: true });
        setClocks(at(180));
        const next = await sweep(h);

        expect(next.queued).toEqual([sheet.jobKeyOf("CON-2202")]);
        expect(sheet.status("CON-2202")).toBe("Queued");
        // Stamped by Smartsheet's clock when it answered the read: no instance's clock is in it.
        expect(await cursorOf(h)).toMatchObject({ sweptAt: new Date(at(180)).toISOString() });
        expect(h.deps.logs.filter((line) => line.startsWith("warn "))).toEqual([]);
    });

    it("regression #18.9 cursor from a clock ahead, as earlier versions stored it: not trusted; the sweep reads every row, warns once with the figure, and stamps a new one by Smartsheet's clock", async () => {
        const h = harness.current;
        const sheet = intakeSheet(h);
        // The storage service stamps what it stores by its own clock, the real one: Smartsheet's and ours run a little behind it here.
        const base = Math.floor(Date.now() / 1000) * 1000 - 120_000;
        setClocks(base);
        await sweep(h);
        await running(h, h.deps.enqueued);
        const onTime = (await cursorOf(h))!;
        // What an instance 10 minutes ahead stored before #18.9: its own clock at its sweep's start.
        const cursorKey = { partitionKey: "intake-cursor", rowKey: String(h.site.intakeSheetId) };
        await h.table.upsertEntity({ ...cursorKey, kind: "intakeCursor", sweptAt: new Date(base + 600_000).toISOString(), verdictInputs: onTime.verdictInputs }, "Replace");
        const stored = await h.table.getEntity<{ sweptAt: string }>(cursorKey.partitionKey, cursorKey.rowKey);
        const aheadSeconds = Math.round((Date.parse(stored.sweptAt) - Date.parse(stored.timestamp!)) / 1000);

        clocks.smartsheet = base + 30_000;
        await sheet.edit("CON-2202", { Approved: true });
        setClocks(base + 60_000);
        const next = await sweep(h);

        expect(next.rowsModifiedSince).toBeUndefined();
        expect(next.queued).toEqual([sheet.jobKeyOf("CON-2202")]);
        const warnings = () => h.deps.logs.filter((line) => line.startsWith("warn "));
        expect(warnings()).toEqual([expect.stringContaining(`intake sweep of site default: the cursor of intake sheet ${h.site.intakeSheetId} is ${aheadSeconds} s ahead`)]);
        expect(h.deps.logs).toContainEqual(expect.stringMatching(/^info intake sweep of site default \(routine, every row: the cursor is ahead/));
        expect(await cursorOf(h)).toMatchObject({ sweptAt: new Date(base + 60_000).toISOString() });

        setClocks(base + 90_000);
        expect((await sweep(h)).rowsModifiedSince).toBe(new Date(base + 58_000).toISOString());
        expect(warnings()).toHaveLength(1);
    });

    it("writes a Done its job could not write, though the row is older than the cursor; a deleted row is noted once and costs nothing after", async () => {
        const h = harness.current;
        const sheet = intakeSheet(h);
        setClocks(at(60));
        await sweep(h);
        await running(h, h.deps.enqueued);
        setClocks(at(300));
        await sweep(h);
        const [locked, deleted] = [sheet.keyOf("IND-1042"), sheet.keyOf("CON-2201")];
        for (const key of [locked, deleted]) {
            await h.jobs.update(key, (row) => ({ ...row, state: "done", stage: "register", intakeStatus: "In progress — rename", intakeStatusError: "the row is locked" }), { from: ["queued"] });
        }
        await sheet.remove("CON-2201");

        setClocks(at(600));
        await sweep(h);
        expect(sheet.status("IND-1042")).toBe("Done");
        const repaired = (await h.jobs.require(locked)).row;
        expect(repaired.intakeStatus).toBe(IntakeStatus.done);
        expect(repaired.intakeStatusError).toBeUndefined();
        expect((await h.jobs.require(deleted)).row.intakeRowGoneAt).toBe(new Date(at(600)).toISOString());
        expect(h.deps.logs).toContainEqual(`info job ${formatJobKey(deleted)} is done, but its intake row ${deleted.rk} is gone: no Done left to write`);

        setClocks(at(900));
        h.sim.core.resetCalls();
        const quiet = await sweep(h);
        expect(quiet.statusesWritten).toBe(0);
        expect(h.sim.core.calls().byOperation).toEqual({ getFolderChildren: 2, getSheet: 1 });
    });
});
