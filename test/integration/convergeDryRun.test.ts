import { describe, expect, it } from "vitest";
import { ConvergeInputError } from "../../src/shared/convergence/ConvergeInputError";
import { planProducts, type ConvergePlans } from "../../src/shared/convergence/planProducts";
import { templateVersions } from "../../src/shared/convergence/templateVersions";
import { shapeOfTemplate } from "../../src/shared/convergence/TemplateShape";
import { sweepIntake, sweepSite } from "../../src/shared/intake/intakeSweep";
import { readTemplateSheets } from "../../src/shared/provisioning/Blueprint";
import { listTemplateSheets } from "../../src/shared/provisioning/blueprintSource";
import { convergencePlan, convergenceVersions } from "../../src/shared/recovery/jobsApi";
import { sitesFrom } from "../../src/shared/sites/Sites";
import { SdkSmartsheet } from "../../src/shared/smartsheet/SdkSmartsheet";
import { approvedRequest, intakeSheet } from "../helpers/intakeSheet";
import type { Harness } from "../helpers/provisioningHarness";
import { changeTemplate, editedAfterTemplateChange, FIXED_STATUS, nextSecond, provisionSeeded, sharedWorld, templateSheet, withdrawRequests } from "../helpers/convergenceWorld";
import { runSteps } from "../helpers/runSteps";
import { api } from "../sim/simTestKit";
import { ExitCode } from "../../tools/jobs-cli/main";
import { jobsCliAnswered } from "../helpers/jobsCli";

/** The product whose customer rewrote its Change Log's Approval Status formula. */
const EDITED = "IND-1043";

/**
 * `converge --dry-run` over products provisioned before a template change, against the simulator
 * and Azurite: each product's plan names every change, the customer's edit is a conflict, the
 * calls are predicted, and nothing is written to Smartsheet.
 */
