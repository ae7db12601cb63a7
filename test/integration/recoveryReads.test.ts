import { describe, expect, it } from "vitest";
import { sweepSite } from "../../src/shared/intake/intakeSweep";
import type { StepOutcome } from "../../src/shared/provisioning/contracts";
import { copyTemplateSheet, ensureProductFolder } from "../../src/shared/provisioning/copyStage";
import { beginAttempt } from "../../src/shared/provisioning/lifecycle";
import type { ProvisioningDeps } from "../../src/shared/provisioning/ProvisioningDeps";
import { SharedListings } from "../../src/shared/provisioning/SharedListings";
import { inspectProduct, intakeRow } from "../helpers/inspectProduct";
import { intakeSheet } from "../helpers/intakeSheet";
import { useProvisioningHarness } from "../helpers/provisioningHarness";
import { runStepsReplaying } from "../helpers/runSteps";
import { diesAfterCall } from "../helpers/dyingHost";

type Call = { op: string; method: string; status: number | null };
const isRead = (entry: Call) => entry.method === "GET";
const isWrite = (entry: Call) => !isRead(entry);

/** The target (#9): a recovered product reads at most this many times more than an uninterrupted one. */
const MOST_EXTRA_READS = 3;

/**
 * A host killed the moment Smartsheet has answered the k-th call of a product — read or write, for
 * every k the uninterrupted product makes — then the product finished as Durable Functions would
 * finish it: the steps that ended are not run again, the one that was cut off is delivered again
 * (the copies side by side), in a fresh process. What the recovery costs is counted from the
 * simulator's call log, as the bench counts it (`recoveryExtraReads`, `recoveryExtraWrites`).
 */
