import { z } from "zod";
import { JobKeyParts, type JobKey } from "./JobRow";

/** The provisioning queue's message: keys only, everything else lives in the job row. */
const ProvisionMessage = z.strictObject({ v: z.literal(1), jobKey: JobKeyParts });
type ProvisionMessage = z.infer<typeof ProvisionMessage>;

export function provisionMessage(jobKey: JobKey): string {
    return JSON.stringify({ v: 1, jobKey: { pk: jobKey.pk, rk: jobKey.rk } } satisfies ProvisionMessage);
}

/** Accepts what a queue trigger hands over: the parsed JSON object, or its text. */
export function parseProvisionMessage(entry: unknown): { ok: true; message: ProvisionMessage } | { ok: false; problem: string } {
    let value = entry;
    if (typeof entry === "string") {
        try {
            value = JSON.parse(entry);
        } catch {
            return { ok: false, problem: "not JSON" };
        }
    }
    const parsed = ProvisionMessage.safeParse(value);
    return parsed.success ? { ok: true, message: parsed.data } : { ok: false, problem: z.prettifyError(parsed.error).replace(/\n/g, "; ") };
}
