import type { JobKey } from "../../src/shared/jobs/JobRow";
import type { StepOutcome } from "../../src/shared/provisioning/contracts";
import { copyTemplateSheet, ensureProductFolder, verifyCopies } from "../../src/shared/provisioning/copyStage";
import { beginAttempt, completeJob, enterStage, parkJob } from "../../src/shared/provisioning/lifecycle";
import type { ProvisioningDeps } from "../../src/shared/provisioning/ProvisioningDeps";
import { auditProduct } from "../../src/shared/provisioning/finalAudit";
import { registerDocumentRegister } from "../../src/shared/provisioning/registerStage";
import { remapReferences, stampSummary } from "../../src/shared/provisioning/renameStage";

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
    await run(() => enterStage(deps, { ...step, stage: "rename" }));
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