describe("the convergence plan of products provisioned before a template change (read-only)", () => {
    // One world for every test here (see editedAfterTemplateChange).
    const world = sharedWorld({}, (current) => editedAfterTemplateChange(current, EDITED));

    it("names each template change for every product, the customer-edited product's conflict and the predicted calls, writing nothing to Smartsheet", async () => {
        const { sim, deps, codes, version } = world.current;
        const edited = EDITED;

        sim.core.resetCalls();
        const plans = await planProducts(deps, {});

        expect(sim.core.calls().log.filter((call) => call.method !== "GET")).toEqual([]);
        expect(plans.products.map((product) => product.productCode)).toEqual(codes);
        expect(plans.targets).toHaveLength(1);
        expect(plans.targets[0]!.version).not.toBe(version);
        for (const product of plans.products) {
            expect(product.from).toEqual({ version });
            const changes = product.plan.changes.map((change) => `${change.kind} ${change.sheet}: ${"column" in change ? change.column.title : "field" in change ? change.field.title : "title" in change ? change.title : ""}`);
            const status = product.productCode === edited ? [] : ["updateColumn Change Log: Approval Status"];
            expect(changes).toEqual(["updateColumn Change Log: Approval Status", "addColumn Risk Register: Owner", "addSummaryField Specifications: Review Cycle"].filter((change) => !change.startsWith("updateColumn") || status.includes(change)));
            expect(product.plan.calls.byOperation).toEqual(product.productCode === edited ? { addColumn: 1, addSummaryFields: 1 } : { addColumn: 1, addSummaryFields: 1, updateColumn: 1 });
        }
        const fixed = plans.products.find((product) => product.productCode === "IND-1042")!.plan.changes.find((change) => change.kind === "updateColumn")!;
        expect(fixed).toMatchObject({ set: { formula: FIXED_STATUS.replace("{Approvals Decision}", "{IND-1042 Approvals Decision}") } });
        const conflicts = plans.products.flatMap((product) => product.plan.conflicts.map((conflict) => ({ code: product.productCode, ...conflict })));
        expect(conflicts).toEqual([
            {
                code: edited,
                kind: "edited",
                sheet: "Change Log",
                column: "Approval Status",
                position: 3,
                aspect: "formula",
                oldTemplate: { formula: `=IF(COUNTIF({${edited} Approvals Decision}, "Pending") > 0, "Awaiting approval", "Clear")` },
                newTemplate: { formula: FIXED_STATUS.replace("{Approvals Decision}", `{${edited} Approvals Decision}`) },
                product: { formula: `=IF(COUNTIF({${edited} Approvals Decision}, "Pending") > 0, "Waiting on approvals", "Clear")` },
            },
        ]);
        expect(plans.total).toMatchObject({
            products: 2,
            changes: 5,
            changesByKind: { addColumn: 2, addSummaryField: 2, updateColumn: 1 },
            conflicts: 1,
            productsWithConflicts: 1,
            calls: { total: 5, byOperation: { addColumn: 2, addSummaryFields: 2, updateColumn: 1 } },
        });
        expect(plans.lines.at(-1)).toBe(
            "total: 2 products, 5 changes (addColumn 2, addSummaryField 2, updateColumn 1), 1 conflict (1 product to park); " +
                "calls: addColumn 2, addSummaryFields 2, updateColumn 1 (5 in all)",
        );
    });

    it("gives the same plans when run twice, and reads each product's copies only: a folder listing, a sheet and its summary per copy", async () => {
        const { sim, deps, analysed: first } = world.current;

        sim.core.resetCalls();
        const second = await planProducts(deps, {});

        expect(second.lines).toEqual(first.lines);
        expect(withoutReads(second)).toEqual(withoutReads(first));
        // The template was analysed by the world's first run, and its shape stored: the second lists the folder once and reads no template sheet.
        // A summary is read only where the sheet says it has one: the seeded copies' Document Register (the Product Code).
        expect(sim.core.calls().byOperation).toEqual({ getFolderChildren: 1 + 2, getSheet: 2 * 7, getSummary: 2 });
        expect(sim.core.calls().log.filter((call) => call.method !== "GET")).toEqual([]);
        expect(second.readCalls.total).toBe(sim.core.calls().total);
    });

    it("plans to a stored version named with `to`: to the version the products are on, nothing to do", async () => {
        const { deps, version } = world.current;

        const plans = await planProducts(deps, { to: version });

        expect(plans.targets).toEqual([expect.objectContaining({ version, source: "stored" })]);
        expect(plans.products.map((product) => [product.productCode, product.plan.changes.length, product.plan.conflicts.length])).toEqual(
            ["IND-1042", "IND-1043"].map((code) => [code, 0, 0]),
        );
        expect(plans.lines.at(-1)).toBe("total: 2 products, 0 changes, 0 conflicts (0 products to park); calls: none");
    });

    it("refuses an unknown version, site or product with what exists, before any Smartsheet call, and the API answers 400 with the same", async () => {
        const { sim, deps, version, analysed } = world.current;
        const { builtAt } = (await deps.blueprints.get(version))!;
        const changed = (await deps.blueprints.get(analysed.targets[0]!.version))!;
        sim.core.resetCalls();

        await expect(planProducts(deps, { to: "0123456789abcdef0123" })).rejects.toThrow(
            new ConvergeInputError(`There is no template version 0123456789abcdef0123; the stored ones are ${changed.version} (built ${changed.builtAt}), ${version} (built ${builtAt}).`),
        );
        await expect(planProducts(deps, { site: "globex" })).rejects.toThrow('There is no site "globex"; the sites are default.');
        await expect(planProducts(deps, { product: "IND-9999" })).rejects.toThrow("There is no product IND-9999 in site default; its done products are IND-1042, IND-1043.");
        expect(sim.core.calls().total).toBe(0);

        expect(await convergencePlan(deps, { to: "latest", site: null, product: null })).toEqual({
            status: 400,
            jsonBody: { error: "to: a template version is 20 hexadecimal digits (0-9, a-f), as `versions` lists them." },
        });
        expect(await convergencePlan(deps, { to: null, site: "globex", product: null })).toEqual({
            status: 400,
            jsonBody: { error: 'There is no site "globex"; the sites are default.' },
        });
        const one = await convergencePlan(deps, { to: "", site: "default", product: "IND-1042" });
        expect(one.status).toBe(200);
        expect((one.jsonBody as ConvergePlans).products.map((product) => product.productCode)).toEqual(["IND-1042"]);
        expect(sim.core.calls().log.filter((call) => call.method !== "GET")).toEqual([]);
    });

    it("the CLI prints the API's plan line by line and exits 0, twice the same; an unknown version exits 2 naming the stored ones", async () => {
        const { sim, version } = world.current;
        sim.core.resetCalls();

        const first = await cliOver(world.current, ["converge", "--dry-run"]);
        const second = await cliOver(world.current, ["converge", "--dry-run"]);
        const unknown = await cliOver(world.current, ["converge", "--dry-run", "--to", "0123456789abcdef0123"]);

        expect(first).toMatchObject({ code: ExitCode.ok, err: "" });
        expect(second.out).toBe(first.out);
        expect(first.out.split("\n")).toContain("  conflict: " + 'sheet "Change Log", column "Approval Status", formula: the template had formula ' +
            '"=IF(COUNTIF({IND-1043 Approvals Decision}, \\"Pending\\") > 0, \\"Awaiting approval\\", \\"Clear\\")", now has formula ' +
            '"=IF(COUNTIF({IND-1043 Approvals Decision}, \\"Pending\\") > 0, \\"Awaiting approval\\", \\"All approved\\")"; the product has formula ' +
            '"=IF(COUNTIF({IND-1043 Approvals Decision}, \\"Pending\\") > 0, \\"Waiting on approvals\\", \\"Clear\\")"');
        expect(unknown.code).toBe(ExitCode.usage);
        expect(unknown.err).toMatch(new RegExp(`^There is no template version 0123456789abcdef0123; the stored ones are [0-9a-f]{20} \\(built .*\\), ${version} \\(built`));
        expect(sim.core.calls().log.filter((call) => call.method !== "GET")).toEqual([]);
    });

    // Last: it stores the products' version again without its shape, which every test above plans from.
    it("plans a product whose version was stored without a shape from the oldest version with one, and says so", async () => {
        const { deps, version } = world.current;
        const stored = (await deps.blueprints.get(version))!;
        await deps.blueprints.save({ ...stored, shape: undefined });
        expect((await deps.blueprints.get(version))!.shape).toBeUndefined();

        const plans = await planProducts(deps, { product: "IND-1042" });

        const target = plans.targets[0]!.version;
        expect(plans.products[0]!.from).toMatchObject({ version: target, recorded: version });
        expect(plans.lines).toContain(
            `  note: its version ${version} was stored before versions recorded their shape: planned from the oldest version with a shape, ${target} ` +
                "(the target itself: what the template changed before it cannot be told from a customer's edit, and is not planned)",
        );
    });
});

