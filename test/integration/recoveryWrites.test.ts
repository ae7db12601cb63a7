import { describe, expect, it } from "vitest";
import { sweepSite } from "../../src/shared/intake/intakeSweep";
import { JobStore } from "../../src/shared/jobs/JobStore";
import { ClaimKey } from "../../src/shared/provisioning/claimKeys";
import { copyTemplateSheet, ensureProductFolder } from "../../src/shared/provisioning/copyStage";
import { beginAttempt } from "../../src/shared/provisioning/lifecycle";
import type { ProvisioningDeps } from "../../src/shared/provisioning/ProvisioningDeps";
import { inspectProduct, intakeRow } from "../helpers/inspectProduct";
import { intakeSheet } from "../helpers/intakeSheet";
import { startProvisioningHarness, useProvisioningHarness } from "../helpers/provisioningHarness";
import { runSteps } from "../helpers/runSteps";

/** The process is gone: nothing after this reaches the Jobs table. */
class HostDiedError extends Error {}

type Call = { op: string; method: string; status: number | null };
/** A write Smartsheet carried out, or may have (never answered); a refused one, 429 say, made nothing. */
const isWrite = (entry: Call) => entry.method !== "GET" && (entry.status === null || entry.status < 400);

/**
 * A host killed the moment Smartsheet has answered a write, before the job row records it: the
 * claim is still on the row, the result is not. Whatever runs the job next (Durable Functions
 * delivering the step again) finds out what landed and sends no write a second time.
 */
describe("recovery sends no write twice", () => {
    // Two dozen products in a minute are more calls than a token's 300: the limit is not what this is about.
    const harness = useProvisioningHarness({ settings: { SMARTSHEET_REQUESTS_PER_MINUTE: "10000" } });

    it("a host killed after each write of a product in turn: every product is complete and sent exactly the writes of an uninterrupted one", { timeout: 180_000 }, async () => {
        // The kill points wait out claims more than they compute: three lanes, each with its own simulator and Jobs table, take every third k.
        const killed = (await Promise.all(Array.from({ length: LANES }, (_, lane) => killEveryWriteOfALane(lane)))).flat();
        expect(killed.sort((a, b) => a - b)).toEqual(killed.map((_, index) => index + 1));
        expect(killed.length).toBeGreaterThan(5);
    });

    it("copies re-run together after their host died with all seven landed: one listing of the product folder adopts them all, and none is copied again", { timeout: 60_000 }, async () => {
        const { deps, sim } = harness.current;
        const quick: ProvisioningDeps = { ...deps, timing: { ...deps.timing, claimTtlMs: 200, claimPollMs: 20, lateWriteHorizonMs: 300 } };
        await sweepSite(deps, harness.current.site);
        const key = deps.enqueued[0]!;
        const step = { jobKey: key, instanceId: (await deps.jobs.require(key)).row.instanceId! };
        const begun = await beginAttempt(quick, { ...step, attempt: 1 });
        await ensureProductFolder(quick, step);
        const templates = begun.outcome === "done" ? begun.job.templates : [];
        expect(templates).toHaveLength(7);

        // Every copy is claimed before the first is answered (seven claims contend for one row: slow copies leave them time); then the host dies.
        sim.core.configure({ latencyMs: { copySheet: 1_500 } });
        sim.core.resetCalls();
        const dying = diesAfterWrite(quick, 1, () => sim.core.calls().log.filter(isWrite).length);
        const died = await Promise.allSettled(templates.map((template) => copyTemplateSheet(dying, { ...step, template })));
        expect(died.every((run) => run.status === "rejected")).toBe(true);
        const afterDeath = (await deps.jobs.require(key)).row;
        expect(templates.filter((template) => afterDeath.claims[ClaimKey.copy(template)])).toHaveLength(7);
        expect(afterDeath.copies).toEqual({});
        expect(sim.core.calls().byOperation.copySheet).toBe(7);

        // Durable Functions delivers the seven again, at once.
        await new Promise((resolve) => setTimeout(resolve, 250));
        sim.core.resetCalls();
        const again = await Promise.all(templates.map((template) => copyTemplateSheet(quick, { ...step, template })));
        expect(again.map((run) => run.outcome)).toEqual(templates.map(() => "done"));
        expect(sim.core.calls().byOperation).toEqual({ getFolderChildren: 1 });
        const row = (await deps.jobs.require(key)).row;
        expect(Object.keys(row.copies).sort()).toEqual([...templates].sort());
        expect(row.claims).toEqual({});
        // The dead run's writes were never answered to it: the final audit still looks for late ones, in the product folder only.
        expect(row.lateWriteKinds).toEqual(["sheet"]);
    });
});

