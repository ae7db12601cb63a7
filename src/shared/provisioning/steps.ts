import type { z } from "zod";
import { BeginInput, CopyInput, EnterStageInput, ParkInput, StepInput, type StepOutcome } from "./contracts";
import { copyTemplateSheet, ensureProductFolder, verifyCopies } from "./copyStage";
import { auditProduct } from "./finalAudit";
import { beginAttempt, completeJob, confirmStalled, enterStage, parkJob, resumeJob } from "./lifecycle";
import type { ProvisioningDeps } from "./ProvisioningDeps";
import { registerDocumentRegister } from "./registerStage";
import { remapReferences } from "./remap/remapReferences";
import { stampSummary } from "./remap/stampSummary";

/**
 * Every provisioning step, by the activity name it is registered and called under. The
 * orchestrator imports this table's type only (it must stay free of side effects), so the
 * compiler checks each call's name and input against the step itself; a new step is one entry
 * here and one schema below.
 */
export const provisioningSteps = {
    beginAttempt,
    enterStage,
    ensureProductFolder,
    copyTemplateSheet,
    verifyCopies,
    remapReferences,
    stampSummary,
    registerDocumentRegister,
    auditProduct,
    completeJob,
    parkJob,
    confirmStalled,
    resumeJob,
} satisfies Record<string, (deps: ProvisioningDeps, input: never) => Promise<StepOutcome>>;

export type ProvisioningSteps = typeof provisioningSteps;
export type StepName = keyof ProvisioningSteps;
export type StepInputOf<N extends StepName> = Parameters<ProvisioningSteps[N]>[1];

/** Each step's input as the activity receives it: parsed before the step runs. */
export const stepInputSchemas = {
    beginAttempt: BeginInput,
    enterStage: EnterStageInput,
    ensureProductFolder: StepInput,
    copyTemplateSheet: CopyInput,
    verifyCopies: StepInput,
    remapReferences: StepInput,
    stampSummary: StepInput,
    registerDocumentRegister: StepInput,
    auditProduct: StepInput,
    completeJob: StepInput,
    parkJob: ParkInput,
    confirmStalled: StepInput,
    resumeJob: StepInput,
} satisfies { [N in StepName]: z.ZodType<StepInputOf<N>> };
