import * as df from "durable-functions";
import type { OrchestrationContext, OrchestrationHandler, Task } from "durable-functions";
import { formatJobKey } from "../shared/jobs/JobRow";
import { logLine } from "../shared/text/logText";
import { failureOfStep } from "../shared/provisioning/contracts";
import type { ConvergenceStepName } from "../shared/convergence/convergeSteps";
import {
    ClaimOutcome,
    ConvergeInput,
    ConvergeOutcome,
    ConvergenceNames,
    FleetInput,
    type ClaimedConvergence,
    type ConvergeStatus,
} from "../shared/convergence/contracts";

interface RetryPolicy {
    firstRetryMs: number;
    maxAttempts: number;
    maxRetryMs: number;
}

/** Rounds of a step's retries a transient failure may outlast before the product parks. */
const TRANSIENT_ROUNDS = 8;

function retryOf(policy: RetryPolicy): df.RetryOptions {
    const retry = new df.RetryOptions(policy.firstRetryMs, policy.maxAttempts);
    retry.backoffCoefficient = 2;
    retry.maxRetryIntervalInMilliseconds = policy.maxRetryMs;
    return retry;
}

/**
 * One product brought to a template version: plan (frozen on the row), carry out the changes,
 * park if a conflict waits for a person, audit once no write can still land, then record the
 * version. A parked product's instance ends; unpark with a decision starts the next attempt, which
 * goes on from the row.
 */
export function convergeProduct(policy: RetryPolicy): OrchestrationHandler {
    return function* (context: OrchestrationContext): Generator<Task, unknown, unknown> {
        const input = ConvergeInput.parse(context.df.getInput());
        const jobKey = formatJobKey(input.jobKey);
        const step = { jobKey: input.jobKey, instanceId: context.df.instanceId };
        const retry = retryOf(policy);
        const show = (status: Omit<ConvergeStatus, "jobKey" | "to">) => context.df.setCustomStatus({ jobKey, to: input.to, ...status });
        const log = (message: string) => {
            if (!context.df.isReplaying) context.log(logLine(`job ${jobKey}: ${message}`));
        };
        /**
         * A step's outcome. A bug still failing after its retries parks the product with its
         * message; a transient failure that outlasts them (a rate limit, an outage) is tried again
         * after a pause, round after round (nobody else recovers a convergence), and parks the
         * product only after `TRANSIENT_ROUNDS`.
         */
        function* run(name: ConvergenceStepName, extra: object = {}): Generator<Task, ConvergeOutcome, unknown> {
            for (let round = 1; ; round++) {
                try {
                    return ConvergeOutcome.parse(yield context.df.callActivityWithRetry(name, retry, { ...step, ...extra }));
                } catch (error) {
                    const failure = failureOfStep(error);
                    if (failure.kind === "bug") return { outcome: "permanent", reason: `Unexpected error in ${failure.step} (a bug; its retries are spent): ${failure.message}` };
                    const message = error instanceof Error ? error.message : String(error);
                    if (round >= TRANSIENT_ROUNDS) return { outcome: "permanent", reason: `${name} kept failing through ${round} rounds of retries: ${message}` };
                    const pauseMs = Math.max(policy.maxRetryMs, 1000) * 2 * round;
                    log(`${name} failed after its retries (round ${round} of ${TRANSIENT_ROUNDS}); trying again in ${pauseMs / 1000} s: ${message}`);
                    yield context.df.createTimer(new Date(context.df.currentUtcDateTime.getTime() + pauseMs));
                }
            }
        }
        function* park(reason: string): Generator<Task, unknown, unknown> {
            const parked = yield* run("parkConvergence", { reason });
            if (parked.outcome === "superseded") return { jobKey, result: "superseded" };
            show({ state: "parked", parkReason: reason });
            return { jobKey, result: "parked", reason };
        }

        show({ state: "converging" });
        const begun = yield* run("beginConvergence");
        if (begun.outcome === "superseded") {
            show({ state: "superseded" });
            log(`convergence not started: ${begun.reason}`);
            return { jobKey, result: "superseded" };
        }
        if (begun.outcome === "permanent") return yield* park(begun.reason);
        if (begun.pending > 0) {
            const applied = yield* run("applyConvergence");
            if (applied.outcome === "superseded") return { jobKey, result: "superseded" };
            if (applied.outcome === "permanent") return yield* park(applied.reason);
        }
        if (begun.undecided > 0) {
            return yield* park(`${begun.undecided} conflict${begun.undecided === 1 ? "" : "s"} between the template's change and the product's own edits; see the plan`);
        }
        for (;;) {
            const audited = yield* run("auditConvergence");
            if (audited.outcome === "superseded") return { jobKey, result: "superseded" };
            if (audited.outcome === "permanent") return yield* park(audited.reason);
            if (!audited.waitUntil) break;
            log(`waiting until ${audited.waitUntil} for late writes before the convergence audit`);
            yield context.df.createTimer(new Date(audited.waitUntil));
        }
        const completed = yield* run("completeConvergence");
        if (completed.outcome !== "done") return { jobKey, result: completed.outcome };
        show({ state: "done" });
        return { jobKey, result: "done" };
    };
}

/**
 * A site's products (or one of them) brought to a template version, `concurrency` at a time, so
 * that provisioning's activities never queue behind a convergence of hundreds of products: the
 * products are claimed on their job rows first (a product another run is at, or parked, is left
 * alone), then each runs as a sub-orchestration under its own derived instance id.
 */
export function convergeFleet(policy: RetryPolicy & { concurrency: number }): OrchestrationHandler {
    return function* (context: OrchestrationContext): Generator<Task, unknown, unknown> {
        const input = FleetInput.parse(context.df.getInput());
        const retry = retryOf(policy);
        const claim = ClaimOutcome.parse(yield context.df.callActivityWithRetry("claimConvergences", retry, { ...input, fleetInstanceId: context.df.instanceId }));
        const results: Record<string, string> = {};
        const status = () => context.df.setCustomStatus({ site: input.site, to: input.to, claimed: claim.claimed.length, finished: Object.keys(results).length, leftAlone: claim.leftAlone.length });
        status();
        const queue: ClaimedConvergence[] = [...claim.claimed];
        while (queue.length > 0) {
            const wave = queue.splice(0, Math.max(1, policy.concurrency));
            const children = wave.map((claimed) =>
                context.df.callSubOrchestrator(ConvergenceNames.product, { jobKey: claimed.jobKey, to: input.to }, claimed.instanceId),
            );
            try {
                const answers = (yield context.df.Task.all(children)) as Array<{ result?: string } | undefined>;
                wave.forEach((claimed, index) => (results[claimed.instanceId] = answers[index]?.result ?? "done"));
            } catch {
                // A product whose instance failed keeps its claim until it is stale; the next apply takes it over.
                for (const [index, claimed] of wave.entries()) {
                    const child = children[index]!;
                    results[claimed.instanceId] = child.isFaulted ? "failed" : ((child.result as { result?: string } | undefined)?.result ?? "done");
                }
            }
            status();
        }
        return { site: input.site, to: input.to, results, leftAlone: claim.leftAlone };
    };
}
