import { IntakeStatus } from "../intake/intakeStatus";
import { formatJobKey, type JobRow } from "../jobs/JobRow";
import type { BeginInput, EnterStageInput, ParkInput, StepInput, StepOutcome } from "./contracts";
import { sendParkAlert } from "./parkAlert";
import type { ProvisioningDeps } from "./ProvisioningDeps";
import { runStep, type StepContext } from "./runStep";

/** The job's first step in every attempt: queued (or running, on a re-run) becomes running. */
export function beginAttempt(deps: ProvisioningDeps, input: BeginInput): Promise<StepOutcome> {
    return runStep(
        deps,
        input,
        "beginAttempt",
        async (context) => {
            await context.update((row) => ({
                ...row,
                state: "running",
                stage: row.stage ?? "copy",
                copyStartedAt: row.copyStartedAt ?? deps.now().toISOString(),
            }));
        },
        { from: ["queued", "running"] },
    );
}

export function enterStage(deps: ProvisioningDeps, input: EnterStageInput): Promise<StepOutcome> {
    return runStep(deps, input, "enterStage", async (context) => {
        await context.update((row) => (row.stage === input.stage ? undefined : { ...row, stage: input.stage }));
        if (input.status) await writeIntakeStatus(deps, context, input.status);
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
            await writeIntakeStatus(deps, context, IntakeStatus.done, context.row.folderLink);
            await context.update((row) => ({ ...row, state: "done", stage: "register", claims: {} }));
            deps.log.info(`job ${formatJobKey(input.jobKey)} running → done (provisioned ${context.row.productCode})`);
        },
        { from: ["running", "done"] },
    );
}

/**
 * A permanent failure: the job waits for a person. The row says why, the customer's intake row
 * says `Stalled — <reason>`, and ops gets an error log line and (if configured) a webhook call.
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
                    : { ...row, state: "parked", stage: input.stage, parkReason: input.reason, parkedAt: deps.now().toISOString(), parkAlerted: false },
            );
            await writeIntakeStatus(deps, context, IntakeStatus.stalled(input.reason));
            if (!parked.parkAlerted) {
                await alertOps(deps, parked, `job ${formatJobKey(input.jobKey)} running → parked (${input.reason})`);
                await context.update((row) => ({ ...row, parkAlerted: true }));
            }
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
            await context.update((row) =>
                row.state === "running"
                    ? undefined
                    : { ...row, state: "running", recoveries: 0, parkReason: undefined, parkedAt: undefined, parkAlerted: false },
            );
            deps.log.info(`job ${formatJobKey(input.jobKey)} parked → running (unparked)`);
        },
        { from: ["parked", "running"] },
    );
}

export async function alertOps(deps: ProvisioningDeps, row: JobRow, line: string): Promise<void> {
    deps.log.error(line);
    await sendParkAlert(deps, row).catch((error: unknown) =>
        deps.log.warn(`job ${row.intakeSheetId}-${row.intakeRowId}: the park alert webhook failed: ${String(error)}`),
    );
}

/** Writes the intake row's `Status` (and `Folder`) unless that exact status is already there. */
export async function writeIntakeStatus(deps: ProvisioningDeps, context: StepContext, status: string, folderLink?: string): Promise<void> {
    const latest = await context.update(() => undefined);
    if (latest.intakeStatus === status) return;
    const intakeSheetId = Number(latest.intakeSheetId);
    let statusColumnId = latest.intakeStatusColumnId;
    let folderColumnId = latest.intakeFolderColumnId;
    if (!statusColumnId) {
        const sheet = await context.smartsheet.getSheet(intakeSheetId, { rowIds: [Number(latest.intakeRowId)] });
        statusColumnId = sheet.columns.find((column) => column.title === "Status")?.id;
        folderColumnId = sheet.columns.find((column) => column.title === "Folder")?.id;
        if (!statusColumnId) throw new Error(`The intake sheet has no "Status" column.`);
    }
    const cells = [{ columnId: statusColumnId, value: status }];
    if (folderLink && folderColumnId) cells.push({ columnId: folderColumnId, value: folderLink });
    await context.smartsheet.updateRows(intakeSheetId, [{ id: Number(latest.intakeRowId), cells }]);
    await context.update((row) => ({ ...row, intakeStatus: status, intakeStatusColumnId: statusColumnId, intakeFolderColumnId: folderColumnId }));
}