const LANES = 3;

/** Kills one product after its k-th write for every k of this lane (k ≡ lane + 1 modulo LANES), on a harness of the lane's own; the k it killed at. */
async function killEveryWriteOfALane(lane: number): Promise<number[]> {
    // Two dozen products in a minute are more calls than a token's 300: the limit is not what this is about.
    const harness = await startProvisioningHarness({ settings: { SMARTSHEET_REQUESTS_PER_MINUTE: "10000" } });
    try {
        const { deps, sim } = harness;
        // Short claims and horizon, so a dead run's claim is over by the time its step runs again.
        const quick: ProvisioningDeps = { ...deps, timing: { ...deps.timing, claimTtlMs: 200, claimPollMs: 20, lateWriteHorizonMs: 300 } };
        sim.core.configure({ rateLimit: { requests: 100_000, windowMs: 60_000 } });
        const intake = intakeSheet(harness);
        const codes = Array.from({ length: 24 }, (_, index) => `KILL-${index + 1}`);
        await intake.add(codes.map((code) => ({ "Product Code": code, "Product Name": `Killed Pump ${code}`, "Product Line": "Industrial", Approved: true })));
        await sweepSite(deps, harness.site);
        const keyOf = (code: string) => intake.keyOf(code);

        sim.core.resetCalls();
        await runSteps(quick, keyOf(codes[0]!));
        const uninterrupted = writesByOperation(sim.core.calls().log);
        const writeCount = Object.values(uninterrupted).reduce((sum, count) => sum + count, 0);
        expect(writeCount).toBeLessThan(codes.length);

        const killedAt: number[] = [];
        for (let k = lane + 1; k <= writeCount; k += LANES) {
            const code = codes[k]!;
            sim.core.resetCalls();
            const dying = diesAfterWrite(quick, k, () => sim.core.calls().log.filter(isWrite).length);
            await expect(runSteps(dying, keyOf(code)), `killed after write ${k}`).rejects.toThrow();
            await new Promise((resolve) => setTimeout(resolve, 250));
            await runSteps(quick, keyOf(code), { retries: 3 });

            const row = (await deps.jobs.require(keyOf(code))).row;
            expect(row.state, `killed after write ${k}`).toBe("done");
            expect(writesByOperation(sim.core.calls().log), `killed after write ${k}`).toEqual(uninterrupted);
            const product = inspectProduct(sim.core.state(), row.productCode);
            expect(product.sheets, `killed after write ${k}`).toHaveLength(7);
            expect(product.filingRows).toHaveLength(1);
            expect(product.productCodeValues).toEqual([row.productCode]);
            expect(intakeRow(sim.core.state(), code)).toMatchObject({ Status: "Done", Folder: row.folderLink });
            killedAt.push(k);
        }
        return killedAt;
    } finally {
        await harness.close();
    }
}

function writesByOperation(log: readonly Call[]): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const entry of log.filter(isWrite)) counts[entry.op] = (counts[entry.op] ?? 0) + 1;
    return counts;
}

/** The steps' deps, except that once Smartsheet has answered `k` writes no job-row write gets through. */
function diesAfterWrite(deps: ProvisioningDeps, k: number, writesAnswered: () => number): ProvisioningDeps {
    const jobs: JobStore = Object.assign(Object.create(JobStore.prototype) as JobStore, deps.jobs, {
        update: (...args: Parameters<JobStore["update"]>) => {
            if (writesAnswered() >= k) return Promise.reject(new HostDiedError(`the host died after write ${k}`));
            return deps.jobs.update(...args);
        },
    });
    return { ...deps, jobs };
}
