import { IntakeColumns, IntakeStatus } from "../intake/intakeStatus";
import { columnIdsByTitle } from "../smartsheet/columns";
import { formatJobKey, keyOf, type JobRow } from "../jobs/JobRow";
import { transitionLine } from "../jobs/transitions";
import type { SmartsheetPort } from "../smartsheet/SmartsheetPort";
import type { BeginInput, EnterStageInput, ParkInput, StepInput, StepOutcome } from "./contracts";
import { tellOpsOfParking } from "./parkAlert";
import { SupersededError } from "./errors";
import { JobStateConflictError } from "../jobs/JobStore";
import type { ProvisioningDeps } from "./ProvisioningDeps";
import { runStep, type StepContext } from "./runStep";

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
            if (context.row.state === "parked") return;
            await context.update((row) => ({
                ...row,
                state: "running",
                stage: row.stage ?? "copy",
                copyStartedAt: row.copyStartedAt ?? deps.now().toISOString(),
            }));
            if (context.row.state === "queued") deps.log.info(transitionLine(input.jobKey, "queued", "running", `attempt ${input.attempt}`));
        },
        { from: ["queued", "running", "parked"] },
    );
}

export function enterStage(deps: ProvisioningDeps, input: EnterStageInput): Promise<StepOutcome> {
    return runStep(deps, input, "enterStage", async (context) => {
        await context.update((row) => (row.stage === input.stage ? undefined : { ...row, stage: input.stage }));
        if (input.status) await recordIntakeStatus(deps, context, input.status);
    });
}

/** `Done` and the folder's link on the intake row, then the job row `done`. */
export function completeJob(deps: ProvisioningDeps, input: StepInput): Promise<StepOutcome> {
    return runStep(
        deps,
        input,
        "completeJob",
        async (context) => {
            if (context.row.state === "done") return;
            await recordIntakeStatus(deps, context, IntakeStatus.done, context.row.folderLink);
            await context.update((row) => ({ ...row, state: "done", stage: "register", claims: {} }));
            deps.log.info(transitionLine(input.jobKey, "running", "done", `${context.row.productCode} provisioned`));
        },
        { from: ["running", "done"] },
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
            const parked = await context.update((row) =>
                row.state === "parked" && row.parkReason === input.reason
                    ? undefined
                    : {
                          ...row,
                          state: "parked",
                          stage: input.stage,
                          parkReason: input.reason,
                          parkedAt: deps.now().toISOString(),
                          parkAlerted: false,
                          parkAlertAttempts: 0,
                          parkAlertError: undefined,
                      },
            );
            if (!parked.parkAlerted) await tellOpsOfParking(deps, input.jobKey, transitionLine(input.jobKey, "running", "parked", input.reason));
            await recordIntakeStatus(deps, context, IntakeStatus.stalled(input.reason)).catch((error: unknown) => {
                if (error instanceof SupersededError || error instanceof JobStateConflictError) throw error;
                deps.log.error(
                    `job ${formatJobKey(input.jobKey)}: could not write the stall onto the intake row (${errorText(error)}); ops has been told`,
                );
            });
        },
        { from: ["running", "parked"] },
    );
}

/** A person fixed the cause: back to running at the parked stage, with a fresh recovery budget. */
export function resumeJob(deps: ProvisioningDeps, input: StepInput): Promise<StepOutcome> {
    return runStep(
        deps,
        input,
        "resumeJob",
        async (context) => {
            if (context.row.state === "running") return;
            await context.update((row) => ({
                ...row,
                state: "running",
                recoveries: 0,
                parkReason: undefined,
                parkedAt: undefined,
                parkAlerted: false,
            }));
            deps.log.info(transitionLine(input.jobKey, "parked", "running", `unparked; the ${context.row.stage ?? "copy"} stage runs again`));
        },
        { from: ["parked", "running"] },
    );
}

function errorText(error: unknown): string {
    return error instanceof Error ? error.message : String(error);
}

async function recordIntakeStatus(deps: ProvisioningDeps, context: StepContext, status: string, folderLink?: string): Promise<void> {
    const latest = await context.update(() => undefined);
    if (latest.intakeStatus === status) return;
    const columns = await writeIntakeStatus(context.smartsheet, latest, status, folderLink);
    await context.update((row) => ({ ...row, intakeStatus: status, ...columns }));
}

/**
 * Writes the job's intake row `Status` (and `Folder`), finding the columns once if the row does
 * not know them; returns the column ids for the caller to record with the status.
 */
export async function writeIntakeStatus(
    smartsheet: SmartsheetPort,
    row: JobRow,
    status: string,
    folderLink?: string,
): Promise<{ intakeStatusColumnId: number; intakeFolderColumnId?: number }> {
    const { pk, rk } = keyOf(row);
    let statusColumnId = row.intakeStatusColumnId;
    let folderColumnId = row.intakeFolderColumnId;
    if (!statusColumnId) {
        const sheet = await smartsheet.getSheet(Number(pk), { rowIds: [Number(rk)] });
        const { ids } = columnIdsByTitle(sheet, { status: IntakeColumns.status, folder: IntakeColumns.folder });
        statusColumnId = ids.status;
        folderColumnId = ids.folder;
        if (!statusColumnId) throw new Error(`The intake sheet has no "${IntakeColumns.status}" column.`);
    }
    const cells = [{ columnId: statusColumnId, value: status }];
    if (folderLink && folderColumnId) cells.push({ columnId: folderColumnId, value: folderLink });
    await smartsheet.updateRows(Number(pk), [{ id: Number(rk), cells }]);
    return { intakeStatusColumnId: statusColumnId, intakeFolderColumnId: folderColumnId };
}
