import { describe, it } from "vitest";
import { useE2E, type E2E } from "../helpers/e2e";
import { inspectProduct } from "../helpers/inspectProduct";
import { uniqueName } from "../helpers/names";
import { copyCalls, intake, job, jobIn, sheetsCopied, startRecoveryE2E, transitions } from "../helpers/recoveryKit";

// The tests run side by side, each on its own host and simulator: most of their time is the
// reaper's window and the late-write horizon passing.
describe.concurrent("recovery end to end: the patient reaper", { timeout: 180_000 }, () => {
    const stack = useE2E(startRecoveryE2E);


    /**
     * Four copies land, the other three take Smartsheet 4 s (inside one call's timeout): the
     * worker is mid-stage, with three copies in flight.
     */
    async function fourOfSeven(e2e: E2E, code: string): Promise<string> {
        e2e.sim.core.setFaults([{ op: "copySheet", kind: "delay", delayMs: 4_000, skip: 4, times: 3 }]);
        await e2e.fire("intakeSweep");
        await sheetsCopied(e2e, code, 4);
        return intake(e2e).keyOf(code);
    }

    it("four of seven: a host killed mid-copy restarts and finishes, copying nothing twice", async ({ expect, onTestFinished }) => {
        const e2e = await stack.start({ only: ["IND-1042"] }, { onTestFinished });
        const key = await fourOfSeven(e2e, "IND-1042");
        expect(inspectProduct(e2e.sim.core.state(), "IND-1042").sheets).toHaveLength(4);
        await e2e.host.kill();
        await e2e.host.start();
        const done = await jobIn(e2e, key, "done");
        const product = inspectProduct(e2e.sim.core.state(), "IND-1042");
        expect(product.sheets).toHaveLength(7);
        expect(product.folders).toHaveLength(1);
        expect(copyCalls(e2e)).toBe(7);
        expect(e2e.sim.core.calls().byOperation.createFolder).toBe(1);
        expect(e2e.sim.core.calls().byOperation.deleteSheet ?? 0).toBe(0);
        expect(done.duplicatesRemoved).toEqual([]);
        expect(product.foreignFormulas).toEqual([]);
    });

    it("four of seven, orchestration state lost with the worker: after the window the reaper finishes it from the row", async ({ expect, onTestFinished }) => {
        const e2e = await stack.start({ only: ["IND-1042"] }, { onTestFinished });
        const key = await fourOfSeven(e2e, "IND-1042");
        await e2e.host.kill();
        // A new task hub: the killed orchestration is gone; only the job row remembers the job.
        await e2e.host.start({ AzureFunctionsJobHost__extensions__durableTask__hubName: uniqueName("hub") });
        const done = await jobIn(e2e, key, "done");
        expect(done).toMatchObject({ attempt: 2, recoveries: 1 });
        expect(transitions(e2e, /running → running \(recovery 1\/2: no instance/)).toHaveLength(1);
        const product = inspectProduct(e2e.sim.core.state(), "IND-1042");
        expect(product.sheets).toHaveLength(7);
        expect(product.folders).toHaveLength(1);
        expect(copyCalls(e2e)).toBe(7);
        expect(e2e.sim.core.calls().byOperation.deleteSheet ?? 0).toBe(0);
    });

    it("an orchestration terminated by hand with its row left running is finished by the reaper", async ({ expect, onTestFinished }) => {
        const e2e = await stack.start({ only: ["CON-2201"] }, { onTestFinished });
        const key = await fourOfSeven(e2e, "CON-2201");
        const before = (await job(e2e, key))!;
        const terminated = await e2e.durable(`instances/${before.instanceId}/terminate?reason=by+hand`, { method: "POST" });
        expect(terminated.status).toBe(202);
        const done = await jobIn(e2e, key, "done");
        expect(done.attempt).toBe(2);
        expect(transitions(e2e, new RegExp(`${before.instanceId} ended Terminated`))).toHaveLength(1);
        expect(inspectProduct(e2e.sim.core.state(), "CON-2201").sheets).toHaveLength(7);
        expect(copyCalls(e2e)).toBe(7);
    });

    it("the slow copy that succeeded: a copy answered 4002 after it was made is adopted, seven sheets in all", async ({ expect, onTestFinished }) => {
        const e2e = await stack.start({ only: ["CON-2201"] }, { onTestFinished });
        e2e.sim.core.setFaults([{ op: "copySheet", kind: "commitThenError4002", skip: 2, times: 1 }]);
        await e2e.fire("intakeSweep");
        const key = intake(e2e).keyOf("CON-2201");
        await jobIn(e2e, key, "done");
        expect(inspectProduct(e2e.sim.core.state(), "CON-2201").sheets).toHaveLength(7);
        expect(copyCalls(e2e)).toBe(7);
        expect(transitions(e2e, /recovery/)).toEqual([]);
    });

    it("patience: a copy slower than the reaper's interval but inside the window is never reaped", async ({ expect, onTestFinished }) => {
        const e2e = await stack.start({
            only: ["CON-2201"],
            settings: {
                AzureFunctionsJobHost__functionTimeout: "00:00:25",
                SMARTSHEET_CALL_TIMEOUT_SECONDS: "20",
                SMARTSHEET_RATE_LIMIT_RETRY_SECONDS: "1.5",
                LATE_WRITE_HORIZON_SECONDS: "25",
                STALE_AFTER_MINUTES: "0.5",
            },
        }, { onTestFinished });
        e2e.sim.core.setFaults([{ op: "copySheet", kind: "delay", delayMs: 12_000, skip: 3, times: 1 }]);
        await e2e.fire("intakeSweep");
        const key = intake(e2e).keyOf("CON-2201");
        const done = await jobIn(e2e, key, "done");
        expect(done).toMatchObject({ attempt: 1, recoveries: 0 });
        expect(e2e.host.logs.filter((line) => /reaper: 1 active jobs, 0 without progress/.test(line)).length).toBeGreaterThanOrEqual(4);
        expect(transitions(e2e, /recovery|parked/)).toEqual([]);
        expect(await (await e2e.durable("instances/?instanceIdPrefix=provision-")).json()).toHaveLength(1);
        expect(copyCalls(e2e)).toBe(7);
    });

    it("patience: the same delay beyond the window is reaped only after the live activity has ended", async ({ expect, onTestFinished }) => {
        const e2e = await stack.start({ only: ["CON-2201"], settings: { STEP_RETRY_ATTEMPTS: "1" } }, { onTestFinished });
        // Longer than the window; the worker's call gives up after 5 s, its activity ends.
        e2e.sim.core.setFaults([{ op: "copySheet", kind: "delay", delayMs: 13_000, skip: 3, times: 1 }]);
        await e2e.fire("intakeSweep");
        const key = intake(e2e).keyOf("CON-2201");
        const done = await jobIn(e2e, key, "done");
        expect(done).toMatchObject({ attempt: 2, recoveries: 1 });
        const logs = e2e.host.logs;
        const failedCopy = logs.findIndex((line) => /Executed 'Functions\.copyTemplateSheet' \(Failed/.test(line));
        const takeover = logs.findIndex((line) => /running → running \(recovery 1\/2/.test(line));
        expect(failedCopy).toBeGreaterThanOrEqual(0);
        expect(takeover).toBeGreaterThan(failedCopy);
        // Between the two, no copy ran: the reaper took over a job nobody was working on.
        expect(logs.slice(failedCopy, takeover).filter((line) => /Executing 'Functions\.copyTemplateSheet'/.test(line))).toEqual([]);
        expect(inspectProduct(e2e.sim.core.state(), "CON-2201").sheets).toHaveLength(7);
        expect(copyCalls(e2e)).toBe(7);
    });
});
