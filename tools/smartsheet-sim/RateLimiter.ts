import type { RateLimit } from "./SimulatorOptions";

/** At most `requests` accepted calls per token in any rolling `windowMs`; refused calls do not count. */
export class RateLimiter {
    private readonly accepted = new Map<string, number[]>();

    tryAcquire(token: string, limit: RateLimit, now: number): boolean {
        const recent = (this.accepted.get(token) ?? []).filter((at) => at > now - limit.windowMs);
        const allowed = recent.length < limit.requests;
        if (allowed) recent.push(now);
        this.accepted.set(token, recent);
        return allowed;
    }

    reset(): void {
        this.accepted.clear();
    }
}
