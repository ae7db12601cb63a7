import { sweepSite, type SweepDeps } from "../intake/intakeSweep";
import type { DeclaresFailureKind } from "../failures";
import { forEachSite } from "../sites/eachSite";
import { SweepRequestMessage } from "./SweepRequests";

/**
 * The sweep a webhook callback asked for: one site's routine sweep (a site that fails is logged
 * and alerted as the timer's sweep would). A sweep that failed for a reason that passes (the
 * shared budget spent, Smartsheet's 5xx, storage unreachable) is asked for again: the queue
 * delivers the request once more, so the approval waits seconds, not the timer's half hour; the
 * timer's sweep stays the net under it. A message that does not parse, or names a site no longer
 * served, is logged and dropped.
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
    const { failed } = await forEachSite(deps, "webhook sweep", (one) => sweepSite(deps, one, "webhook"), [site]);
    const passing = failed.find((failure) => failure.kind === "transient" || failure.kind === "ambiguous");
    if (passing) throw new WebhookSweepToRetryError(site.name, passing.reason);
}

/** Thrown to the queue trigger, which delivers the sweep request again after its visibility timeout. */
export class WebhookSweepToRetryError extends Error implements DeclaresFailureKind {
    override readonly name = "WebhookSweepToRetryError";
    readonly failureKind = "transient";

    constructor(site: string, reason: string) {
        super(`the webhook sweep of site ${site} failed (${reason}); the queue delivers its request again, and the timer's sweep stays the net under it`);
    }
}
