import { expect, it } from "vitest";
import { planSchedule, type Plan } from "../../tools/chaos/plan";

const plans: Plan[] = Array.from({ length: 400 }, (_, seed) => planSchedule(seed + 1, { products: 3 }));
const withWebhooks = plans.filter((plan) => plan.webhooks);

it("turns Smartsheet's webhooks on in about half the schedules, and draws every webhook fault among them", () => {
    expect(withWebhooks.length).toBeGreaterThan(150);
    expect(withWebhooks.length).toBeLessThan(250);
    const kinds = new Set(withWebhooks.flatMap((plan) => plan.steps.map((step) => step.action.kind)));
    for (const kind of ["callbackFaults", "disableIntakeWebhook", "forgedCallback"]) expect(kinds).toContain(kind);
    const callbackFaults = new Set(withWebhooks.flatMap((plan) => plan.steps.flatMap((step) => (step.action.kind === "callbackFaults" ? step.action.rules.map((rule) => rule.kind) : []))));
    expect([...callbackFaults].sort()).toEqual(["delay", "drop", "duplicate", "reorder"]);
    for (const plan of plans.filter((candidate) => !candidate.webhooks)) {
        expect(plan.steps.some((step) => ["callbackFaults", "disableIntakeWebhook", "forgedCallback"].includes(step.action.kind))).toBe(false);
    }
});

it("lets the webhook start a schedule with webhooks (no sweep fired at its start), and keeps one valid request, untouched by the plan, for approval at rest", () => {
    for (const plan of plans) {
        const atRest = plan.products.flatMap((product, index) => (product.typedAtRest ? [index] : []));
        if (!plan.webhooks) {
            expect(atRest).toEqual([]);
            expect(plan.steps[0]).toEqual({ atMs: 0, action: { kind: "sweep", overlapping: false } });
            continue;
        }
        expect(atRest).toEqual([plan.products.length - 1]);
        const probe = plan.products[atRest[0]!]!;
        expect(probe.valid).toBe(true);
        expect(plan.products.filter((product) => product.code === probe.code)).toHaveLength(1);
        expect(plan.steps.some((step) => "product" in step.action && step.action.product === atRest[0])).toBe(false);
    }
});

it("converges in a fair share of the schedules, changes the template before the apply, and changes it again only after every apply", () => {
    const converging = plans.filter((plan) => plan.convergence);
    expect(converging.length).toBeGreaterThan(120);
    expect(converging.length).toBeLessThan(240);
    const kinds = new Set(converging.flatMap((plan) => [...plan.convergence!.before, ...plan.convergence!.steps.map((step) => step.action)].map((action) => action.kind)));
    for (const kind of ["customerEditsProduct", "changeTemplate", "convergeApply", "editTemplateAgain", "faults", "killHost", "restartAzurite", "duplicateMessages"]) expect(kinds).toContain(kind);
    expect(new Set(converging.map((plan) => plan.convergence!.decision))).toEqual(new Set(["keep-product", "take-template", undefined]));
    for (const plan of converging) {
        const { before, steps } = plan.convergence!;
        expect(before.at(-1)!.kind).toBe("changeTemplate");
        expect(steps[0]).toMatchObject({ atMs: 0, action: { kind: "convergeApply" } });
        const lastApply = Math.max(...steps.filter((step) => step.action.kind === "convergeApply").map((step) => step.atMs));
        for (const step of steps.filter((candidate) => candidate.action.kind === "editTemplateAgain")) expect(step.atMs).toBeGreaterThan(lastApply);
    }
    // Without convergence the plans are the ones drawn before it joined: the same draws, in the same order.
    for (const plan of plans.slice(0, 50)) {
        const { convergence: _, ...rest } = plan;
        expect(planSchedule(plan.seed, { products: 3, convergence: false })).toEqual(rest);
    }
});
