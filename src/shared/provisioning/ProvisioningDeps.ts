import type { AlertChannel } from "../alerts/AlertChannel";
import type { SiteOutages } from "../alerts/SiteOutages";
import type { AppWideSettings } from "../config";
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
    timing: {
        /** After an ambiguous write: how long to wait before looking whether it happened. */
        settleMs: number;
        /** How long a claim protects a write in flight: the whole time one write can take, plus clock skew. */
        claimTtlMs: number;
        /** How often a run waiting for another run's claim looks at the row again. */
        claimPollMs: number;
        /** How long after its claim an unanswered write may still land in Smartsheet. */
        lateWriteHorizonMs: number;
        /** The largest clock difference (between instances, or Smartsheet and us) allowed for. */
        clockSkewMs: number;
    };
}
