import * as df from "durable-functions";
import type { OrchestrationContext, OrchestrationHandler, Task } from "durable-functions";
import { formatJobKey, type Stage } from "../shared/jobs/JobRow";
import { logLine } from "../shared/text/logText";
import type { StepInput } from "../shared/provisioning/contracts";
import type { StepInputOf, StepName } from "../shared/provisioning/steps";
import {
    failureOfStep,
    ProvisionInput,
    StepOutcome,
    UNPARK_EVENT,
    UnparkEvent,
    type JobView,
    type ProvisionStatus,
} from "../shared/provisioning/contracts";

/**
 * Template sheets copied once a round's copies answered: each copy's answer carries the job row
 * as that copy left it, so a round stopped by one refused copy still counts the others.
 */
function copiedSoFar(before: JobView, outcomes: readonly StepOutcome[]): number {
    const copied = new Set(before.copied);
    for (const outcome of outcomes) {
        if (outcome.outcome !== "superseded") for (const template of outcome.job?.copied ?? []) copied.add(template);
    }
    return before.templates.filter((template) => copied.has(template)).length;
}

/**
 * How failed steps are retried (transient ones, and bugs: they may be glitches); capped well
 * below the reaper's window.
 */
interface RetryPolicy {
    firstRetryMs: number;
    maxAttempts: number;
    maxRetryMs: number;
}

type StageResult = StepOutcome;

/** What a step needs beyond the job's key and this instance's id, which every call carries. */
type ExtraInput<N extends StepName> = Omit<StepInputOf<N>, keyof StepInput>;
type ExtraArgs<N extends StepName> = keyof ExtraInput<N> extends never ? [] : [ExtraInput<N>];

const NEXT_STAGE: Record<Stage, Stage | undefined> = { copy: "remap", remap: "register", register: undefined };

/**
 * One product, from the job row to done: copy the template sheets into the product folder,
 * point their references at each other and stamp the code, register the Document Register.
 * A permanent problem parks the job until a person raises `unpark`; then the same stage runs
 * again, adopting what exists. So does a bug once the step's retries are spent; a transient
 * failure that outlasts them fails the orchestration, and the reaper takes the job over. Every
 * step reads and writes the job row, so a recovery instance started from the row continues where
 * this one stopped.
 */
