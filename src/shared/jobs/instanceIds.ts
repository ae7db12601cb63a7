/**
 * The orchestration instance of one attempt at a job: derived, never random, so any number of
 * deliveries of the same message name the same instance. Within the host's rules (≤ 256
 * characters; no `/ \ # ?`; not starting with `@`).
 */
export function instanceIdFor(key: { pk: string; rk: string }, attempt: number): string {
    return `provision-${key.pk}-${key.rk}-a${attempt}`;
}
