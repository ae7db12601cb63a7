import type { JobKey } from "../../src/shared/jobs/JobRow";
import type { StepOutcome } from "../../src/shared/provisioning/contracts";
import { copyTemplateSheet, ensureProductFolder, verifyCopies } from "../../src/shared/provisioning/copyStage";
import { beginAttempt, completeJob, enterStage, parkJob } from "../../src/shared/provisioning/lifecycle";
import type { ProvisioningDeps } from "../../src/shared/provisioning/ProvisioningDeps";
import { auditProduct } from "../../src/shared/provisioning/finalAudit";
import { registerDocumentRegister } from "../../src/shared/provisioning/registerStage";
import { remapReferences } from "../../src/shared/provisioning/remap/remapReferences";
import { stampSummary } from "../../src/shared/provisioning/remap/stampSummary";

/** A step ended other than done: the outcome says how. */
export class StepStoppedError extends Error {
    constructor(readonly outcome: StepOutcome) {
        super(`step stopped: ${JSON.stringify(outcome)}`);
        this.name = "StepStoppedError";
    }
}

/**
 * The steps as the orchestration runs them up to a permanent failure, which parks the job as the
 * orchestration would (`parkJob` with the reason, at the job's stage). Answers how the job ended.
 */
export async function runStepsOrPark(deps: ProvisioningDeps, key: JobKey): Promise<"done" | "parked"> {
    try {
        await runSteps(deps, key);
        return "done";
    } catch (error) {
        if (!(error instanceof StepStoppedError) || error.outcome.outcome !== "permanent") throw error;
        const row = (await deps.jobs.require(key)).row;
        const parked = await parkJob(deps, { jobKey: key, instanceId: row.instanceId!, reason: error.outcome.reason, stage: row.stage ?? "copy" });
        if (parked.outcome !== "done") throw new StepStoppedError(parked);
        return "parked";
    }
}

/**
 * The orchestration's happy path as plain calls, for testing the steps without Durable
 * Functions. `times` runs every step that many times in a row (at-least-once delivery);
 * `retries` runs a step that threw (a transient failure) again, as the retry policy does.
 */
export async function runSteps(deps: ProvisioningDeps, key: JobKey, options: { times?: number; retries?: number } = {}): Promise<StepOutcome[]> {
    const stored = await deps.jobs.require(key);
    const step = { jobKey: key, instanceId: stored.row.instanceId! };
    const outcomes: StepOutcome[] = [];
    const retried = async (once: () => Promise<StepOutcome>): Promise<StepOutcome> => {
        for (let attempt = 0; ; attempt++) {
            try {
                return await once();
            } catch (error) {
                if (attempt >= (options.retries ?? 0)) throw error;
            }
        }
    };
    const run = async (once: () => Promise<StepOutcome>) => {
        let last: StepOutcome | undefined;
        for (let i = 0; i < (options.times ?? 1); i++) last = await retried(once);
        outcomes.push(last!);
        if (last!.outcome !== "done") throw new StepStoppedError(last!);
        return last!;
    };
    const begun = await run(() => beginAttempt(deps, { ...step, attempt: stored.row.attempt }));
    if (begun.outcome !== "done") return outcomes;
    await run(() => enterStage(deps, { ...step, stage: "copy" }));
    await run(() => ensureProductFolder(deps, step));
    for (const template of begun.job.templates) await run(() => copyTemplateSheet(deps, { ...step, template }));
    await run(() => verifyCopies(deps, step));
    await run(() => enterStage(deps, { ...step, stage: "remap" }));
    await run(() => remapReferences(deps, step));
    await run(() => stampSummary(deps, step));
    await run(() => enterStage(deps, { ...step, stage: "register" }));
    await run(() => registerDocumentRegister(deps, step));
    for (;;) {
        const audited = await run(() => auditProduct(deps, step));
        if (audited.outcome !== "done" || !audited.waitUntil) break;
        await deps.sleep(Math.max(0, Date.parse(audited.waitUntil) - deps.now().getTime()));
    }
    await run(() => completeJob(deps, step));
    return outcomes;
}

/**
 * The orchestration's happy path as Durable Functions runs it across a host's death: a step whose
 * outcome `history` holds ran to its end before, and is replayed instead of run again; the copies
 * run side by side; every step that ends is added to `history`. A step that throws (the host died,
 * or a transient failure) ends the run after the copies beside it have settled; calling this again
 * with the same history is the next delivery of the step that threw.
 */
export async function runStepsReplaying(deps: ProvisioningDeps, key: JobKey, history: Map<string, StepOutcome>): Promise<void> {
    const stored = await deps.jobs.require(key);
    const step = { jobKey: key, instanceId: stored.row.instanceId! };
    const run = async (name: string, once: () => Promise<StepOutcome>): Promise<StepOutcome & { outcome: "done" }> => {
        const outcome = history.get(name) ?? (await once());
        history.set(name, outcome);
        if (outcome.outcome !== "done") throw new StepStoppedError(outcome);
        return outcome;
    };
    const begun = await run("beginAttempt", () => beginAttempt(deps, { ...step, attempt: stored.row.attempt }));
    await run("enterStage:copy", () => enterStage(deps, { ...step, stage: "copy" }));
    await run("ensureProductFolder", () => ensureProductFolder(deps, step));
    const copies = await Promise.allSettled(begun.job.templates.map((template) => run(`copyTemplateSheet:${template}`, () => copyTemplateSheet(deps, { ...step, template }))));
    const failed = copies.find((copy): copy is PromiseRejectedResult => copy.status === "rejected");
    if (failed) throw failed.reason;
    const verified = await run("verifyCopies", () => verifyCopies(deps, step));
    if (verified.missing?.length) throw new Error(`copies missing after verification: ${verified.missing.join(", ")}`);
    await run("enterStage:remap", () => enterStage(deps, { ...step, stage: "remap" }));
    await run("remapReferences", () => remapReferences(deps, step));
    await run("stampSummary", () => stampSummary(deps, step));
    await run("enterStage:register", () => enterStage(deps, { ...step, stage: "register" }));
    await run("registerDocumentRegister", () => registerDocumentRegister(deps, step));
    for (let round = 1; ; round++) {
        const audited = await run(`auditProduct:${round}`, () => auditProduct(deps, step));
        if (!audited.waitUntil) break;
        await deps.sleep(Math.max(0, Date.parse(audited.waitUntil) - deps.now().getTime()));
    }
    await run("completeJob", () => completeJob(deps, step));
}
