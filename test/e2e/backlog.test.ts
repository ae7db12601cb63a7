import { describe, expect, it } from "vitest";
import { useE2E } from "../helpers/e2e";
import { inspectProduct } from "../helpers/inspectProduct";
import { copyCalls, intake, jobIn, startRecoveryE2E, transitions } from "../helpers/recoveryKit";

/**
 * A burst, with time shrunk as in FAST_RECOVERY (a 12 s window, the reaper every 2 s, the rate
 * limit counted in 15 s): more products approved at once than the workers can take, each copy
 * slow, the calls paced by this process and the token's shared budget. Work waits in the
 * activity queue longer than the window without any worker touching its row.
 * Bigger bursts by hand: `BACKLOG_PRODUCTS=24 npx vitest run test/e2e/backlog.test.ts`.
 */
const PRODUCTS = Number(process.env.BACKLOG_PRODUCTS ?? 8);
const BURST = {
    SMARTSHEET_REQUESTS_PER_MINUTE: "240",
    AzureFunctionsJobHost__extensions__durableTask__maxConcurrentActivityFunctions: "4",
};

describe("a backlog is not a death, end to end", { timeout: 180_000 }, () => {
    const stack = useE2E(startRecoveryE2E);

    it(`${PRODUCTS} products approved at once drain behind slow copies with 0 take-overs and 0 parks`, async () => {
        const e2e = await stack.start({ only: [], settings: BURST });
        e2e.sim.core.configure({ latencyMs: { copySheet: 1_500 } });
        const rows = intake(e2e);
        const keys: string[] = [];
        for (let n = 1; n <= PRODUCTS; n++) keys.push(await rows.add(`BLG-${n}`, `Burst Product ${n}`, n % 2 ? "Industrial" : "Consumer"));

        await e2e.fire("intakeSweep");
        for (const key of keys) expect(await jobIn(e2e, key, "done", 150_000)).toMatchObject({ attempt: 1, recoveries: 0 });

        expect(transitions(e2e, /recovery|→ parked/)).toEqual([]);
        const waiting = e2e.host.logs.map((line) => Number(/reaper: .* (\d+) waiting in a backlog/.exec(line)?.[1] ?? 0));
        // The burst did put jobs behind the window: the reaper saw them waiting and left them alone.
        expect(Math.max(...waiting)).toBeGreaterThan(0);
        for (let n = 1; n <= PRODUCTS; n++) expect(inspectProduct(e2e.sim.core.state(), `BLG-${n}`).sheets).toHaveLength(7);
        expect(copyCalls(e2e)).toBe(7 * PRODUCTS);
        // The calls went through the token's shared budget, which said what share it took in the log.
        expect(e2e.host.logs.some((line) => /Smartsheet budget of token [0-9a-f]{16}, slices \d+–\d+ of 0\.375 s: leased \d+ in \d+ leases/.test(line))).toBe(true);
    });
});