export function provisionProduct(policy: RetryPolicy): OrchestrationHandler {
    return function* (context: OrchestrationContext): Generator<Task, unknown, unknown> {
        const input = ProvisionInput.parse(context.df.getInput());
        const jobKey = formatJobKey(input.jobKey);
        const step = { jobKey: input.jobKey, instanceId: context.df.instanceId };
        const retry = new df.RetryOptions(policy.firstRetryMs, policy.maxAttempts);
        retry.backoffCoefficient = 2;
        retry.maxRetryIntervalInMilliseconds = policy.maxRetryMs;

        const status: ProvisionStatus = { state: "running", stage: "copy", sheetsDone: 0, sheetsTotal: 0, attempt: input.attempt, recoveries: 0, jobKey };
        const show = (patch: Partial<ProvisionStatus>) => {
            Object.assign(status, patch);
            context.df.setCustomStatus({ ...status });
        };
        const log = (message: string) => {
            if (!context.df.isReplaying) context.log(logLine(`job ${jobKey}: ${message}`));
        };
        const schedule = <N extends StepName>(name: N, ...[extra]: ExtraArgs<N>): Task =>
            context.df.callActivityWithRetry(name, retry, { ...step, ...extra });
        /** A step of the job's lifecycle (begin, resume, park): a failure outlasting its retries fails the orchestration. */
        function* call<N extends StepName>(name: N, ...extra: ExtraArgs<N>): Generator<Task, StepOutcome, unknown> {
            return StepOutcome.parse(yield schedule(name, ...extra));
        }
        /**
         * A step of a stage, or steps at once: a bug still failing when the retries are spent
         * answers `permanent` with its message (the job parks); any other failure is thrown on.
         */
        function* answer(task: Task): Generator<Task, unknown, unknown> {
            try {
                return yield task;
            } catch (error) {
                const failure = failureOfStep(error);
                if (failure.kind !== "bug") throw error;
                log(`${failure.step} failed unexpectedly after its retries; parking: ${failure.message}`);
                return { outcome: "permanent", reason: `Unexpected error in ${failure.step} (a bug; its retries are spent): ${failure.message}` };
            }
        }
        /** A step of a stage: its outcome, or `permanent` for a bug that outlasted its retries. */
        function* stepOf<N extends StepName>(name: N, ...extra: ExtraArgs<N>): Generator<Task, StepOutcome, unknown> {
            return StepOutcome.parse(yield* answer(schedule(name, ...extra)));
        }

        let job: JobView;

        function* copyStage(): Generator<Task, StageResult, unknown> {
            let outcome = yield* stepOf("enterStage", { stage: "copy" });
            if (outcome.outcome !== "done") return outcome;
            outcome = yield* stepOf("ensureProductFolder");
            if (outcome.outcome !== "done") return outcome;
            job = outcome.job;
            show({ sheetsDone: job.copied.length, sheetsTotal: job.templates.length });

            for (let round = 1; round <= 3; round++) {
                // Copy what is missing, all at once. (Never re-yield Task.any over tasks already
                // scheduled: the SDK schedules them again, durable-js #574.)
                const copies = job.templates
                    .filter((template) => !job.copied.includes(template))
                    .map((template) => schedule("copyTemplateSheet", { template }));
                if (copies.length > 0) {
                    const answered = yield* answer(context.df.Task.all(copies));
                    // One bug among the copies answers for them all.
                    if (!Array.isArray(answered)) return StepOutcome.parse(answered);
                    const outcomes = answered.map((outcome) => StepOutcome.parse(outcome));
                    show({ sheetsDone: copiedSoFar(job, outcomes) });
                    const stopped = outcomes.find((outcome) => outcome.outcome !== "done");
                    if (stopped) return stopped;
                }
                // The folder must hold exactly the expected names: duplicates go, gaps come back.
                const verified = yield* stepOf("verifyCopies");
                if (verified.outcome !== "done") return verified;
                job = verified.job;
                show({ sheetsDone: job.copied.length });
                if (!verified.missing?.length) return verified;
                log(`copies missing after round ${round}: ${verified.missing.join(", ")}`);
            }
            return { outcome: "permanent", reason: "Copies keep disappearing from the product folder; check who deletes them." };
        }

        function* remapStage(): Generator<Task, StageResult, unknown> {
            // Histories recorded before #20 say `rename` here: a replay compares the activity's name, not its input.
            let outcome = yield* stepOf("enterStage", { stage: "remap" });
            if (outcome.outcome !== "done") return outcome;
            // Point the copies' cross-sheet references at each other instead of at the template.
            outcome = yield* stepOf("remapReferences");
            if (outcome.outcome !== "done") return outcome;
            return yield* stepOf("stampSummary");
        }

        function* registerStage(): Generator<Task, StageResult, unknown> {
            const outcome = yield* stepOf("enterStage", { stage: "register" });
            if (outcome.outcome !== "done") return outcome;
            // Wire the Document Register into the filing index.
            const registered = yield* stepOf("registerDocumentRegister");
            if (registered.outcome !== "done") return registered;
            // A write that went unanswered may still land: audit the product once that can no longer happen.
            for (;;) {
                const audited = yield* stepOf("auditProduct");
                if (audited.outcome !== "done") return audited;
                if (!audited.waitUntil) break;
                log(`waiting until ${audited.waitUntil} for late writes before the final audit`);
                yield context.df.createTimer(new Date(audited.waitUntil));
            }
            // Then tell the customer.
            return yield* stepOf("completeJob");
        }

        const stages: Record<Stage, () => Generator<Task, StageResult, unknown>> = {
            copy: copyStage,
            remap: remapStage,
            register: registerStage,
        };

        // Waits for `unpark` ending this parking; an event left over from an earlier one is dropped.
        function* waitForUnpark(parkedAt: string | undefined): Generator<Task, void, unknown> {
            for (;;) {
                const event = UnparkEvent.parse(yield context.df.waitForExternalEvent(UNPARK_EVENT));
                if (!event.parkedAt || !parkedAt || event.parkedAt === parkedAt) return;
                log(`ignored an unpark event for an earlier parking (${event.parkedAt})`);
            }
        }

        const begun = yield* call("beginAttempt", { attempt: input.attempt });
        if (begun.outcome !== "done") {
            show({ state: "superseded" });
            log(`not started: ${begun.outcome === "superseded" ? begun.reason : "refused"}`);
            return { jobKey, result: "superseded" };
        }
        job = begun.job;
        let stage: Stage | undefined = job.stage;
        // The reaper parks a job that made no progress after too many recoveries, then starts
        // an instance to wait here.
        let parking = job.state === "parked" ? { reason: job.parkReason ?? "parked", parkedAt: job.parkedAt } : undefined;
        show({ stage, sheetsTotal: job.templates.length, sheetsDone: job.copied.length, recoveries: job.recoveries });

        while (stage) {
            if (parking) {
                show({ state: "parked", parkReason: parking.reason });
                yield* waitForUnpark(parking.parkedAt);
                const resumed = yield* call("resumeJob");
                if (resumed.outcome === "superseded") return { jobKey, result: "superseded" };
                log(`unparked; running the ${stage} stage again`);
                parking = undefined;
            }
            show({ state: "running", stage, parkReason: undefined });
            const result: StageResult = yield* stages[stage]();
            if (result.outcome === "superseded") {
                show({ state: "superseded" });
                log(`stopped: ${result.reason}`);
                return { jobKey, result: "superseded" };
            }
            if (result.outcome === "permanent") {
                // A person has to act: park, then run the same stage again once unparked.
                const parked = yield* call("parkJob", { reason: result.reason, stage });
                if (parked.outcome === "superseded") return { jobKey, result: "superseded" };
                if (parked.outcome === "done" && parked.waitUntil) {
                    // A status write that went unanswered may land over the Stall: say it again once it cannot.
                    // An unpark raised meanwhile waits for this (Durable keeps external events until asked).
                    log(`waiting until ${parked.waitUntil} to confirm the intake row says Stalled`);
                    yield context.df.createTimer(new Date(parked.waitUntil));
                    const confirmed = yield* call("confirmStalled");
                    if (confirmed.outcome === "superseded") return { jobKey, result: "superseded" };
                }
                if (parked.outcome === "done") show({ sheetsDone: parked.job.copied.length });
                parking = { reason: result.reason, parkedAt: parked.outcome === "done" ? parked.job.parkedAt : undefined };
                continue;
            }
            job = result.job;
            stage = NEXT_STAGE[stage];
        }
        show({ state: "done", stage: "register", sheetsDone: job.copied.length });
        return { jobKey, result: "done" };
    };
}
