import { intakeRowShows, IntakeStatus, writeIntakeStatus } from "../intakeRow/intakeStatus";
import { formatJobKey, keyOf, STAGES, type JobRow } from "../jobs/JobRow";
import { JobLife, lineOf } from "../jobs/jobLife";
import { ClaimKey } from "./claimKeys";
import type { BeginInput, EnterStageInput, ParkInput, StepInput, StepOutcome } from "./contracts";
import { tellOpsOfParking } from "./parkAlert";
import { failureKind, messageOf } from "../failures";
import { isSmartsheetError } from "../smartsheet/errors";
import { underClaim } from "./underClaim";
import type { ProvisioningDeps } from "./ProvisioningDeps";
import { runStep, type StepContext } from "./runStep";
import { jobEvents } from "../telemetry/jobEvents";

/**
 * The first step of every attempt: queued (or running, when a recovery takes over) becomes
 * running. A job the reaper parked stays parked: this attempt waits for `unpark`.
 */
export function beginAttempt(deps: ProvisioningDeps, input: BeginInput): Promise<StepOutcome> {
    return runStep(
        deps,
        input,
        "beginAttempt",
        async (context) => {
            const begun = await context.update((row) => JobLife.begin.apply(row, deps.now().toISOString()));
            if (context.row.state === "queued") deps.log.info(lineOf(JobLife.begin, input.jobKey, "queued", `attempt ${input.attempt}`));
            if (context.row.state === "queued") jobEvents.transition(deps.telemetry, begun, deps.sites, { from: "queued", to: "running" });
        },
        { from: JobLife.begin.from },
    );
}

/**
 * The job moves on to `stage`, forward only: a late duplicate of an earlier stage's step must
 * not move it back. The intake row is not written: it says Queued until the job is Done, so a
 * product's progress costs no Smartsheet calls (ops sees it in the jobs CLI and DfMon).
 */
export function enterStage(deps: ProvisioningDeps, input: EnterStageInput): Promise<StepOutcome> {
    return runStep(deps, input, "enterStage", async (context) => {
        await context.update((row) => (STAGES.indexOf(row.stage ?? "copy") >= STAGES.indexOf(input.stage) ? undefined : { ...row, stage: input.stage }));
    });
}

/**
 * `Done` and the folder's link on the intake row, then the job row `done`. Runs after the final
 * audit, so nothing of this product can land late any more.
 */
export function completeJob(deps: ProvisioningDeps, input: StepInput): Promise<StepOutcome> {
    return runStep(
        deps,
        input,
        "completeJob",
        async (context) => {
            if (context.row.state === "done") return;
            await recordIntakeStatus(deps, context, IntakeStatus.done, { folderLink: context.row.folderLink, current: (row) => row.state === "running" });
            const done = await context.update((row) => JobLife.complete.apply(row));
            deps.log.info(lineOf(JobLife.complete, input.jobKey, "running", `${context.row.productCode} provisioned`));
            jobEvents.done(deps.telemetry, done, deps.sites, "running", deps.now());
        },
        { from: JobLife.complete.from },
    );
}

/**
 * A permanent failure: the job waits for a person. The row says why; ops is told first (an
 * error line, then the webhook), since the customer's intake row may be the very thing that is
 * broken; then the intake row says `Stalled — <reason>` if it can be written.
 */
export function parkJob(deps: ProvisioningDeps, input: ParkInput): Promise<StepOutcome> {
    return runStep(
        deps,
        input,
        "parkJob",
        async (context) => {
            const parked = await context.update((row) => JobLife.park.apply(row, { reason: input.reason, stage: input.stage, now: deps.now().toISOString() }));
            if (context.row.state !== "parked" || context.row.parkReason !== input.reason) jobEvents.parked(deps.telemetry, parked, deps.sites, context.row.state, input.reason);
            if (!parked.parkAlerted) await tellOpsOfParking(deps, input.jobKey, lineOf(JobLife.park, input.jobKey, "running", input.reason));
            // Ops knows already; a Stall Smartsheet will not take now is left to the sweep, which owes it at any age.
            await recordIntakeStatus(deps, context, IntakeStatus.stalled(input.reason), {
                current: (row) => row.state === "parked" && row.parkReason === input.reason,
                bestEffort: true,
            });
            const stalled = await context.update(() => undefined);
            // An earlier status write that went unanswered (an unpark's In progress) may still land over the Stall.
            const lateUntil = stalled.lateWritesUntil ? Date.parse(stalled.lateWritesUntil) : -Infinity;
            if (lateUntil > deps.now().getTime()) return { waitUntil: new Date(lateUntil).toISOString() };
        },
        { from: JobLife.park.from },
    );
}

