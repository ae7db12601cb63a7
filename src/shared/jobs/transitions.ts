import type { JobKey } from "./JobRow";
import { formatJobKey } from "./JobRow";

/**
 * The one line every state change of a job is logged as, so that a count of them per run
 * (and per week) says whether the normal path is healthy: `job <key> <from> → <to> (<why>)`.
 */
export function transitionLine(key: JobKey, from: string, to: string, why: string): string {
    return `job ${formatJobKey(key)} ${from} → ${to} (${why})`;
}
