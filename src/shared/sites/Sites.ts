import type { SiteConfig } from "../config";
import type { JobKey } from "../jobs/JobRow";
import type { DeclaresFailureKind } from "../failures";
import type { SmartsheetPort } from "../smartsheet/SmartsheetPort";

/**
 * One customer's site: its intake sheet, template folder, products folder and Filing Index,
 * and a Smartsheet client on its own token (with that token's rate budget). A job belongs to
 * the site whose intake sheet its partition key names.
 */
export interface Site {
    readonly name: string;
    readonly intakeSheetId: number;
    readonly templateFolderId: number;
    readonly productsFolderId: number;
    readonly filingIndexSheetId: number;
    /** The app setting its token comes from: what to fix when Smartsheet refuses the token. */
    readonly tokenSetting: string;
    /** Where Smartsheet sends this site's webhook callbacks; none: the site runs on timer sweeps alone. */
    readonly webhookBaseUrl?: string;
    readonly smartsheet: SmartsheetPort;
}

/**
 * A job whose intake sheet belongs to no configured site (its site was taken out of SITES while
 * the job was open). Permanent: the job parks, and nothing is written to Smartsheet for it.
 */
export class NoSiteError extends Error implements DeclaresFailureKind {
    readonly failureKind = "permanent" as const;

    constructor(intakeSheetId: string, known: readonly Site[]) {
        super(
            `Intake sheet ${intakeSheetId} belongs to no site this app serves (${known.map((site) => `${site.name}: ${site.intakeSheetId}`).join(", ")}); ` +
                `add its site back to SITES, then unpark the job.`,
        );
        this.name = "NoSiteError";
    }
}

/** Every site the app serves, by name and by intake sheet. Built once, in the composition root. */
export class Sites {
    private readonly byIntakeSheet: ReadonlyMap<string, Site>;

    constructor(private readonly sites: readonly Site[]) {
        this.byIntakeSheet = new Map(sites.map((site) => [String(site.intakeSheetId), site]));
    }

    all(): readonly Site[] {
        return this.sites;
    }

    named(name: string): Site | undefined {
        return this.sites.find((site) => site.name === name);
    }

    ofIntakeSheet(intakeSheetId: string | number): Site | undefined {
        return this.byIntakeSheet.get(String(intakeSheetId));
    }

    /** The job's site, named by its partition key; a `NoSiteError` when no site has that intake sheet. */
    ofJob(key: JobKey): Site {
        const site = this.ofIntakeSheet(key.pk);
        if (!site) throw new NoSiteError(key.pk, this.sites);
        return site;
    }
}

/**
 * The sites of the configuration, each with a client from `clientFor`, called once per token
 * (with the name of the first setting that holds it): sites that share a token share its client,
 * and so its pacing and its budget.
 */
export function sitesFrom(configs: readonly SiteConfig[], clientFor: (token: string, tokenSetting: string) => SmartsheetPort): Sites {
    const clients = new Map<string, SmartsheetPort>();
    return new Sites(
        configs.map(({ token, ...site }) => {
            let smartsheet = clients.get(token);
            if (!smartsheet) clients.set(token, (smartsheet = clientFor(token, site.tokenSetting)));
            return { ...site, smartsheet };
        }),
    );
}