describe("recovery reads little", () => {
    const harness = useProvisioningHarness({ settings: { SMARTSHEET_REQUESTS_PER_MINUTE: "10000" } });

    it(
        "a host killed after each Smartsheet call of a product in turn: the recovered product reads at most 3 times more than an uninterrupted one and sends exactly its writes",
        { timeout: 240_000 },
        async () => {
            const { deps, sim } = harness.current;
            // The dead host's copies all go out before the first is answered, as the fan-out sends them on a quiet machine: on a
            // loaded one the seven claims were taken further apart than a poll, the host died with some claimed but never sent,
            // and each of those needed a listing of its own after its claim ran out (4 extra reads at k = 3, twice in a day).
            // Claims still live when the re-run starts (it waits them out, as after a real restart), polled at a fifth of their
            // life as in production (1 s of 5.5 s in the bench): the copies' claims run out at different moments.
            const timing: ProvisioningDeps["timing"] = { ...deps.timing, claimTtlMs: 600, claimPollMs: 120, lateWriteHorizonMs: 700 };
            const freshProcess = (): ProvisioningDeps => ({ ...deps, timing, listings: new SharedListings(() => Date.now()) });
            sim.core.configure({ rateLimit: { requests: 100_000, windowMs: 60_000 } });
            const intake = intakeSheet(harness.current);
            const codes = Array.from({ length: 30 }, (_, index) => `READ-${index + 1}`);
            await intake.add(codes.map((code) => ({ "Product Code": code, "Product Name": `Recovered Pump ${code}`, "Product Line": "Industrial", Approved: true })));
            await sweepSite(deps, harness.current.site);

            sim.core.resetCalls();
            await runStepsReplaying(freshProcess(), intake.keyOf(codes[0]!), new Map());
            const uninterrupted = sim.core.calls().log;
            const happyPath = uninterrupted.length;
            expect(happyPath).toBeLessThanOrEqual(23);
            expect(happyPath).toBeLessThan(codes.length);
            const copiesPerProduct = uninterrupted.filter((entry) => entry.op === "copySheet").length;
            expect(copiesPerProduct).toBe(7);

            const extraReads: string[] = [];
            for (let k = 1; k <= happyPath; k++) {
                const code = codes[k]!;
                const key = intake.keyOf(code);
                sim.core.resetCalls();
                const history = new Map<string, StepOutcome>();
                const dying = diesAfterCall(freshProcess(), k, () => sim.core.calls().log.length, { copiesSentTogether: copiesPerProduct });
                await expect(runStepsReplaying(dying, key, history), `killed after call ${k}`).rejects.toThrow(/the host died after call/);
                // The host starts again at once: the dead run's claims are still live, and the re-run waits them out.
                const again = freshProcess();
                for (let delivery = 1; ; delivery++) {
                    try {
                        await runStepsReplaying(again, key, history);
                        break;
                    } catch (error) {
                        if (delivery >= 3) throw error;
                    }
                }

                const log = sim.core.calls().log;
                const row = (await deps.jobs.require(key)).row;
                expect(row.state, `killed after call ${k}`).toBe("done");
                expect(countByOperation(log.filter(isWrite)), `killed after call ${k} (${uninterrupted[k - 1]!.op})`).toEqual(
                    countByOperation(uninterrupted.filter(isWrite)),
                );
                const product = inspectProduct(sim.core.state(), row.productCode);
                expect(product.sheets, `killed after call ${k}`).toHaveLength(7);
                expect(product.foreignFormulas, `killed after call ${k}`).toEqual([]);
                expect(product.brokenFormulas, `killed after call ${k}`).toEqual([]);
                expect(product.productCodeValues).toEqual([row.productCode]);
                expect(intakeRow(sim.core.state(), code)).toMatchObject({ Status: "Done", Folder: row.folderLink });
                extraReads.push(`${k}:${log.filter(isRead).length - uninterrupted.filter(isRead).length}`);
            }
            // Every point at once, so a failure shows the whole line (as the bench prints it).
            const worst = Math.max(...extraReads.map((point) => Number(point.split(":")[1])));
            expect(worst, `extra reads by k: ${extraReads.join(" ")}`).toBeLessThanOrEqual(MOST_EXTRA_READS);
        },
    );

    it(
        "copies whose host died with all seven landed, claimed moments apart, re-run as each claim runs out: one listing of the product folder settles them all",
        { timeout: 60_000 },
        async () => {
            const { deps, sim } = harness.current;
            const timing: ProvisioningDeps["timing"] = { ...deps.timing, claimTtlMs: 3_000, claimPollMs: 20, lateWriteHorizonMs: 3_200 };
            const freshProcess = (): ProvisioningDeps => ({ ...deps, timing, listings: new SharedListings(() => Date.now()) });
            await sweepSite(deps, harness.current.site);
            const key = deps.enqueued[0]!;
            const step = { jobKey: key, instanceId: (await deps.jobs.require(key)).row.instanceId! };
            const begun = await beginAttempt(freshProcess(), { ...step, attempt: 1 });
            await ensureProductFolder(freshProcess(), step);
            const templates = begun.outcome === "done" ? begun.job.templates : [];
            expect(templates).toHaveLength(7);

            // The copies start 50 ms apart (more than a poll), and all are sent before the first is answered; then the host dies.
            // (Slow enough that a loaded machine's claims, contended on one row, all go out before the first answer.)
            sim.core.configure({ latencyMs: { copySheet: 1_200 } });
            sim.core.resetCalls();
            const dying = diesAfterCall(freshProcess(), 1, () => sim.core.calls().log.length);
            const died = await Promise.allSettled(
                templates.map(async (template, index) => {
                    await new Promise((resolve) => setTimeout(resolve, index * 50));
                    return copyTemplateSheet(dying, { ...step, template });
                }),
            );
            expect(died.every((run) => run.status === "rejected")).toBe(true);
            expect(sim.core.calls().byOperation).toEqual({ copySheet: 7 });
            const claimedAt = Object.values((await deps.jobs.require(key)).row.claims).map((claim) => Date.parse(claim.claimedAt));
            expect(claimedAt).toHaveLength(7);
            expect(Math.max(...claimedAt) - Math.min(...claimedAt)).toBeGreaterThan(timing.claimPollMs);

            // Delivered again at once, every claim still live: each re-run waits for its own to run out, so they look one after another.
            expect(Date.now()).toBeLessThan(Math.min(...claimedAt) + timing.claimTtlMs);
            sim.core.resetCalls();
            const again = freshProcess();
            const outcomes = await Promise.all(templates.map((template) => copyTemplateSheet(again, { ...step, template })));
            expect(outcomes.map((outcome) => outcome.outcome)).toEqual(templates.map(() => "done"));
            expect(sim.core.calls().byOperation).toEqual({ getFolderChildren: 1 });
            expect(Object.keys((await deps.jobs.require(key)).row.copies).sort()).toEqual([...templates].sort());
        },
    );
});

function countByOperation(log: readonly Call[]): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const entry of log) counts[entry.op] = (counts[entry.op] ?? 0) + 1;
    return counts;
}
