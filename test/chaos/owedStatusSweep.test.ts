import { describe, expect, it } from "vitest";
import { sweepLineKind, sweepUntilClean, type SweepingHost } from "../../tools/chaos/owedStatusSweep";

/** A host whose sweeps end `endsAfterPolls` polls after they are fired; the first `failing` of them fail a site. */
function fakeHost(endsAfterPolls: number, failing = 0): SweepingHost & { fired: number } {
    const ended = { ended: 0, siteFailures: 0 };
    const running: number[] = [];
    return {
        fired: 0,
        async fire() {
            this.fired += 1;
            running.push(endsAfterPolls);
        },
        sweepsEnded() {
            for (let i = running.length - 1; i >= 0; i--) {
                running[i]! -= 1;
                if (running[i]! > 0) continue;
                running.splice(i, 1);
                if (ended.ended < failing) ended.siteFailures += 1;
                ended.ended += 1;
            }
            return { ...ended };
        },
    };
}

const noWait = async () => undefined;

// Chaos seed 26120211, schedule 451 (seed 2986216554): the locked-row sweep, waiting on a tight shared budget, made no
// call for the harness's quiet period, so the audit ran before the sweep wrote the owed Done or named the locked row.
describe("the harness's sweep for owed statuses (regression: audited while the sweep still waited on the budget)", () => {
    it("waits until the fired sweep has ended, however long it makes no call", async () => {
        const host = fakeHost(40);
        expect(await sweepUntilClean(host, { sleep: noWait })).toEqual({ fired: 1, clean: true });
        expect(host.fired).toBe(1);
    });

    it("fires again when a site failed in the sweep, as the timer would, up to its tries", async () => {
        expect(await sweepUntilClean(fakeHost(3, 1), { sleep: noWait })).toEqual({ fired: 2, clean: true });
        expect(await sweepUntilClean(fakeHost(3, 5), { sleep: noWait, tries: 3 })).toEqual({ fired: 3, clean: false });
    });

    // Chaos seed 26120302, schedule 64 (seed 1960969656): after a tight-budget schedule and a host restart the shared
    // budget refused the endgame's sweeps their first call (each would have waited past its deadline); the harness's
    // answer sweep was fired once and not waited for, and the audit found a typed "In progress" never put right. The
    // answer sweep now goes through sweepUntilClean too, which fires a failed sweep again only after a pause.
    it("regression chaos seed 26120302 schedule 64 answer sweep refused by the budget: pauses, doubling, before firing a failed sweep again", async () => {
        const slept: number[] = [];
        const sleep = async (ms: number) => void slept.push(ms);
        const host = fakeHost(1, 3);
        expect(await sweepUntilClean(host, { sleep, pollMs: 200, pauseMs: 1_000 })).toEqual({ fired: 4, clean: true });
        expect(slept.filter((ms) => ms !== 200)).toEqual([1_000, 2_000, 4_000]);
    });

    it("gives up on a sweep that never ends after its time, and says it was not clean", async () => {
        expect(await sweepUntilClean(fakeHost(Number.POSITIVE_INFINITY), { sleep: noWait, tries: 1, perSweepMs: 1_000, pollMs: 100 })).toEqual({ fired: 1, clean: false });
    });

    it("reads the local host's lines: a sweep's end and a site's failure", () => {
        expect(sweepLineKind("[2026-12-02T17:29:44.800Z] Information Functions.intakeSweep [964a] Executed 'Functions.intakeSweep' (Succeeded, Id=964a, Duration=812ms)")).toBe("ended");
        expect(sweepLineKind("[2026-12-02T17:29:44.800Z] Error Functions.intakeSweep [964a] Executed 'Functions.intakeSweep' (Failed, Id=964a, Duration=812ms)")).toBe("ended");
        expect(
            sweepLineKind(
                "[2026-12-02T17:29:44.800Z] Error Functions.intakeSweep [964a] intake sweep: site default failed: Smartsheet getFolderChildren got no answer: ENOTSENT (the rate limit would hold this request back past its deadline); the other sites carry on",
            ),
        ).toBe("siteFailed");
        expect(sweepLineKind("Executed 'Functions.reaper' (Succeeded, Id=1, Duration=3ms)")).toBeUndefined();
    });
});
