import type { CallLogEntry } from "../../smartsheet-sim";
import { BenchStack, productRequests, SMARTSHEET_LATENCY_MS } from "../benchStack";
import type { Measured } from "../figures";
import { byOperation, describeOperations } from "../productRun";

const NEW_APPROVALS = 20;

/**
 * One routine sweep of an intake sheet of 50 rows, and of one of 5,000, each holding 20
 * approvals the sweep before had not seen; the rest of the rows need nothing (requests not
 * approved). Each sheet has a stack of its own, whose starter is disabled
 * (`AzureWebJobs.provisionStarter.Disabled`, a host setting): the simulator hears from the sweep
 * alone, and its calls are counted around the one sweep.
 */
export async function sweeps(storage: string): Promise<Measured> {
    const small = await routineSweep(storage, 50);
    const large = await routineSweep(storage, 5_000);
    return {
        figures: { sweepCalls50: small.calls.length, sweepCalls5000: large.calls.length },
        details: { sweepCallsByOperation50: byOperation(small.calls), sweepCallsByOperation5000: byOperation(large.calls) },
        notes: [
            `sweep of 50 rows: ${describeOperations(small.calls)}; the app's count line: ${small.line}`,
            `sweep of 5,000 rows: ${describeOperations(large.calls)}; the app's count line: ${large.line}`,
        ],
    };
}

/**
 * Fills the intake sheet to `rows` rows — typed in an hour ago, by Smartsheet's clock, as the
 * rows of a sheet in use were, so not within the cursor's overlap — lets a sweep see it, adds the
 * new approvals and logs the next sweep's calls.
 */
async function routineSweep(storage: string, rows: number): Promise<{ calls: CallLogEntry[]; line: string }> {
    let smartsheetBehindMs = 60 * 60_000;
    const stack = await BenchStack.start({
        storage,
        settings: { AzureWebJobs__provisionStarter__Disabled: "true" },
        simulator: { latencyMs: SMARTSHEET_LATENCY_MS },
        simulatorClock: () => Date.now() - smartsheetBehindMs,
    });
    try {
        const intake = stack.sim.core.state().sheets.find((sheet) => sheet.id === stack.intakeSheetId)!;
        await stack.addRequests(productRequests(`OLD${rows}`, rows - NEW_APPROVALS - intake.rows.length, false));
        smartsheetBehindMs = 0;
        await stack.sweep();
        await stack.addRequests(productRequests(`NEW${rows}`, NEW_APPROVALS));
        stack.sim.core.resetCalls();
        const line = await stack.sweep();
        if (!line.includes(`${NEW_APPROVALS} queued`)) throw new Error(`The measured sweep did not queue the ${NEW_APPROVALS} new approvals: ${line}`);
        return { calls: stack.callLog(), line: line.replace(/^.*intake sweep of site \S+ \(/, "(") };
    } finally {
        await stack.stop();
    }
}
