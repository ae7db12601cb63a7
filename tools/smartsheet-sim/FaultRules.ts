/** What every fault rule has: how many matching calls it applies to, after letting `skip` through. */
interface CountedRule {
    times: number;
    skip: number;
}

export type ActiveRule<Rule extends CountedRule> = Rule & { remaining: number; skipRemaining: number };

/** Fault rules in order; each call consumes at most one, the first that matches it. */
export class FaultRules<Rule extends CountedRule, Call> {
    private rules: ActiveRule<Rule>[] = [];

    constructor(private readonly matches: (rule: Rule, call: Call) => boolean) {}

    /** Replaces every active rule. */
    replace(rules: readonly Rule[]): ActiveRule<Rule>[] {
        this.rules = rules.map((rule) => ({ ...rule, remaining: rule.times, skipRemaining: rule.skip }));
        return this.list();
    }

    list(): ActiveRule<Rule>[] {
        return this.rules.map((rule) => ({ ...rule }));
    }

    /** The rule this call triggers, if any. */
    take(call: Call): Rule | undefined {
        for (const rule of this.rules) {
            if (!this.matches(rule, call)) continue;
            if (rule.skipRemaining > 0) {
                rule.skipRemaining -= 1;
                continue;
            }
            rule.remaining -= 1;
            if (rule.remaining <= 0) this.rules = this.rules.filter((other) => other !== rule);
            return rule;
        }
        return undefined;
    }

    clear(): void {
        this.rules = [];
    }
}
