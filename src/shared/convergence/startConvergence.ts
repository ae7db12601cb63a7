import { z } from "zod";
import type { Orchestrations } from "../orchestration/Orchestrations";
import { LIVE_STATUSES } from "../orchestration/Orchestrations";
import { hasHiddenCharacters } from "../text/logText";
import { ConvergenceNames, fleetInstanceId, type FleetInput } from "./contracts";
import { analyseTargets, ConvergePlanQuery, sitesAndTarget, unknownProduct, type ConvergeDeps, type ConvergePlans } from "./planProducts";

/** The body of `POST /api/converge`: the same choice as the plan's, and who asks (kept on each job row). */
export const ConvergeApplyRequest = ConvergePlanQuery.extend({
    by: z
        .string()
        .trim()
        .min(1)
        .max(100)
        .refine((text) => !hasHiddenCharacters(text), "must not hold control or invisible formatting characters")
        .optional(),
}).strict();
export type ConvergeApplyRequest = z.infer<typeof ConvergeApplyRequest>;

export interface StartedFleet {
    site: string;
    version: string;
    source: "now" | "stored";
    instanceId: string;
    /** False: that fleet's instance is running already, and nothing new was started. */
    started: boolean;
}

export interface ConvergeApplyAnswer {
    fleets: StartedFleet[];
    sitesLeftOut: ConvergePlans["sitesLeftOut"];
}

/**
 * Starts the convergence of the products asked for: per site, one fleet instance (its id derived
 * from site, version and product, so applying twice while it runs starts nothing new) that claims
 * each product on its job row and converges them a few at a time. The version is resolved here,
 * once (`to`, or the template folder as it is now, analysed and stored), so every product of a
 * fleet goes to the same one. Bad input is a `ConvergeInputError` before anything is started.
 */
export async function startConvergence(deps: ConvergeDeps & { orchestrations: Orchestrations }, request: ConvergeApplyRequest): Promise<ConvergeApplyAnswer> {
    const { sites, asked, stored, sitesLeftOut } = await sitesAndTarget(deps, request);
    if (request.product !== undefined) {
        let found = false;
        for (const site of sites) {
            const listing = await deps.jobs.listByState(String(site.intakeSheetId), "done");
            if (listing.found.some(({ row }) => row.productCode === request.product)) found = true;
        }
        if (!found) throw await unknownProduct(deps, sites, request.product);
    }
    const { targets } = await analyseTargets(deps, sites, asked, stored.found, new Map(), sitesLeftOut);
    const fleets: StartedFleet[] = [];
    for (const target of targets.values()) {
        const instanceId = fleetInstanceId(target.site, target.version, request.product);
        const input: FleetInput = { site: target.site, to: target.version, product: request.product, requestedBy: request.by };
        const existing = await deps.orchestrations.status(instanceId);
        let started = false;
        if (!existing || !LIVE_STATUSES.includes(existing.runtimeStatus)) {
            try {
                await deps.orchestrations.start(ConvergenceNames.fleet, instanceId, input);
                started = true;
            } catch (error) {
                // The host refuses a start on a live id: a concurrent apply won.
                const now = await deps.orchestrations.status(instanceId);
                if (!now || !LIVE_STATUSES.includes(now.runtimeStatus)) throw error;
            }
        }
        deps.log.info(`convergence of site ${target.site} to ${target.version}${request.product ? ` (product ${request.product})` : ""}: ${started ? "started" : "running already"} as ${instanceId}`);
        fleets.push({ site: target.site, version: target.version, source: target.source, instanceId, started });
    }
    return { fleets, sitesLeftOut };
}
