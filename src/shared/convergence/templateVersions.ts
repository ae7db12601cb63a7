import { z } from "zod";
import { ACTIVE_STATES } from "../jobs/JobRow";
import type { InvalidJob } from "../jobs/JobStore";
import { ConvergeInputError } from "./ConvergeInputError";
import type { ConvergeDeps } from "./planProducts";
import { compareText } from "./TemplateShape";

export const TemplateVersionsQuery = z.object({
    site: z.preprocess((value) => (value === "" || value === null ? undefined : value), z.string().max(40, "a site's name is at most 40 characters").optional()),
});
export type TemplateVersionsQuery = z.infer<typeof TemplateVersionsQuery>;

export interface VersionCount {
    version: string;
    /** Absent for a version job rows name that is not stored (any more). */
    builtAt?: string;
    templateFolderId?: number;
    stored: boolean;
    /** Its blueprint records the template's shape: products can be planned from and to it. */
    shaped: boolean;
    /** Sites whose jobs name it, or whose template folder it is of. */
    sites: string[];
    /** Done products on it. */
    products: number;
    /** Jobs provisioning from it now (queued, running, parked). */
    inProgress: number;
    /** Products being brought to it now (claimed or applying). */
    converging: number;
    /** Products parked on their way to it, waiting for a decision. */
    parked: number;
}

export interface TemplateVersions {
    /** Newest first (by when the version was analysed); versions not stored last. */
    versions: VersionCount[];
    /** Done products whose rows name no version (provisioned before versions were recorded), per site. */
    unversioned: Array<{ site: string; products: number }>;
    invalidJobs: InvalidJob[];
}

/**
 * Per template version, how many products are on it (done jobs whose row names it), how many
 * jobs are provisioning from it, and how many products are converging to it or parked on the way,
 * from the Jobs table alone (no Smartsheet call): of every site, or of the one named.
 */
export async function templateVersions(deps: Pick<ConvergeDeps, "jobs" | "blueprints" | "sites">, query: TemplateVersionsQuery): Promise<TemplateVersions> {
    const site = query.site === undefined ? undefined : deps.sites.named(query.site);
    if (query.site !== undefined && !site) throw new ConvergeInputError(`There is no site "${query.site}"; the sites are ${deps.sites.all().map((known) => known.name).join(", ")}.`);
    const sites = site ? [site] : deps.sites.all();
    const folders = new Set(sites.map((known) => known.templateFolderId));
    const stored = (await deps.blueprints.list()).found;
    const counts = new Map<string, VersionCount>();
    const countOf = (version: string): VersionCount => {
        let count = counts.get(version);
        if (!count) {
            const blueprint = stored.find((known) => known.version === version);
            count = {
                version,
                ...(blueprint ? { builtAt: blueprint.builtAt, templateFolderId: blueprint.templateFolderId } : {}),
                stored: blueprint !== undefined,
                shaped: blueprint?.shape !== undefined,
                sites: [],
                products: 0,
                inProgress: 0,
                converging: 0,
                parked: 0,
            };
            counts.set(version, count);
        }
        return count;
    };
    for (const blueprint of stored) {
        if (!folders.has(blueprint.templateFolderId)) continue;
        const count = countOf(blueprint.version);
        for (const known of sites) if (known.templateFolderId === blueprint.templateFolderId) addSite(count, known.name);
    }
    const unversioned: TemplateVersions["unversioned"] = [];
    const invalidJobs: InvalidJob[] = [];
    for (const known of sites) {
        const pk = String(known.intakeSheetId);
        const done = await deps.jobs.listByState(pk, "done");
        const active = await deps.jobs.listActive(pk, { states: ACTIVE_STATES });
        invalidJobs.push(...done.invalid, ...active.invalid);
        let without = 0;
        for (const { row } of done.found) {
            if (row.blueprintVersion === undefined) without += 1;
            else addSite(countOf(row.blueprintVersion), known.name).products += 1;
            const run = row.convergence;
            if (run && run.state !== "done") addSite(countOf(run.to), known.name)[run.state === "parked" ? "parked" : "converging"] += 1;
        }
        for (const { row } of active.found) if (row.blueprintVersion !== undefined) addSite(countOf(row.blueprintVersion), known.name).inProgress += 1;
        if (without > 0) unversioned.push({ site: known.name, products: without });
    }
    const versions = [...counts.values()].sort(
        (a, b) => Number(b.stored) - Number(a.stored) || compareText(b.builtAt ?? "", a.builtAt ?? "") || compareText(a.version, b.version),
    );
    return { versions, unversioned, invalidJobs };
}

function addSite(count: VersionCount, site: string): VersionCount {
    if (!count.sites.includes(site)) count.sites = [...count.sites, site].sort(compareText);
    return count;
}
