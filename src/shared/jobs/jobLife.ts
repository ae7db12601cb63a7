import { formatJobKey, type JobKey, type JobRow, type JobRowInput, type JobState, type Stage } from "./JobRow";

/** What the sweep makes of an intake row (with the status it writes there) before a transition gives it its state. */
type JobDraft = Omit<JobRowInput, "state">;

/** A transition that leaves the job in the state it was in (the line still names it: `running → running`). */
const SAME = "same";

/** A job that has no row yet: the sweep's `open` and `reject` create it (a conditional insert). */
const NEW_ROW: readonly JobState[] = [];

/**
 * The job's life in one place. Each transition names the states a job may be in when it is
 * taken (every write of it is conditional on them and on the row's ETag), what it changes on the
 * row, and the state it leads to. The steps, the reaper, reconciliation, unpark and the sweep
 * all change a job's state through these and log the change with `lineOf`, from the state the
 * transition names as its target. `apply` answers `undefined` when the row already is what the
 * transition leads to (a redelivery).
 *
 *   (new row) ──open──▶ queued ──begin──▶ running ──complete──▶ done
 *        │                ▲                  │  ▲
 *        └─reject─▶ rejected ─reconsider     park│ │resume / unpark
 *                                            ▼  │
 *                                           parked
 *   take-over: queued|running → same state, next attempt (or parked after too many recoveries)
 */
export const JobLife = {
    /** A step of the running job: progress on the row, no change of state (a final audit's removal of a late write is one). */
    work: { from: states("running"), to: SAME },
    /** Bookkeeping of a parked job (its alert, its stall on the intake row, an unpark's audit trail): no change of state. */
    whileParked: { from: states("parked") },
    /** Bookkeeping of a done job (its Done on the intake row, a row found deleted): no change of state. */
    whileDone: { from: states("done") },
    /** The first step of an attempt; a redelivery or a recovery instance finds it running or parked already. */
    begin: {
        from: states("queued", "running", "parked"),
        to: "running" as const,
        apply: (row: JobRow, now: string): JobRow | undefined =>
            row.state === "parked" ? undefined : { ...row, state: "running", stage: row.stage ?? "copy", copyStartedAt: row.copyStartedAt ?? now },
    },
    /** The final audit passed: the product is done. */
    complete: {
        from: states("running", "done"),
        to: "done" as const,
        apply: (row: JobRow): JobRow => ({ ...row, state: "done", stage: "register" }),
    },
    /** A permanent problem: a person has to act. Ops is told after this write, until a 2xx says it was heard. */
    park: {
        from: states("running", "parked"),
        to: "parked" as const,
        apply: (row: JobRow, parking: { reason: string; stage: Stage; now: string }): JobRow | undefined =>
            row.state === "parked" && row.parkReason === parking.reason
                ? undefined
                : { ...parkedRow(row, parking.reason, parking.now), stage: parking.stage },
    },
    /** The unpark event reached the waiting orchestration: the parked stage runs again with a fresh recovery budget. */
    resume: {
        from: states("parked", "running"),
        to: "running" as const,
        apply: (row: JobRow): JobRow | undefined =>
            row.state === "running" ? undefined : { ...row, state: "running", recoveries: 0, parkReason: undefined, parkedAt: undefined, parkAlerted: false, parkAlertClaim: undefined, parkAlertRetryAt: undefined, parkAlertFailed: undefined },
    },
    /** An unpark request with no instance waiting: the next attempt starts at the parked stage. */
    unparkToNewAttempt: {
        from: states("parked"),
        to: "running" as const,
        apply: (row: JobRow, unpark: { trail: JobRow["unparks"][number]; instanceId: string; now: string }): JobRow => ({
            ...row,
            state: "running",
            attempt: row.attempt + 1,
            instanceId: unpark.instanceId,
            recoveries: 0,
            parkReason: undefined,
            parkedAt: undefined,
            parkAlerted: false,
            parkAlertClaim: undefined,
            parkAlertRetryAt: undefined,
            parkAlertFailed: undefined,
            lastProgressAt: unpark.now,
            unparks: [...row.unparks, unpark.trail],
        }),
    },
    /** The reaper takes over a job without progress: the next attempt continues from the row. */
    takeOver: {
        from: states("queued", "running"),
        to: SAME,
        apply: (row: JobRow, takeOver: { instanceId: string; why: string; now: string }): JobRow => ({
            ...row,
            attempt: row.attempt + 1,
            instanceId: takeOver.instanceId,
            recoveries: row.recoveries + 1,
            lastProgressAt: takeOver.now,
            lastError: `taken over: ${takeOver.why}`,
        }),
    },
    /** Too many recoveries: the reaper parks the job, and the next attempt waits for unpark. */
    parkAfterRecoveries: {
        from: states("queued", "running"),
        to: "parked" as const,
        apply: (row: JobRow, parking: { instanceId: string; reason: string; now: string }): JobRow => ({
            ...parkedRow(row, parking.reason, parking.now),
            attempt: row.attempt + 1,
            instanceId: parking.instanceId,
            lastProgressAt: parking.now,
        }),
    },
    /** Reconciliation: the orchestration finished the job, the row missed it (a lost write, a deploy, an outage). */
    missedDone: {
        from: states("queued", "running", "parked"),
        to: "done" as const,
        apply: (row: JobRow): JobRow => ({ ...row, state: "done", stage: "register", claims: {} }),
    },
    /** A new approved row that passes: the sweep makes its job, queued for its first attempt. */
    open: {
        from: NEW_ROW,
        to: "queued" as const,
        apply: (job: JobDraft): JobRowInput => ({ ...job, state: "queued" }),
    },
    /** A row that cannot be provisioned as it stands (new, or rejected before for another reason): its job is rejected, the row says why. */
    reject: {
        from: states("rejected"),
        to: "rejected" as const,
        apply: (job: JobDraft, reason: string): JobRowInput => ({ ...job, state: "rejected", rejectReason: reason }),
    },
    /** The sweep looks at a rejected job again and the row now passes: its next attempt is queued. */
    reconsider: {
        from: states("rejected"),
        to: "queued" as const,
        apply: (job: JobDraft): JobRowInput => ({ ...job, state: "queued", rejectReason: undefined }),
    },
} satisfies Record<string, { from: readonly JobState[]; to?: JobState | typeof SAME; apply?: ((row: JobRow, ...args: never[]) => JobRow | undefined) | ((job: JobDraft, ...args: never[]) => JobRowInput) }>;

/** The states a transition may be taken from. */
function states(...allowed: JobState[]): readonly JobState[] {
    return allowed;
}

function parkedRow(row: JobRow, reason: string, now: string): JobRow {
    // What a person does about it may change what the remap decided before: it looks again once the job runs.
    return { ...row, state: "parked", parkReason: reason, parkedAt: now, parkAlerted: false, parkAlertAttempts: 0, parkAlertError: undefined, parkAlertClaim: undefined, parkAlertRetryAt: undefined, parkAlertFailed: undefined, remapPlan: undefined };
}

/**
 * The one line every state change of a job is logged as, so that a count of them per run
 * (and per week) says whether the normal path is healthy: `job <key> <from> → <to> (<why>)`.
 */
export function lineOf(transition: { to: JobState | typeof SAME }, key: JobKey, from: JobState | "new", why: string): string {
    return `job ${formatJobKey(key)} ${from} → ${transition.to === SAME ? from : transition.to} (${why})`;
}
