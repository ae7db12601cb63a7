import { JobStore } from "../../src/shared/jobs/JobStore";
import type { ProvisioningDeps } from "../../src/shared/provisioning/ProvisioningDeps";
import type { SmartsheetPort } from "../../src/shared/smartsheet/SmartsheetPort";
import { Sites } from "../../src/shared/sites/Sites";

/** The process is gone: nothing after this reaches Smartsheet or the Jobs table. */
export class HostDiedError extends Error {}

/**
 * The steps' deps, except that once Smartsheet has answered `k` calls the process is dead: no
 * further call leaves it and no job-row write gets through. Calls already sent (copies side by
 * side) are carried out by Smartsheet all the same.
 */
export function diesAfterCall(
    deps: ProvisioningDeps,
    k: number,
    callsAnswered: () => number,
    options: { copiesSentTogether?: number } = {},
): ProvisioningDeps {
    const dead = () => callsAnswered() >= k;
    const died = () => new HostDiedError(`the host died after call ${k}`);
    const copiesSent = sentTogether(options.copiesSentTogether ?? 1);
    const jobs: JobStore = Object.assign(Object.create(JobStore.prototype) as JobStore, deps.jobs, {
        update: (...args: Parameters<JobStore["update"]>) => (dead() ? Promise.reject(died()) : deps.jobs.update(...args)),
    });
    const dying = (client: SmartsheetPort): SmartsheetPort =>
        new Proxy(client, {
            get(target, property) {
                const value: unknown = Reflect.get(target, property);
                if (typeof value !== "function") return value;
                if (property === "withOwnTally" || property === "inBackground") return (...args: unknown[]) => dying(value.apply(target, args) as SmartsheetPort);
                if (property === "calls") return value.bind(target);
                if (property === "copySheet")
                    return async (...args: unknown[]) => {
                        await copiesSent();
                        return dead() ? Promise.reject(died()) : value.apply(target, args);
                    };
                return (...args: unknown[]) => (dead() ? Promise.reject(died()) : value.apply(target, args));
            },
        });
    const sites = new Sites(deps.sites.all().map((site) => ({ ...site, smartsheet: dying(site.smartsheet) })));
    return { ...deps, jobs, sites };
}

/**
 * A gate that opens once `count` callers have reached it: the dead host's copies leave together,
 * however far apart their claims were taken. A gate still short after 10 s fails the test loudly.
 */
function sentTogether(count: number): () => Promise<void> {
    let arrived = 0;
    let open: () => void = () => undefined;
    const opened = new Promise<void>((resolve) => (open = resolve));
    return async () => {
        arrived += 1;
        if (arrived >= count) open();
        let timer: NodeJS.Timeout | undefined;
        const stuck = new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`only ${arrived} of ${count} copies were sent; the gate never opened`)), 10_000);
        });
        try {
            await Promise.race([opened, stuck]);
        } finally {
            clearTimeout(timer);
        }
    };
}
