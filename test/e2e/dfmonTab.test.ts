import { readFileSync } from "node:fs";
import path from "node:path";
import { Liquid } from "liquidjs";
import { describe, expect, it } from "vitest";
import { useE2E, waitFor, type E2E } from "../helpers/e2e";
import { intake, jobIn, startRecoveryE2E } from "../helpers/recoveryKit";

const TEMPLATE = path.resolve(__dirname, "..", "..", "tools", "dfmon", "tab-templates", "Job.provisionProduct.liquid");

/** The detailed status DfMon renders a tab against, from what the Durable HTTP API says of the instance. */
async function dfmonModel(e2e: E2E, instanceId: string): Promise<Record<string, unknown>> {
    const status = (await (await e2e.durable(`instances/${instanceId}?showHistory=true&showHistoryOutput=true`)).json()) as Record<string, unknown>;
    return {
        Name: status.name,
        InstanceId: status.instanceId,
        RuntimeStatus: status.runtimeStatus,
        CreatedTime: status.createdTime,
        LastUpdatedTime: status.lastUpdatedTime,
        CustomStatus: status.customStatus,
        Input: status.input,
        History: status.historyEvents,
    };
}

describe("the Durable Functions Monitor tab for a job", { timeout: 120_000 }, () => {
    const stack = useE2E(startRecoveryE2E);

    it("shows a parked job's stage, the sheets it copied before it parked, recoveries and reason, and how to resume it, from a status captured from the local host", async () => {
        const e2e = await stack.start({ only: [] });
        const key = await intake(e2e).add("IND-7001", "Hydraulic Coolant Pump", "Industrial");
        e2e.sim.core.configure({ nameLimit: 40 });
        await e2e.fire("intakeSweep");
        const parked = await jobIn(e2e, key, "parked");
        // The job row is parked first; the orchestration publishes it in its custom status on its next replay.
        const model = await waitFor(async () => {
            const candidate = await dfmonModel(e2e, parked.instanceId);
            return (candidate.CustomStatus as { state?: string } | undefined)?.state === "parked" ? candidate : undefined;
        }, `the status of ${parked.instanceId} to show the park`);

        const html = await new Liquid().parseAndRender(readFileSync(TEMPLATE, "utf8"), model);
        expect(html).toContain(`<h3>Job ${key}</h3>`);
        expect(html).toMatch(/<td class="state state-parked">parked<\/td>/);
        expect(html).toMatch(/<th>Stage<\/th><td>copy<\/td>/);
        // The tab counts the copies the job row holds, not the count from before the round (regression #19: "0 of 7" with 6 made).
        const copied = Object.keys(parked.copies).length;
        expect(copied).toBeGreaterThan(0);
        expect(html).toContain(`<th>Sheets copied</th><td>${copied} of 7 <span class="bar"><span style="width: ${Math.floor((copied * 100) / 7)}%">`);
        expect(html).toMatch(/<th>Recoveries<\/th><td>0<\/td>/);
        expect(html).toMatch(/<th>Parked because<\/th><td>Smartsheet copySheet failed with 400\/1041/);
        expect(html).toContain(`sheetwright-jobs unpark ${key} --by &lt;you&gt;`);
        expect(html).toMatch(/<th>Orchestration<\/th><td>Running · provision-/);
    });

    it("shows the copies made so far while a round of copies runs, from the copies' answers in the History (regression #19: the custom status moves only after the round)", async () => {
        const e2e = await stack.start({ only: [] });
        const key = await intake(e2e).add("IND-7002", "Hydraulic Coolant Pump", "Industrial");
        await e2e.fire("intakeSweep");
        const done = await jobIn(e2e, key, "done");
        const finished = await dfmonModel(e2e, done.instanceId);
        const history = finished.History as Array<{ EventType: string; FunctionName?: string }>;
        const copyAnswers = history.flatMap((event, at) => (event.EventType === "TaskCompleted" && event.FunctionName === "copyTemplateSheet" ? [at] : []));
        expect(copyAnswers).toHaveLength(7);
        // The instance as DfMon saw it when three copies had answered: the History up to the third answer,
        // the custom status as the orchestration last set it, before the round (the folder made, none copied).
        const midRound = {
            ...finished,
            RuntimeStatus: "Running",
            History: history.slice(0, copyAnswers[2]! + 1),
            CustomStatus: { ...(finished.CustomStatus as object), state: "running", stage: "copy", sheetsDone: 0, sheetsTotal: 7 },
        };
        // What the job row held by then: each answer carries the row as that copy left it, and copies
        // answered later may have written it first — at least the three answered, perhaps more.
        const answered = history.slice(0, copyAnswers[2]! + 1) as Array<{ FunctionName?: string; Result?: { job?: { copied?: string[] } } }>;
        const copiedByThen = Math.max(...answered.map((event) => (event.FunctionName === "copyTemplateSheet" ? (event.Result?.job?.copied?.length ?? 0) : 0)));
        expect(copiedByThen).toBeGreaterThanOrEqual(3);
        const html = await new Liquid().parseAndRender(readFileSync(TEMPLATE, "utf8"), midRound);
        expect(html).toContain(`<th>Sheets copied</th><td>${copiedByThen} of 7 <span class="bar"><span style="width: ${Math.floor((copiedByThen * 100) / 7)}%">`);
        // Done, the count is the custom status's (every copy), never above the total.
        const after = await new Liquid().parseAndRender(readFileSync(TEMPLATE, "utf8"), finished);
        expect(after).toContain(`<th>Sheets copied</th><td>7 of 7 <span class="bar"><span style="width: 100%">`);
    });

    it("escapes whatever the status holds, so a crafted reason cannot inject markup into the monitor", async () => {
        const html = await new Liquid().parseAndRender(readFileSync(TEMPLATE, "utf8"), {
            InstanceId: "provision-1-2-a1",
            RuntimeStatus: "Running",
            CustomStatus: { state: "parked", stage: "copy", sheetsDone: 3, sheetsTotal: 7, attempt: 1, recoveries: 2, jobKey: "1-2", parkReason: '<img src=x onerror="alert(1)">' },
        });
        expect(html).toMatch(/&lt;img src=x onerror=(&quot;|&#34;)alert\(1\)(&quot;|&#34;)&gt;/);
        expect(html).not.toContain("<img");
        expect(html).toMatch(/3 of 7 <span class="bar"><span style="width: 42%">/);
        expect(html).toMatch(/<th>Recoveries<\/th><td>2<\/td>/);
    });
});
