import { describe, expect, it } from "vitest";
import { ExitCode, runJobsCli } from "../../tools/jobs-cli/main";
import type { SimSheetState } from "../../tools/smartsheet-sim";
import { FUNCTION_KEY, useE2E, waitFor, type E2E } from "../helpers/e2e";
import { intake, job, jobIn, startRecoveryE2E } from "../helpers/recoveryKit";
import { api } from "../sim/simTestKit";

const PRODUCTS = ["IND-7101", "IND-7102", "IND-7103", "IND-7104", "IND-7105"];
const EDITED = "IND-7103";

async function jobs(e2e: E2E, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runJobsCli(args, { out: (line) => out.push(line), err: (line) => err.push(line), env: { SHEETWRIGHT_URL: e2e.host.url, SHEETWRIGHT_KEY: FUNCTION_KEY }, fetch });
    return { code, out: out.join("\n"), err: err.join("\n") };
}

/**
 * The promise end to end, in the local host: five products provisioned, the template
 * changed (a picklist column added to one sheet, a formula fixed, a summary field added), one
 * product's customer edited the same formula — then `converge --dry-run`, `--apply`, an unpark
 * with a decision, and `versions`, through the ops CLI over the app's HTTP API.
 */
describe("convergence end to end: the CLI, the fleet and the product orchestrations in the local host", { timeout: 180_000 }, () => {
    const stack = useE2E(startRecoveryE2E);

    it("brings five products to a changed template: four at once, the customer-edited one parked with its conflict until unparked with keep-product; nothing made twice, the customer's edit intact", async () => {
        const e2e = await stack.start({ only: [] });
        const keys = new Map<string, string>();
        for (const [index, code] of PRODUCTS.entries()) keys.set(code, await intake(e2e).add(code, `Converged Pump ${index + 1}`, "Industrial"));
        await e2e.fire("intakeSweep");
        for (const key of keys.values()) await jobIn(e2e, key, "done");
        const before = (await job(e2e, keys.get(PRODUCTS[0]!)!))!.blueprintVersion;

        await changeTemplate(e2e);
        await editFormula(e2e, copyOf(e2e, EDITED, "Change Log"), "Approval Status", `=IF(COUNTIF({${EDITED} Approvals Decision}, "Pending") > 0, "Waiting", "Clear")`);

        e2e.sim.core.resetCalls();
        const planned = await jobs(e2e, "converge", "--dry-run");
        expect(planned.code, planned.err).toBe(ExitCode.ok);
        expect(e2e.sim.core.calls().log.filter((call) => call.method !== "GET")).toEqual([]);
        const target = /to template version ([0-9a-f]{20})/.exec(planned.out)![1]!;
        expect(target).not.toBe(before);
        expect(planned.out.split("\n").at(-1)).toBe(
            "total: 5 products, 14 changes (addColumn 5, addSummaryField 5, updateColumn 4), 1 conflict (1 product to park); calls: addColumn 5, addSummaryFields 5, updateColumn 4 (14 in all)",
        );

        // A trial first, on copies of the product that changes most; its scratch folder is gone after.
        const sheetsBefore = e2e.sim.core.state().sheets.length;
        const trial = await jobs(e2e, "converge", "--trial");
        expect(trial.code, trial.err + trial.out).toBe(ExitCode.ok);
        expect(trial.out.split("\n").at(-1)).toBe("trial passed: the plan does what it says on a copy of the product");
        expect(e2e.sim.core.state().sheets).toHaveLength(sheetsBefore);

        e2e.sim.core.resetCalls();
        const applied = await jobs(e2e, "converge", "--apply", "--by", "Dana");
        expect(applied.code, applied.err).toBe(ExitCode.ok);
        expect(applied.out).toMatch(new RegExp(`^site \\S+: converging to version ${target} \\(the template as it is now\\) as converge-fleet-`));
        for (const code of PRODUCTS.filter((product) => product !== EDITED)) {
            await waitFor(async () => ((await job(e2e, keys.get(code)!))?.blueprintVersion === target) || undefined, `${code} on ${target}`, 90_000);
        }
        const parked = await waitFor(async () => {
            const row = await job(e2e, keys.get(EDITED)!);
            return row?.convergence?.state === "parked" ? row : undefined;
        }, `${EDITED} parked on its convergence`);
        expect(parked.convergence!.parkReason).toMatch(/1 conflict/);
        const shown = await jobs(e2e, "show", keys.get(EDITED)!);
        expect(shown.out).toMatch(new RegExp(`convergence:\\s+to ${target}: parked \\(attempt 1, converge-\\S+-a1, 2 changes made\\)`));

        const waiting = await jobs(e2e, "versions");
        expect(waiting.out.split("\n")[1]).toMatch(new RegExp(`^${target}\\s+\\S+ \\S+\\s+\\S+\\s+4\\s+0\\s+0\\s+1\\s+recorded$`));

        // Applying again while one waits for a decision starts nothing new and writes nothing.
        const writesBefore = writes(e2e);
        const again = await jobs(e2e, "converge", "--apply");
        expect(again.code, again.err).toBe(ExitCode.ok);
        const fleet = /as (converge-fleet-\S+);/.exec(again.out)![1]!;
        const finished = await waitFor(async () => {
            const status = (await (await e2e.durable(`instances/${fleet}`)).json()) as { runtimeStatus: string; output?: { results: object; leftAlone: Array<{ productCode: string; why: string }> } };
            return status.runtimeStatus === "Completed" ? status.output : undefined;
        }, `the second fleet ${fleet} completed`);
        expect(finished.results).toEqual({});
        expect(finished.leftAlone.map((left) => left.productCode).sort()).toEqual([...PRODUCTS].sort());
        expect(finished.leftAlone.find((left) => left.productCode === EDITED)!.why).toMatch(/^parked on its convergence/);
        expect(writes(e2e)).toEqual(writesBefore);

        const refused = await jobs(e2e, "unpark", keys.get(EDITED)!, "--by", "Dana");
        expect(refused.code).toBe(ExitCode.usage);
        expect(refused.err).toMatch(/sheet "Change Log", column "Approval Status", formula: the template had/);
        const unparked = await jobs(e2e, "unpark", keys.get(EDITED)!, "--by", "Dana", "--decision", "keep-product", "--note", "their wording stays");
        expect(unparked.code, unparked.err).toBe(ExitCode.ok);
        expect(unparked.out).toMatch(new RegExp(`convergence resumed \\(converge-\\S+-a2\\); it goes on converging to ${target}, keep-product`));
        await waitFor(async () => ((await job(e2e, keys.get(EDITED)!))?.blueprintVersion === target) || undefined, `${EDITED} on ${target}`, 60_000);

        const versions = await jobs(e2e, "versions");
        expect(versions.out.split("\n")[1]).toMatch(new RegExp(`^${target}\\s+\\S+ \\S+\\s+\\S+\\s+5\\s+0\\s+0\\s+0\\s+recorded$`));
        // Once each, the customer's formula kept, and the writes are the plan's.
        expect(writes(e2e)).toEqual({ addColumn: 5, addSummaryFields: 5, updateColumn: 4 });
        for (const code of PRODUCTS) {
            expect(copyOf(e2e, code, "Risk Register").columns.filter((column) => column.title === "Severity"), code).toHaveLength(1);
            expect(copyOf(e2e, code, "Specifications").summaryFields.filter((field) => field.title === "Review Cycle"), code).toHaveLength(1);
        }
        expect(columnOf(copyOf(e2e, EDITED, "Change Log"), "Approval Status").formula).toContain('"Waiting"');
        expect(columnOf(copyOf(e2e, PRODUCTS[0]!, "Change Log"), "Approval Status").formula).toContain('"All approved"');
    });
});

