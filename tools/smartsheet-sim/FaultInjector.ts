import { z } from "zod";
import { FaultRules } from "./FaultRules";
import { SIM_OPERATIONS, type SimOperation } from "./SimOperation";

export const FAULT_KINDS = [
    "rate429",
    "error4002",
    "error4004",
    "commitThenError4002",
    "commitThenHang",
    "delay",
    "html502",
    "error1004",
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export const FaultRule = z.strictObject({
    /** An operation name, or "*" for any. */
    op: z.union([z.enum(SIM_OPERATIONS), z.literal("*")]),
    kind: z.enum(FAULT_KINDS),
    times: z.number().int().positive().default(1),
    delayMs: z.number().int().nonnegative().default(0),
    /** Matching calls let through before the rule starts to apply. */
    skip: z.number().int().nonnegative().default(0),
    /** A substring the request path, query or JSON body must contain. */
    match: z.string().min(1).optional(),
});
export type FaultRule = z.output<typeof FaultRule>;
export type FaultRuleInput = z.input<typeof FaultRule>;

export interface ActiveFault extends FaultRule {
    remaining: number;
    skipRemaining: number;
}

/** The active fault rules; each call consumes at most one. */
export class FaultInjector {
    private readonly rules = new FaultRules<FaultRule, { op: SimOperation; request: string }>(
        (rule, { op, request }) =>
            (rule.op === "*" || rule.op === op) && (rule.match === undefined || request.includes(rule.match)),
    );

    /** Replaces every active rule. */
    setRules(input: readonly FaultRuleInput[]): ActiveFault[] {
        return this.rules.replace(z.array(FaultRule).parse(input));
    }

    list(): ActiveFault[] {
        return this.rules.list();
    }

    /** The rule this call triggers, if any; `request` is the text `match` is looked for in. */
    take(op: SimOperation, request: string): FaultRule | undefined {
        return this.rules.take({ op, request });
    }

    reset(): void {
        this.rules.clear();
    }
}
