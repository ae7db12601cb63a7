import { LIVE_STATUSES, type Orchestrations } from "./Orchestrations";
import { startAttempt } from "./startAttempt";
import type { Logger } from "../logger";
import { currentInstanceId, formatJobKey, OPEN_STATES } from "../jobs/JobRow";
import type { JobStore } from "../jobs/JobStore";
import { parseProvisionMessage } from "../jobs/ProvisionMessage";

export interface StarterDeps {
    jobs: JobStore;
    orchestrations: Orchestrations;
    log: Logger;
    /** Puts a message that cannot be processed on the poison queue, untouched. */
    poison(raw: string, reason: string): Promise<void>;
}

type StartResult = "started" | "already-running" | "nothing-to-do" | "poisoned";

/**
 * Starts the job's orchestration unless an instance for its current attempt exists. Safe to
 * call for every delivery of a message, concurrently too: the instance id is derived from the
 * job and attempt, and a start the host refuses because a duplicate won the race is fine.
 */
export async function startJob(deps: StarterDeps, entry: unknown): Promise<StartResult> {
    const parsed = parseProvisionMessage(entry);
    const raw = typeof entry === "string" ? entry : JSON.stringify(entry);
    if (!parsed.ok) {
        deps.log.error(`provision message rejected (${parsed.problem}); moved to the poison queue unchanged: ${raw.slice(0, 500)}`);
        await deps.poison(raw, parsed.problem);
        return "poisoned";
    }
    const key = parsed.message.jobKey;
    const jobKey = formatJobKey(key);
    const stored = await deps.jobs.get(key);
    if (!stored) {
        deps.log.error(`provision message for job ${jobKey}, which has no job row; moved to the poison queue`);
        await deps.poison(raw, "no job row");
        return "poisoned";
    }
    const row = stored.row;
    if (!OPEN_STATES.includes(row.state)) {
        deps.log.info(`job ${jobKey} is ${row.state}; nothing to start`);
        return "nothing-to-do";
    }
    const instanceId = currentInstanceId(row);
    const existing = await deps.orchestrations.status(instanceId);
    if (existing) {
        if (LIVE_STATUSES.includes(existing.runtimeStatus)) return "already-running";
        deps.log.info(`job ${jobKey}: instance ${instanceId} is ${existing.runtimeStatus} while the row is ${row.state}; left to the reaper`);
        return "nothing-to-do";
    }
    try {
        await startAttempt(deps.orchestrations, key, row.attempt);
    } catch (error) {
        // The host refuses a start on a live id with a generic error: a concurrent delivery won.
        const now = await deps.orchestrations.status(instanceId);
        if (now && LIVE_STATUSES.includes(now.runtimeStatus)) return "already-running";
        throw error;
    }
    deps.log.info(`job ${jobKey}: started ${instanceId}`);
    return "started";
}
