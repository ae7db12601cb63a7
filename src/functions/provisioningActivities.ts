import * as df from "durable-functions";
import type { z } from "zod";
import { provisioningDeps } from "../shared/composition";
import { copyTemplateSheet, ensureProductFolder, verifyCopies } from "../shared/provisioning/copyStage";
import {
    ActivityNames,
    BeginInput,
    CopyInput,
    EnterStageInput,
    ParkInput,
    StepInput,
    type StepOutcome,
} from "../shared/provisioning/contracts";
import { beginAttempt, completeJob, enterStage, parkJob, resumeJob } from "../shared/provisioning/lifecycle";
import { auditProduct } from "../shared/provisioning/finalAudit";
import type { ProvisioningDeps } from "../shared/provisioning/ProvisioningDeps";
import { registerDocumentRegister } from "../shared/provisioning/registerStage";
import { remapReferences, stampSummary } from "../shared/provisioning/renameStage";

function activity<S extends z.ZodType>(name: string, input: S, step: (deps: ProvisioningDeps, input: z.infer<S>) => Promise<StepOutcome>) {
    df.app.activity(name, {
        handler: async (raw: unknown, context) => step(await provisioningDeps(context), input.parse(raw)),
    });
}

activity(ActivityNames.beginAttempt, BeginInput, beginAttempt);
activity(ActivityNames.enterStage, EnterStageInput, enterStage);
activity(ActivityNames.ensureProductFolder, StepInput, ensureProductFolder);
activity(ActivityNames.copyTemplateSheet, CopyInput, copyTemplateSheet);
activity(ActivityNames.verifyCopies, StepInput, verifyCopies);
activity(ActivityNames.remapReferences, StepInput, remapReferences);
activity(ActivityNames.stampSummary, StepInput, stampSummary);
activity(ActivityNames.registerDocumentRegister, StepInput, registerDocumentRegister);
activity(ActivityNames.auditProduct, StepInput, auditProduct);
activity(ActivityNames.completeJob, StepInput, completeJob);
activity(ActivityNames.parkJob, ParkInput, parkJob);
activity(ActivityNames.resumeJob, StepInput, resumeJob);