describe("template versions and their products", () => {
    // One world for every test here: IND-1042 provisioned (the other seeded requests taken back: a product is all
    // these claims need), the template as it was. The tests that change it come last, each saying what it changes.
    const world = sharedWorld({}, async (current) => {
        await withdrawRequests(current, ["CON-2201", "IND-1043"]);
        return provisionSeeded(current);
    });

    it("records the template's shape with the version the sweep analyses, from the analysis's own reads", async () => {
        const { deps, site } = world.current;
        const listing = await listTemplateSheets(deps.smartsheet, site.templateFolderId);
        const row = (await deps.jobs.require(deps.enqueued[0]!)).row;

        const stored = (await deps.blueprints.get(row.blueprintVersion!))!;

        expect(stored.shape).toEqual(shapeOfTemplate((await readTemplateSheets(deps.smartsheet, listing)).values()));
        expect(stored.shape!.sheets.map((sheet) => sheet.name)).toEqual([...stored.sheets.map((sheet) => sheet.name)].sort());
    });

    it("refuses to store a blueprint too large for its table row, saying how much of it is the shape and what to reduce", async () => {
        const { deps } = world.current;
        const stored = (await deps.blueprints.get((await deps.jobs.require(deps.enqueued[0]!)).row.blueprintVersion!))!;
        const wide = { ...stored.shape!.sheets[0]!, columns: Array.from({ length: 4000 }, (_, index) => ({ ...stored.shape!.sheets[0]!.columns[0]!, id: index + 1, index, title: `Column ${index}`, primary: false })) };

        await expect(deps.blueprints.save({ ...stored, version: "ffffffffffffffffffff", shape: { sheets: [wide] } })).rejects.toThrow(
            /^The template's blueprint \(version ffffffffffffffffffff\) is \d+ characters, \d+ of them its shape .* reduce the template's columns, summary fields/,
        );
        expect(await deps.blueprints.get("ffffffffffffffffffff")).toBeUndefined();
    });

    // After the tests that read the version's shape as the sweep stored it: it stores the version again without one (its first plan records it again).
    it("records the shape of a version stored before shapes were, the first time a plan is made to it, and reads its template no more after", async () => {
        const { deps, sim, version } = world.current;
        await deps.blueprints.save({ ...(await deps.blueprints.get(version))!, shape: undefined });
        sim.core.resetCalls();

        const first = await planProducts(deps, { product: "IND-1042" });
        const templateReads = sim.core.calls().byOperation.getSheet ?? 0;
        sim.core.resetCalls();
        await planProducts(deps, { product: "IND-1042" });

        expect(first.targets[0]!.version).toBe(version);
        expect((await deps.blueprints.get(version))!.shape).toBeDefined();
        // Its own version has a shape now: the product is planned from it, not from a stand-in.
        expect(first.products[0]!.from).toEqual({ version });
        expect(templateReads).toBe(7 + 7);
        expect(sim.core.calls().byOperation.getSheet).toBe(7);
        expect(sim.core.calls().log.filter((call) => call.method !== "GET")).toEqual([]);
    });

    // After the tests that plan the product from its row: it empties the row's template sheet names.
    it("finds the copies of a product whose row names no template sheets under the names its version's sheets give, and says so", async () => {
        const { deps, table, version } = world.current;
        const key = deps.enqueued[0]!;
        await table.updateEntity({ partitionKey: key.pk, rowKey: key.rk, templates: "[]" }, "Merge");
        const code = (await deps.jobs.require(key)).row.productCode;

        const plans = await planProducts(deps, { product: code });

        expect(plans.products.map((product) => [product.productCode, product.plan.changes.length, product.plan.conflicts.length])).toEqual([[code, 0, 0]]);
        expect(plans.lines).toContain(`  note: its row names no template sheets: its copies are looked for under the names version ${version}'s sheets give`);
    });

    // Last: it changes the template and accepts another request.
    it("counts per version the products on it and the jobs provisioning from it, newest version first", async () => {
        const { deps, sim, version } = world.current;
        await intakeSheet(world.current).add([approvedRequest("IND-3001")]);
        await changeTemplate(world.current);
        const plans = await planProducts(deps, {});
        await sweepSite(deps, world.current.site);
        sim.core.resetCalls();

        const versions = await templateVersions(deps, {});

        expect(sim.core.calls().total).toBe(0);
        expect(versions.versions.map(({ version: named, products, inProgress, shaped, sites }) => ({ named, products, inProgress, shaped, sites }))).toEqual([
            { named: plans.targets[0]!.version, products: 0, inProgress: 1, shaped: true, sites: ["default"] },
            { named: version, products: 1, inProgress: 0, shaped: true, sites: ["default"] },
        ]);
        expect(versions.unversioned).toEqual([]);
        expect(await convergenceVersions(deps, { site: "globex" })).toEqual({ status: 400, jsonBody: { error: 'There is no site "globex"; the sites are default.' } });
    });
});