function writes(e2e: E2E): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const call of e2e.sim.core.calls().log) if (call.method !== "GET") counts[call.op] = (counts[call.op] ?? 0) + 1;
    return counts;
}

function templateSheet(e2e: E2E, name: string): SimSheetState {
    const state = e2e.sim.core.state();
    return state.sheets.find((sheet) => sheet.folderId === state.templateFolderId && sheet.name === name)!;
}

function copyOf(e2e: E2E, code: string, template: string): SimSheetState {
    const copy = e2e.sim.core.state().sheets.find((sheet) => sheet.name.startsWith(`${code} `) && sheet.name.endsWith(` - ${template}`));
    if (!copy) throw new Error(`no copy of ${template} for ${code}`);
    return copy;
}

function columnOf(sheet: SimSheetState, title: string) {
    return sheet.columns.find((column) => column.title === title)!;
}

async function editFormula(e2e: E2E, sheet: SimSheetState, title: string, formula: string): Promise<void> {
    const answer = await api(e2e.sim, "PUT", `sheets/${sheet.id}/columns/${columnOf(sheet, title).id}`, { formula });
    expect(answer.status).toBe(200);
}

/** The customer's template edit, a second after the products' analysis (Smartsheet's `modifiedAt` counts whole seconds). */
async function changeTemplate(e2e: E2E): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 1_050 - (Date.now() % 1_000)));
    const riskRegister = templateSheet(e2e, "Risk Register");
    const added = await api(e2e.sim, "POST", `sheets/${riskRegister.id}/columns`, { title: "Severity", type: "PICKLIST", options: ["Low", "Medium", "High"], index: 2 });
    expect(added.status).toBe(200);
    await editFormula(e2e, templateSheet(e2e, "Change Log"), "Approval Status", '=IF(COUNTIF({Approvals Decision}, "Pending") > 0, "Awaiting approval", "All approved")');
    const field = await api(e2e.sim, "POST", `sheets/${templateSheet(e2e, "Specifications").id}/summary/fields`, [{ title: "Review Cycle", type: "TEXT_NUMBER", objectValue: "Quarterly" }]);
    expect(field.status).toBe(200);
}
