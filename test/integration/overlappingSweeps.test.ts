import type { TableClient } from "@azure/data-tables";
import { describe, expect, it } from "vitest";
import { sweepSite } from "../../src/shared/intake/intakeSweep";
import type { JobRowInput } from "../../src/shared/jobs/JobRow";
import { JobStore, type CodeOptions } from "../../src/shared/jobs/JobStore";
import { approvedRequest, intakeSheet } from "../helpers/intakeSheet";
import { useProvisioningHarness } from "../helpers/provisioningHarness";

/** The Jobs table as an overlapping sweep leaves it: that sweep writes the job of `rowId` first, just before this one does. */
class JobStoreRacedOnRow extends JobStore {
    constructor(
        table: TableClient,
        private readonly rowId: string,
    ) {
        super(table);
    }

    override async create(input: JobRowInput, options?: CodeOptions) {
        if (input.intakeRowId === this.rowId) await super.create(input, options);
        return super.create(input, options);
    }
}

/** An overlapping sweep, which read the sheet when only `otherRowId` was approved, queues it with the same code just before this sweep's write. */
class JobStoreRacedOnCode extends JobStore {
    constructor(
        table: TableClient,
        private readonly otherRowId: string,
        private readonly productCode: string,
    ) {
        super(table);
    }

    override async create(input: JobRowInput, options?: CodeOptions) {
        if (input.intakeRowId !== this.otherRowId && input.productCode === this.productCode && input.state === "queued") {
            await super.create({ ...input, intakeRowId: this.otherRowId, instanceId: `provision-${input.intakeSheetId}-${this.otherRowId}-a1` }, options).catch(() => undefined);
        }
        return super.create(input, options);
    }
}

/** An overlapping sweep sends the new job's message (it found it queued with no orchestration) and the job runs to done, all before this sweep writes Queued. */
class JobStoreFinishedBeforeQueued extends JobStore {
    constructor(
        table: TableClient,
        private readonly finish: (created: Awaited<ReturnType<JobStore["create"]>>) => Promise<void>,
    ) {
        super(table);
    }

    override async create(input: JobRowInput, options?: CodeOptions) {
        const created = await super.create(input, options);
        if (input.state === "queued") await this.finish(created);
        return created;
    }
}

describe("overlapping sweeps", () => {
    const harness = useProvisioningHarness();

    it("a sweep that loses a new job's write to an overlapping sweep still counts that row's product code as taken: a later row with the code is rejected, not queued", async () => {
        const h = harness.current;
        const sheet = intakeSheet(h);
        await sheet.add([approvedRequest("IND-1042")]);
        const original = String(sheet.rowIdOf("IND-1042"));
        const duplicate = String(h.sim.core.state().sheets.find((s) => s.id === sheet.sheetId())!.rows.at(-1)!.id);

        const report = await sweepSite({ ...h.deps, jobs: new JobStoreRacedOnRow(h.table, original) }, h.site);

        expect(report.queued).not.toContain(`${sheet.sheetId()}-${duplicate}`);
        expect(report.rejected).toContain(`${sheet.sheetId()}-${duplicate}`);
        const duplicateJob = await h.jobs.require({ pk: String(sheet.sheetId()), rk: duplicate });
        expect(duplicateJob.row).toMatchObject({ state: "rejected", rejectReason: "Product Code IND-1042 is already provisioned by another intake row" });
        expect(await h.jobs.holderOfCode(String(sheet.sheetId()), "IND-1042")).toBe(original);
    });

    it("regression #18.12 two rows with one code queued by overlapping sweeps: the code is reserved atomically, so the later write is rejected with the reason and sends no message", async () => {
        const h = harness.current;
        const sheet = intakeSheet(h);
        await sheet.add([approvedRequest("DUP-7", { "Product Name": "First" })]);
        const mine = String(sheet.rowIdOf("DUP-7"));
        await sheet.add([{ "Product Code": "OTHER", "Product Name": "Second", "Product Line": "Industrial", Approved: false }]);
        const other = String(sheet.rowIdOf("OTHER"));
        const pk = String(sheet.sheetId());

        const report = await sweepSite({ ...h.deps, jobs: new JobStoreRacedOnCode(h.table, other, "DUP-7") }, h.site);

        const holders = [];
        for (const rk of [mine, other]) {
            const job = await h.jobs.get({ pk, rk });
            if (job && job.row.productCode === "DUP-7" && job.row.state !== "rejected") holders.push(rk);
        }
        expect(holders).toEqual([other]);
        expect((await h.jobs.require({ pk, rk: mine })).row).toMatchObject({ state: "rejected", rejectReason: "Product Code DUP-7 is already provisioned by another intake row" });
        expect(report.rejected).toContain(`${pk}-${mine}`);
        expect(report.queued).not.toContain(`${pk}-${mine}`);
        expect(h.deps.enqueued.map((key) => key.rk)).not.toContain(mine);
        expect(sheet.status("DUP-7")).toBe("Rejected — Product Code DUP-7 is already provisioned by another intake row");
        expect(await h.jobs.holderOfCode(pk, "DUP-7")).toBe(other);
    });

    it("regression #18.12 a sweep's Queued landing over a later Done: the status is re-read from the job right before the write, and the row keeps Done", async () => {
        const h = harness.current;
        const sheet = intakeSheet(h);
        await sheet.add([approvedRequest("FAST-1")]);
        const finish = async (created: Awaited<ReturnType<JobStore["create"]>>) => {
            await h.jobs.replace(created, { ...created.row, state: "done", stage: "register", intakeStatus: "Done" }, { from: ["queued"] });
            await sheet.edit("FAST-1", { Status: "Done" });
        };

        const report = await sweepSite({ ...h.deps, jobs: new JobStoreFinishedBeforeQueued(h.table, finish) }, h.site);

        expect(report.queued).toContain(sheet.jobKeyOf("FAST-1"));
        expect((await h.jobs.require(sheet.keyOf("FAST-1"))).row.state).toBe("done");
        expect(sheet.status("FAST-1")).toBe("Done");
    });
});
