/** What ops is told of a parked job: enough to act without digging. Customer text in it is data, never markup. */
export interface ParkAlert {
    event: "job.parked";
    /** The customer's site the job belongs to (absent when its intake sheet belongs to none). */
    site?: string;
    jobKey: string;
    productCode: string;
    productName: string;
    stage?: string;
    reason?: string;
    recoveries: number;
    parkedAt?: string;
}

/** A whole site failed a run (its token refused, its template folder gone…): none of its work moves until a person acts. */
export interface SiteFailureAlert {
    event: "site.failed";
    site: string;
    /** Which run failed for it: the intake sweep, the reaper, the reconciliation. */
    run: string;
    reason: string;
    failedAt: string;
}

/** Smartsheet refused to write one intake row's status (locked, no permission to it): the sweep goes on and retries it with back-off. */
export interface IntakeRowRefusedAlert {
    event: "intake.rowRefused";
    site: string;
    jobKey: string;
    intakeSheetId: string;
    intakeRowId: string;
    /** The status the row is owed. */
    status: string;
    errorCode?: number;
    /** What Smartsheet said. */
    message: string;
    refusedAt: string;
}

/** An intake sheet has open or parked jobs but belongs to no site in SITES: nothing moves them until a person acts. */
export interface OrphanedJobsAlert {
    event: "jobs.orphaned";
    intakeSheetId: string;
    activeJobs: number;
    reason: string;
    foundAt: string;
}

/** A site that failed runs again: its outage (one `site.failed` alert) is over. */
export interface SiteRecoveredAlert {
    event: "site.recovered";
    site: string;
    /** The run that succeeded again. */
    run: string;
    /** When the outage began (its first failed run). */
    failedAt: string;
    recoveredAt: string;
}

/** A site's intake webhook cannot be kept enabled by the app (Smartsheet disabled it for good, or refuses its callback URL): the site runs on timer sweeps until a person acts. */
export interface WebhookAlert {
    event: "webhook.disabled";
    site: string;
    /** Smartsheet's id of the webhook (absent when it could not be created). */
    webhookId?: number;
    /** Its status (`DISABLED_APP_REVOKED`…), or `REFUSED` when Smartsheet refused to create or enable it. */
    status: string;
    reason: string;
    foundAt: string;
}

/** A product's convergence to a template version stopped for a person: its conflicts (or what went wrong) named. */
export interface ConvergenceParkAlert {
    event: "convergence.parked";
    site?: string;
    jobKey: string;
    productCode: string;
    productName: string;
    /** The template version it was being brought to. */
    to: string;
    reason: string;
    parkedAt: string;
}

export type Alert = WebhookAlert | ParkAlert | ConvergenceParkAlert | SiteFailureAlert | SiteRecoveredAlert | IntakeRowRefusedAlert | OrphanedJobsAlert;
