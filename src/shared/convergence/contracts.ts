import { createHash } from "node:crypto";
import { z } from "zod";
import { JobKeyParts, type JobKey } from "../jobs/JobRow";
import { StepInput } from "../provisioning/contracts";
import { TemplateVersion } from "./planProducts";

/**
 * What the convergence orchestrations and their steps pass each other: keys only (a job, a
 * template version, a site's name); everything else is read from the job row and the stored
 * template versions.
 */

export const ConvergenceNames = {
    /** One site's products brought to one version, a few at a time. */
    fleet: "convergeFleet",
    /** One product brought to one version. */
    product: "convergeProduct",
} as const;

/** The fleet's input: which products (a site's, or one of them) go to which version. */
export const FleetInput = z.object({
    site: z.string().min(1),
    to: TemplateVersion,
    product: z.string().optional(),
    requestedBy: z.string().optional(),
});
export type FleetInput = z.infer<typeof FleetInput>;

/** The fleet's one step: the products it takes, each claimed on its job row for its child instance. */
export const ClaimInput = FleetInput.extend({ fleetInstanceId: z.string().min(1) });
export type ClaimInput = z.infer<typeof ClaimInput>;

export const ClaimedConvergence = z.object({ jobKey: JobKeyParts, instanceId: z.string().min(1) });
export type ClaimedConvergence = z.infer<typeof ClaimedConvergence>;

export const ClaimOutcome = z.object({
    claimed: z.array(ClaimedConvergence),
    /** Products left alone, and why (on the version already, another run at it, parked for a decision). */
    leftAlone: z.array(z.object({ jobKey: z.string(), productCode: z.string(), why: z.string() })),
});
export type ClaimOutcome = z.infer<typeof ClaimOutcome>;

/** One product's orchestration: its job and the version (keys only). */
export const ConvergeInput = z.object({ jobKey: JobKeyParts, to: TemplateVersion });
export type ConvergeInput = z.infer<typeof ConvergeInput>;

/** Every step of a product's convergence: the job, this instance (the row's `convergence.instanceId` must be it). */
export const ConvergeStepInput = StepInput;
export type ConvergeStepInput = z.infer<typeof ConvergeStepInput>;

export const ConvergeOutcome = z.discriminatedUnion("outcome", [
    z.object({
        outcome: z.literal("done"),
        /** Changes still to carry out (after `applyConvergence`: none). */
        pending: z.number().int().nonnegative(),
        /** Conflicts without a decision: the product parks. */
        undecided: z.number().int().nonnegative(),
        /** The audit wants to wait for writes that may still land until then. */
        waitUntil: z.string().optional(),
    }),
    /** The product is on the version already, or another instance owns its convergence now. */
    z.object({ outcome: z.literal("superseded"), reason: z.string() }),
    /** A person must act (a conflict, an audit that failed, a change apply cannot make): the product parks with this reason. */
    z.object({ outcome: z.literal("permanent"), reason: z.string() }),
]);
export type ConvergeOutcome = z.infer<typeof ConvergeOutcome>;

/** The product orchestration's custom status, as Durable Functions Monitor shows it. */
export interface ConvergeStatus {
    state: "converging" | "parked" | "done" | "superseded";
    jobKey: string;
    to: string;
    parkReason?: string;
}

/**
 * The instance converging one product to one version, attempt `attempt` (an unpark, or an apply
 * after a run stalled, takes the next): derived, never random, so applying twice starts nothing new.
 */
export function convergeInstanceId(key: JobKey, version: string, attempt: number): string {
    return `converge-${key.pk}-${key.rk}-${version}-a${attempt}`;
}

/**
 * The instance converging a site's products (or one of them) to one version. Names are kept
 * readable where they can be; a digest of the exact site and product keeps two names that read
 * alike apart.
 */
export function fleetInstanceId(site: string, version: string, product?: string): string {
    const readable = (text: string) => text.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 40);
    const digest = createHash("sha256").update(JSON.stringify([site, product ?? null])).digest("hex").slice(0, 8);
    return `converge-fleet-${readable(site)}-${version}${product === undefined ? "" : `-${readable(product)}`}-${digest}`;
}