/**
 * A parked job's `Stalled — <reason>` once more, after every status write that could land over it
 * has had its time: the intake row is read, and written only where it shows something else.
 */
export function confirmStalled(deps: ProvisioningDeps, input: StepInput): Promise<StepOutcome> {
    return runStep(
        deps,
        input,
        "confirmStalled",
        async (context) => {
            const { parkReason } = context.row;
            if (context.row.state !== "parked" || parkReason === undefined) return;
            await recordIntakeStatus(deps, context, IntakeStatus.stalled(parkReason), {
                current: (row) => row.state === "parked" && row.parkReason === parkReason,
                lookFirst: true,
                bestEffort: true,
            });
        },
        { from: JobLife.whileParked.from },
    );
}

/** A person fixed the cause: back to running at the parked stage, with a fresh recovery budget. */
export function resumeJob(deps: ProvisioningDeps, input: StepInput): Promise<StepOutcome> {
    return runStep(
        deps,
        input,
        "resumeJob",
        async (context) => {
            if (context.row.state !== "running") {
                const resumed = await context.update((row) => JobLife.resume.apply(row));
                deps.log.info(lineOf(JobLife.resume, input.jobKey, "parked", `unparked; the ${context.row.stage ?? "copy"} stage runs again`));
                jobEvents.transition(deps.telemetry, resumed, deps.sites, { from: "parked", to: "running", reason: "unparked" });
            }
            if (IntakeStatus.isStalled(context.row.intakeStatus)) {
                await recordIntakeStatus(deps, context, IntakeStatus.inProgress, { current: (row) => row.state === "running" });
            }
        },
        { from: JobLife.resume.from },
    );
}

/**
 * Tells the customer on the intake row, under the `intake` claim: one status write at a time per
 * job, none once `current` says the job has moved past it, and one that went unanswered keeps
 * the product open for the late-write horizon (it could land over a later status). A row that
 * cannot be written (deleted, locked, no permission) stops nothing: the job goes on, the row
 * records why, and ops gets an error line. `bestEffort`: so does any other Smartsheet failure
 * (a parked job's Stall, which the intake sweep owes at any age).
 */
async function recordIntakeStatus(
    deps: ProvisioningDeps,
    context: StepContext,
    status: string,
    options: { folderLink?: string; current(row: JobRow): boolean; lookFirst?: boolean; bestEffort?: boolean },
): Promise<void> {
    let columns: Awaited<ReturnType<typeof writeIntakeStatus>> | undefined;
    try {
        await underClaim(deps, context, {
            key: ClaimKey.intake,
            leaves: "nothing",
            // `lookFirst`: what the row records is not trusted; the intake row itself is read.
            recorded: (row) => (!options.current(row) || (!options.lookFirst && row.intakeStatus === status) ? status : undefined),
            alwaysLook: options.lookFirst,
            // An earlier run's write may have landed: the row showing the status already is as good as writing it.
            look: async () => {
                const seen = await intakeRowShows(context.smartsheet, context.row, status, options.folderLink);
                if (!seen.shows) return undefined;
                columns = { intakeStatusColumnId: seen.intakeStatusColumnId!, intakeFolderColumnId: seen.intakeFolderColumnId };
                return status;
            },
            write: async () => {
                columns = await writeIntakeStatus(context.smartsheet, context.row, status, options.folderLink);
                return status;
            },
            record: (row) => ({ ...row, ...columns, intakeStatus: status, intakeStatusError: undefined }),
        });
    } catch (error) {
        // Refused for good (by Smartsheet, or the job's site is gone), or any Smartsheet failure when best effort.
        const permanent = failureKind(error) === "permanent";
        if (!(permanent || (options.bestEffort && isSmartsheetError(error)))) throw error;
        const key = formatJobKey(keyOf(context.row));
        const message = messageOf(error);
        deps.log.error(
            `job ${key}: could not write "${status}" onto intake row ${context.row.intakeRowId} (${message}); ` +
                (permanent ? "the job goes on" : "the intake sweep writes it"),
        );
        await context.update((row) => ({ ...row, intakeStatusError: message }));
    }
}
