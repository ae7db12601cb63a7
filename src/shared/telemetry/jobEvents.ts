import type { Dimensions, Telemetry } from "./Telemetry";

/** What a job's records are told of the job: the fields of its row that become dimensions. */
interface JobFacts {
    intakeSheetId: string;
    intakeRowId: string;
    state: string;
    stage?: string;
    attempt: number;
    /** When the sweep made the job, having found its request approved: where approval-to-done starts. */
    createdAt?: string;
}

/** The sites, as far as a job's records need them: the name of the site an intake sheet belongs to. */
interface SiteNames {
    ofIntakeSheet(intakeSheetId: string): { name: string } | undefined;
}

/** The dimensions every record of a job carries; `state` is the state it is in after the record's event. */
function jobDimensions(job: JobFacts, sites?: SiteNames): Dimensions {
    return {
        jobKey: `${job.intakeSheetId}-${job.intakeRowId}`,
        site: sites?.ofIntakeSheet(job.intakeSheetId)?.name,
        state: job.state,
        stage: job.stage,
        attempt: job.attempt,
    };
}

/**
 * The records of a job's life, one call beside each transition line of the log. Each takes the
 * row as it is after the change (or, where a caller has only the row before it, says the state
 * the job goes to).
 */
export const jobEvents = {
    /** `from → to`, for any change of state (and the same state, for a take-over or a removal the audit makes). */
    transition(telemetry: Telemetry | undefined, job: JobFacts, sites: SiteNames | undefined, move: { from: string; to: string; reason?: string }): void {
        telemetry?.event("job.transition", { ...jobDimensions({ ...job, state: move.to }, sites), ...move });
    },

    /** The product is provisioned: the transition, `job.done`, a product done, and its approval-to-done time. */
    done(telemetry: Telemetry | undefined, job: JobFacts, sites: SiteNames | undefined, from: string, now: Date): void {
        if (!telemetry) return;
        const dimensions = jobDimensions({ ...job, state: "done" }, sites);
        const started = job.createdAt ? Date.parse(job.createdAt) : NaN;
        const seconds = Number.isFinite(started) ? Math.max(0, (now.getTime() - started) / 1000) : undefined;
        telemetry.event("job.transition", { ...dimensions, from, to: "done" });
        telemetry.event("job.done", { ...dimensions, approvalToDoneSeconds: seconds });
        telemetry.count("sheetwright.products.done", { site: dimensions.site });
        if (seconds !== undefined) telemetry.record("sheetwright.approval_to_done.seconds", seconds, { site: dimensions.site });
    },

    /** The job waits for a person: the transition, `job.parked` with the reason, a product parked. */
    parked(telemetry: Telemetry | undefined, job: JobFacts, sites: SiteNames | undefined, from: string, reason: string): void {
        if (!telemetry) return;
        const dimensions = jobDimensions({ ...job, state: "parked" }, sites);
        telemetry.event("job.transition", { ...dimensions, from, to: "parked", reason });
        telemetry.event("job.parked", { ...dimensions, reason });
        telemetry.count("sheetwright.products.parked", { site: dimensions.site });
    },

    /** The reaper took a job over: the transition (to the same state, the next attempt), `job.recovered`, a recovery. */
    recovered(telemetry: Telemetry | undefined, job: JobFacts, sites: SiteNames | undefined, reason: string): void {
        if (!telemetry) return;
        const dimensions = jobDimensions(job, sites);
        telemetry.event("job.transition", { ...dimensions, from: job.state, to: job.state, reason });
        telemetry.event("job.recovered", { ...dimensions, reason });
        telemetry.count("sheetwright.jobs.recovered", { site: dimensions.site });
    },
};
