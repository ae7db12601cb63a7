import type { TableClient } from "@azure/data-tables";
import { describe, expect, it } from "vitest";
import { sweepSite } from "../../src/shared/intake/intakeSweep";
import type { JobRowInput } from "../../src/shared/jobs/JobRow";
import { JobStore } from "../../src/shared/jobs/JobStore";
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

    override async create(input: JobRowInput) {
        if (input.intakeRowId === this.rowId) await super.create(input);
        return super.create(input);
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
});
