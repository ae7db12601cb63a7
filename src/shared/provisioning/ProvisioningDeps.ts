import type { AlertChannel } from "../alerts/AlertChannel";
import type { SiteOutages } from "../alerts/SiteOutages";
import type { AppWideSettings, Timing } from "../config";
import type { JobStore } from "../jobs/JobStore";
import type { Logger } from "../logger";
import type { Sites } from "../sites/Sites";
import type { Telemetry } from "../telemetry/Telemetry";
import type { BlueprintStore } from "./BlueprintStore";
import type { SharedListings } from "./SharedListings";

/** Everything the provisioning steps touch, injected (composition.ts builds the real one). */
export interface ProvisioningDeps {
    config: AppWideSettings;
    /** Every site served; a step finds its own from the job (`StepContext.site`). */
    sites: Sites;
    jobs: JobStore;
    blueprints: BlueprintStore;
    log: Logger;
    /** Where park alerts go; none configured: the error line in the log is the alert. */
    alerts?: AlertChannel;
    /** Where the job's events and metrics go (docs/telemetry.md); none: nothing is recorded. */
    telemetry?: Telemetry;
    /** Each site's open outage (its own partition of the Jobs table): `site.failed` once per outage, then `site.recovered`. */
    siteOutages?: SiteOutages;
    now(): Date;
    sleep(ms: number): Promise<void>;
    /** Folder listings the looks of this process's steps share (one per process). */
    listings: SharedListings;
    /** A fresh id for each execution of an activity. */
    newRunId(): string;
    timing: Omit<Timing, "writeLifetimeMs"> & {
        /** How often a run waiting for another run's claim looks at the row again. */
        claimPollMs: number;
    };
}
