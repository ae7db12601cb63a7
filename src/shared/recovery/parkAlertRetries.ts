import { formatJobKey, type JobKey } from "../jobs/JobRow";
import { tellOpsOfParking, type ParkAlertOutcome } from "../provisioning/parkAlert";
import type { RecoveryDeps } from "./reconcile";

/** Park alerts one reaper run sends at most, over every site together: a webhook that hangs costs each one its timeout. */
export const PARK_ALERT_TRIES_PER_RUN = 10;
/** Once this many failed in a run the webhook is taken to be down: the rest wait for the next run. */
export const PARK_ALERT_FAILURES_PER_RUN = 3;

export interface ParkAlertRetryReport {
    sent: number;
    failed: number;
    /** Owed but left for the next run: this run's tries or failures were spent. */
    deferred: number;
}

interface OwedAlert {
    /** Who it is about, for the line that says it was left: `job <key>`, `intake sheet <id>`. */
    about: string;
    /** What it says, for that line. */
    line: string;
    tell(): Promise<ParkAlertOutcome>;
}

/**
 * The park alerts a reaper run owes, sent one after another beside the reaping, as the reaping
 * finds them: a webhook that hangs or fails delays no take-over and no other site, and costs a run
 * at most `PARK_ALERT_TRIES_PER_RUN` tries and `PARK_ALERT_FAILURES_PER_RUN` failures in total.
 * What is left is named in an error line and tried by the next run (the rows still say unalerted).
 */
export class ParkAlertRetries {
    private readonly owed: OwedAlert[] = [];
    private readonly report: ParkAlertRetryReport = { sent: 0, failed: 0, deferred: 0 };
    private wake: (() => void) | undefined;
    private closed = false;
    private readonly sending: Promise<void>;

    constructor(private readonly deps: RecoveryDeps) {
        this.sending = this.sendOwed();
    }

    /** An alert to send; `first`: ahead of the others (a parking this run made, told for the first time). */
    owe(key: JobKey, line: string, options: { first?: boolean } = {}): void {
        this.oweAlert({ about: `job ${formatJobKey(key)}`, line, tell: () => tellOpsOfParking(this.deps, key, line) }, options);
    }

    /** Any other alert the run owes (it claims it itself), within the same budget. */
    oweAlert(alert: OwedAlert, options: { first?: boolean } = {}): void {
        if (options.first) this.owed.unshift(alert);
        else this.owed.push(alert);
        this.wake?.();
    }

    /** Nothing more will be owed: sends what the budget allows, and says what it did. */
    async finish(): Promise<ParkAlertRetryReport> {
        this.closed = true;
        this.wake?.();
        await this.sending;
        return this.report;
    }

    private async sendOwed(): Promise<void> {
        for (;;) {
            const next = this.owed.shift();
            if (!next) {
                if (this.closed) return;
                await new Promise<void>((resolve) => (this.wake = resolve));
                this.wake = undefined;
                continue;
            }
            if (this.report.sent + this.report.failed >= PARK_ALERT_TRIES_PER_RUN || this.report.failed >= PARK_ALERT_FAILURES_PER_RUN) {
                this.report.deferred += 1;
                this.deps.log.error(
                    `${next.about}: alert left for the next reaper run (this run tried ${this.report.sent + this.report.failed}, ` +
                        `${this.report.failed} failed): ${next.line}`,
                );
                continue;
            }
            try {
                const outcome = await next.tell();
                if (outcome === "sent") this.report.sent += 1;
                if (outcome === "failed") this.report.failed += 1;
            } catch (error) {
                // Storage failing for this row: the row still says unalerted, the next run tries again.
                this.report.failed += 1;
                this.deps.log.error(`${next.about}: alert not tried to the end (${error instanceof Error ? error.message : String(error)}); the next reaper run tries again`);
            }
        }
    }
}
