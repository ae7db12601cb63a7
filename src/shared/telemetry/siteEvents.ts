import type { Telemetry } from "./Telemetry";

/** The runs of sites each telemetry has seen fail and not yet seen succeed (in this process), by run and site. */
const failing = new WeakMap<Telemetry, Set<string>>();

/**
 * A site's run failing and recovering. `site.recovered` is recorded when a run of a site
 * succeeds after this process saw the same run (the intake sweep, the reaper…) of it fail: a run on another instance, or after a restart,
 * recovers without it (the `site.failed` records say when the failures stopped).
 */
export const siteEvents = {
    failed(telemetry: Telemetry | undefined, site: string, run: string, reason: string): void {
        if (!telemetry) return;
        failingOf(telemetry).add(runOf(site, run));
        telemetry.event("site.failed", { site, run, reason });
    },

    succeeded(telemetry: Telemetry | undefined, site: string, run: string): void {
        if (!telemetry || !failingOf(telemetry).delete(runOf(site, run))) return;
        telemetry.event("site.recovered", { site, run });
    },
};

function failingOf(telemetry: Telemetry): Set<string> {
    let sites = failing.get(telemetry);
    if (!sites) failing.set(telemetry, (sites = new Set()));
    return sites;
}

function runOf(site: string, run: string): string {
    return JSON.stringify([run, site]);
}
