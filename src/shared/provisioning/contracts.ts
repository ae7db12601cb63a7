import { z } from "zod";
import { messageOf, type DeclaresFailureKind } from "../failures";
import { JobKeyParts, JobState, Stage } from "../jobs/JobRow";

/** The external event a person raises (through the unpark endpoint) to resume a parked job. */
export const UNPARK_EVENT = "unpark";

/** The unpark event's data: `parkedAt` names the parking it ends (absent: whatever is parked now). */
export const UnparkEvent = z
    .object({ parkedAt: z.string().optional(), by: z.string().optional(), note: z.string().optional() })
    .catch({});
export type UnparkEvent = z.infer<typeof UnparkEvent>;

/** Orchestration input: keys only. Everything else is read from the job row. */
export const ProvisionInput = z.object({ jobKey: JobKeyParts, attempt: z.number().int().min(1) });
export type ProvisionInput = z.infer<typeof ProvisionInput>;

/** Every activity gets the job's key and the instance that claims to own the job. */
export const StepInput = z.object({ jobKey: JobKeyParts, instanceId: z.string().min(1) });
export type StepInput = z.infer<typeof StepInput>;

export const CopyInput = StepInput.extend({ template: z.string().min(1) });
export type CopyInput = z.infer<typeof CopyInput>;

/** Moves the job on to a stage (forward only). */
export const EnterStageInput = StepInput.extend({ stage: Stage });
export type EnterStageInput = z.infer<typeof EnterStageInput>;

export const ParkInput = StepInput.extend({ reason: z.string().min(1), stage: Stage });
export type ParkInput = z.infer<typeof ParkInput>;

export const BeginInput = StepInput.extend({ attempt: z.number().int().min(1) });
export type BeginInput = z.infer<typeof BeginInput>;

/** What the orchestration needs to know about a job to decide its next step. */
export const JobView = z.object({
    state: JobState,
    stage: Stage,
    productCode: z.string(),
    templates: z.array(z.string()),
    copied: z.array(z.string()),
    recoveries: z.number().int().min(0),
    parkReason: z.string().optional(),
    /** Identifies one parking: an `unpark` event naming an earlier one is ignored. */
    parkedAt: z.string().optional(),
});
export type JobView = z.infer<typeof JobView>;

/**
 * How a step ended. Transient, ambiguous and bug failures are thrown (and retried by the
 * orchestration's retry policy); permanent ones come back as a value so they park the job instead
 * of burning retries. A bug still failing when the retries are spent parks the job too
 * (`failureOfStep`).
 */
export const StepOutcome = z.discriminatedUnion("outcome", [
    /**
     * `missing`: template sheets the copy stage still has to copy (after verification).
     * `waitUntil`: the step must run again after this instant (a durable timer), not before.
     */
    z.object({ outcome: z.literal("done"), job: JobView, missing: z.array(z.string()).optional(), waitUntil: z.iso.datetime().optional() }),
    z.object({ outcome: z.literal("permanent"), reason: z.string(), job: JobView.optional() }),
    /** The job belongs to another instance now (a recovery took over): stop quietly. */
    z.object({ outcome: z.literal("superseded"), reason: z.string() }),
]);
export type StepOutcome = z.infer<typeof StepOutcome>;

/** How a bug's failure is marked in its error's message: `[failure: bug in <step>] <message>`. */
const BUG_MARK = /\[failure: bug in (\w+)\] ([^\n]*)/;

/**
 * A step that failed with a bug (see `FailureKind`): thrown by the step runner so that the
 * orchestration, which sees nothing of an activity's error but its text once the step's retries
 * are spent, can tell it from a transient failure.
 */
export class StepBugError extends Error implements DeclaresFailureKind {
    readonly failureKind = "bug" as const;

    constructor(step: string, message: string, options?: { cause?: unknown }) {
        super(`[failure: bug in ${step}] ${message.split("\n")[0]}`, options);
        this.name = "StepBugError";
    }
}

/**
 * What the orchestration learns from a step whose retries are spent: a `bug` with its step and
 * message when the step runner marked it so (`StepBugError`, looked for in the error's text and
 * in the failure details Durable Functions keeps of it); otherwise `transient`: the step runner
 * throws nothing else but transient and ambiguous failures, and a failure before it ran (the
 * activity's dependencies could not be built) has always counted as one.
 */
export function failureOfStep(error: unknown): { kind: "bug"; step: string; message: string } | { kind: "transient" } {
    for (const text of textsOf(error)) {
        const marked = BUG_MARK.exec(text);
        if (marked) return { kind: "bug", step: marked[1]!, message: marked[2]!.trim() };
    }
    return { kind: "transient" };
}

/** The error's message and those of the failure details (and inner failures) it carries. */
function textsOf(error: unknown): string[] {
    const texts = [messageOf(error)];
    let details = (error as { failureDetails?: { errorMessage?: unknown; innerFailure?: unknown } } | undefined)?.failureDetails;
    for (let depth = 0; details && depth < 10; depth++) {
        if (typeof details.errorMessage === "string") texts.push(details.errorMessage);
        details = details.innerFailure as typeof details;
    }
    return texts;
}

/** Custom status shown by Durable Functions Monitor: small, flat, most selective key first. */
export interface ProvisionStatus {
    state: "running" | "parked" | "done" | "superseded";
    stage: string;
    sheetsDone: number;
    sheetsTotal: number;
    attempt: number;
    recoveries: number;
    jobKey: string;
    parkReason?: string;
}
