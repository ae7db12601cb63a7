import { sweepSite, type SweepDeps } from "../intake/intakeSweep";
import { forEachSite } from "../sites/eachSite";
import { SweepRequestMessage } from "./SweepRequests";

/**
 * The sweep a webhook callback asked for: one site's routine sweep (a site that fails is logged
 * and alerted as the timer's sweep would; the timer's sweep is the net under it). A message that
 * does not parse, or names a site no longer served, is logged and dropped.
 */
export async function sweepRequested(deps: SweepDeps, message: unknown): Promise<void> {
    const request = SweepRequestMessage.safeParse(message);
    if (!request.success) {
        deps.log.error(`sweep request ignored, not understood: ${JSON.stringify(message)?.slice(0, 200)}`);
        return;
    }
    const site = deps.sites.named(request.data.site);
    if (!site) {
        deps.log.warn(`sweep request for site ${request.data.site} ignored: no site of that name is in SITES any more`);
        return;
    }
    await forEachSite(deps, "webhook sweep", (one) => sweepSite(deps, one, "webhook"), [site]);
}
