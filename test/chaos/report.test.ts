import { expect, it } from "vitest";
import { describeOutcome } from "../../tools/chaos/report";
import { inert, RAW_CONTROL } from "../../tools/chaos/inert";
import { HOSTILE_FRAGMENTS, planSchedule } from "../../tools/chaos/plan";

it("prints a failing schedule's findings, plan, journal and host log inert: no raw control, bidi or invisible character, no forged line", () => {
    const plan = planSchedule(1, { products: 2 });
    plan.products[0] = { ...plan.products[0]!, name: `Pump${HOSTILE_FRAGMENTS.join("")}` };
    const text = describeOutcome(
        0,
        {
            kind: "audited",
            plan,
            result: { findings: [{ category: "silent", subject: `IND-1${HOSTILE_FRAGMENTS[0]}`, detail: `said ${HOSTILE_FRAGMENTS[2]}` }], states: { done: 0, parked: 1, rejected: 0, open: 0 } },
            journal: [`+1ms typeStatus: failed (${HOSTILE_FRAGMENTS[4]})`],
            hostLog: [`[host 1] job 1-2 new → queued (IND-1 Pump${HOSTILE_FRAGMENTS[1]}${HOSTILE_FRAGMENTS[5]})`],
            seconds: 1,
        },
        2,
    );
    const lines = text.split("\n");
    expect(lines.filter((line) => RAW_CONTROL.test(line))).toEqual([]);
    expect(lines.filter((line) => line.trimStart().startsWith("FORGED-LINE"))).toEqual([]);
    expect(text).toContain("\\u{1B}]0;pwned\\u{7}");
    expect(text).toContain("\\u{202E}gnp.exe");
});

it("keeps emoji with their joiners and tabs, and escapes a lone joiner", () => {
    expect(inert("Field Lab 👩‍🔬\tok")).toBe("Field Lab 👩‍🔬\tok");
    expect(inert("Zero\u200DWidth\u200B")).toBe("Zero\\u{200D}Width\\u{200B}");
});

it("summarises a schedule's convergence: the version, and how many products converged, parked, or were lost", () => {
    const plan = planSchedule(1, { products: 2 });
    const text = describeOutcome(
        3,
        {
            kind: "audited",
            plan,
            result: { findings: [], states: { done: 2, parked: 0, rejected: 0, open: 0 }, convergence: { targets: ["aaaaaaaaaaaaaaaaaaaa"], converged: 1, parked: 1, lost: 0, unparked: 1 } },
            journal: [],
            hostLog: [],
            seconds: 1,
        },
        2,
    );
    expect(text).toMatch(/ — ok \(done 2, parked 0, rejected 0; convergence to a{20}: converged 1, parked 1, lost 0, unparked with a decision 1\)$/);
});