/** The jobs CLI with its requests answered by the jobs API's own handlers over the harness. */
async function cliOver(current: Harness, args: string[]): Promise<{ code: number; out: string; err: string }> {
    const { code, out, err } = await jobsCliAnswered(args, async (request) => {
        const query = (name: string) => request.searchParams.get(name);
        const answer =
            request.pathname === "/api/converge/plan"
                ? await convergencePlan(current.deps, { to: query("to"), site: query("site"), product: query("product") })
                : await convergenceVersions(current.deps, { site: query("site") });
        return { status: answer.status, body: answer.jsonBody };
    });
    return { code, out, err };
}

describe("the convergence plan of two sites, each with its own template", () => {
    // One world for both tests: IND-1042 provisioned in each site (the other seeded requests taken back: a product a
    // site is all these claims need), each template as it was. The test that changes demo's template comes last.
    const world = sharedWorld({ simulator: { sites: 2 } }, async (current) => {
        const { deps, sites } = current;
        await withdrawRequests(current, ["CON-2201", "IND-1043"]);
        await sweepIntake(deps);
        for (const key of deps.enqueued) await runSteps(deps, key);
        const versionOf = async (siteIndex: number) =>
            (await deps.jobs.listByState(String(sites[siteIndex]!.intakeSheetId), "done")).found.map(({ row }) => row.blueprintVersion!)[0]!;
        return { before: await versionOf(0), other: await versionOf(1) };
    });

    // Refuses the token of a client of its own: the world is as it was.
    it("plans the other site's products when one site's token is refused, naming the site left out and why", async () => {
        const { deps, sim, config } = world.current;
        const revoked = sitesFrom(
            config.sites.map((site) => (site.name === "demo" ? { ...site, token: "revoked-token" } : site)),
            (accessToken) => new SdkSmartsheet({ accessToken, baseUrl: sim.baseUrl, callTimeoutMs: 2_000 }),
        );

        const plans = await planProducts({ ...deps, sites: revoked }, {});

        expect(plans.sitesLeftOut).toEqual([{ site: "demo", reason: expect.stringMatching(/^its template folder \(\d+\) could not be analysed: .+/) }]);
        expect(plans.targets.map((target) => target.site)).toEqual(["demo-2"]);
        expect(plans.products.map((product) => [product.site, product.plan.changes.length])).toEqual([["demo-2", 0]]);
        expect(plans.lines[0]).toMatch(/^site demo-2: to template version [0-9a-f]{20} \(the template folder as it is now\)$/);
        expect(plans.lines[1]).toMatch(/^site demo: left out, its template folder \(\d+\) could not be analysed: /);
    });

    // Last: it adds a column to demo's template.
    it("plans each site to its own template's version, and leaves out, or refuses, a site whose template a named version is not of", async () => {
        const { deps, sim, sites, before, other } = world.current;
        await nextSecond();
        const riskRegister = templateSheet(sim.core.state(), "Risk Register");
        expect((await api(sim, "POST", `sheets/${riskRegister.id}/columns`, { title: "Owner", type: "TEXT_NUMBER", index: riskRegister.columns.length })).status).toBe(200);

        const all = await planProducts(deps, {});
        const after = all.targets.find((target) => target.site === "demo")!.version;
        const named = await planProducts(deps, { to: after });

        expect(all.targets.map((target) => [target.site, target.version === before, target.version === other])).toEqual([
            ["demo", false, false],
            ["demo-2", false, true],
        ]);
        expect(all.products.map((product) => [product.site, product.plan.changes.map((change) => change.kind)])).toEqual([
            ["demo", ["addColumn"]],
            ["demo-2", []],
        ]);
        expect(named.sitesLeftOut).toEqual([{ site: "demo-2", reason: expect.stringContaining(`is not version ${after}'s`) }]);
        expect(named.products.map((product) => product.site)).toEqual(["demo"]);
        await expect(planProducts(deps, { to: after, site: "demo-2" })).rejects.toThrow(
            `Template version ${after} is of template folder ${sites[0]!.templateFolderId}, which site demo-2 does not use; the stored ones are ${other} (built `,
        );
    });
});

function withoutReads(plans: ConvergePlans): Omit<ConvergePlans, "readCalls" | "targets"> & { targets: unknown[] } {
    const { readCalls: _reads, targets, ...rest } = plans;
    return { ...rest, targets: targets.map(({ source: _source, ...target }) => target) };
}
