import { z } from "zod";
import { formatJobKey, keyOf, type JobRow } from "../jobs/JobRow";
import type { InvalidJob } from "../jobs/JobStore";
import { composeProductNames } from "../naming/productNames";
import type { Blueprint } from "../provisioning/Blueprint";
import { prepareShapedBlueprint } from "../provisioning/blueprintSource";
import type { ProvisioningDeps } from "../provisioning/ProvisioningDeps";
import { readSheetForAnalysis, type SheetRead } from "../provisioning/sheetReads";
import type { Site } from "../sites/Sites";
import { failureKind, type DeclaresFailureKind } from "../failures";
import type { SmartsheetPort } from "../smartsheet/SmartsheetPort";
import { ConvergeInputError } from "./ConvergeInputError";
import { describeCalls, describePlan } from "./describePlan";
import { planConvergence, sumCalls, type ConvergencePlan, type SmartsheetCalls } from "./plan";
import { compareText, shapeOfProduct, type TemplateShape } from "./TemplateShape";

/** What planning a convergence reads: the Jobs table (job rows, stored blueprints) and each site's Smartsheet. */
export type ConvergeDeps = Pick<ProvisioningDeps, "jobs" | "blueprints" | "sites" | "log" | "now" | "timing">;

/** A template version as `blueprintVersion` makes it and `versions` lists it. */
export const TemplateVersion = z.string().regex(/^[0-9a-f]{20}$/, "a template version is 20 hexadecimal digits (0-9, a-f), as `versions` lists them");

/** Absent, or typed empty: the same. */
const optional = <T extends z.ZodType>(schema: T) => z.preprocess((value) => (value === "" || value === null ? undefined : value), schema.optional());

export const ConvergePlanQuery = z.object({
    /** The template version to converge to; absent: the template folder as it is now, analysed afresh. */
    to: optional(TemplateVersion),
    site: optional(z.string().max(40, "a site's name is at most 40 characters")),
    /** A product code: that product only. */
    product: optional(z.string().max(100, "a product code is at most 100 characters")),
});
export type ConvergePlanQuery = z.infer<typeof ConvergePlanQuery>;

/** The version a site's products are planned to. */
export interface TargetVersion {
    site: string;
    version: string;
    templateFolderId: number;
    /** `now`: the template folder as it is now; `stored`: a version asked for by name. */
    source: "now" | "stored";
    builtAt: string;
}

/** The version a product is planned from: the one its row names, or (without a recorded shape) the oldest one with a shape. */
export interface FromVersion {
    version: string;
    /** Set when `version` is not the product's own: the version its row names (none for rows from before versions were recorded). */
    recorded?: string | null;
    /** Why the product's own version was not used. */
    instead?: string;
}

export interface ProductPlan {
    site: string;
    jobKey: string;
    productCode: string;
    productName: string;
    from: FromVersion;
    to: string;
    plan: ConvergencePlan;
    notes: string[];
}

export interface SkippedProduct {
    site: string;
    jobKey: string;
    productCode: string;
    reason: string;
}

export interface ConvergePlans {
    targets: TargetVersion[];
    /** Sites left out, and why (a `to` version of another template folder). */
    sitesLeftOut: Array<{ site: string; reason: string }>;
    products: ProductPlan[];
    skipped: SkippedProduct[];
    invalidJobs: InvalidJob[];
    total: {
        products: number;
        changes: number;
        changesByKind: Record<string, number>;
        conflicts: number;
        productsWithConflicts: number;
        calls: SmartsheetCalls;
    };
    /**
     * The Smartsheet calls this plan spent reading (per product: one folder listing, a `getSheet`
     * and a `getSummary` per copy; the template's sheets when its version was new or unshaped).
     * Not part of `lines`: a second run reads no template it analysed already.
     */
    readCalls: SmartsheetCalls;
    /** The plans as the CLI prints them; the same state gives the same lines. */
    lines: string[];
}

/**
 * The convergence plan of every done product of the site(s) asked for, or of one product,
 * to a stored template version or to the template as it is now — read-only: it reads the Jobs
 * table and Smartsheet (each product's copies through the site's own client, paced by the
 * token's shared budget) and writes nothing to Smartsheet. The only write is the blueprint of a
 * template version analysed now, stored as the intake sweep stores it. Bad input is a
 * `ConvergeInputError` naming what exists, raised before any Smartsheet call.
 */
export async function planProducts(deps: ConvergeDeps, query: ConvergePlanQuery): Promise<ConvergePlans> {
    const { sites: askedSites, asked, stored, sitesLeftOut } = await sitesAndTarget(deps, query);
    let planned = askedSites;

    const jobs: Array<{ site: Site; row: JobRow }> = [];
    const invalidJobs: InvalidJob[] = [];
    for (const site of planned) {
        const listing = await deps.jobs.listByState(String(site.intakeSheetId), "done");
        invalidJobs.push(...listing.invalid);
        for (const { row } of listing.found) if (query.product === undefined || row.productCode === query.product) jobs.push({ site, row });
    }
    if (query.product !== undefined && jobs.length === 0) throw await unknownProduct(deps, planned, query.product);
    jobs.sort((a, b) => compareText(a.site.name, b.site.name) || compareText(a.row.productCode, b.row.productCode) || compareText(a.row.intakeRowId, b.row.intakeRowId));

    // The sites' clients, each counting the calls of this plan apart.
    const clients = new Map(planned.map((site) => [site.name, site.smartsheet.withOwnTally()]));
    const { targets, blueprints } = await analyseTargets(deps, planned, asked, stored.found, clients, sitesLeftOut);
    planned = planned.filter((site) => targets.has(site.name));

    const products: ProductPlan[] = [];
    const skipped: SkippedProduct[] = [];
    for (const { site, row } of jobs) {
        const target = targets.get(site.name);
        if (!target) continue;
        const jobKey = formatJobKey(keyOf(row));
        const from = fromVersion(row, site, blueprints, target.version);
        if (!from) {
            skipped.push({ site: site.name, jobKey, productCode: row.productCode, reason: `no stored version of template folder ${site.templateFolderId} has a shape to plan from` });
            continue;
        }
        let planned: Awaited<ReturnType<typeof planProduct>>;
        try {
            planned = await planProduct(clients.get(site.name)!, row, from, target.shape);
        } catch (error) {
            // A product whose folder is gone, or whose reads kept failing, is reported; the others are planned.
            if (failureKind(error) === "bug") throw error;
            skipped.push({ site: site.name, jobKey, productCode: row.productCode, reason: `its copies could not be read: ${(error as Error).message}` });
            continue;
        }
        const { plan, notes } = planned;
        const { shape: _shape, ...fromNamed } = from;
        products.push({ site: site.name, jobKey, productCode: row.productCode, productName: row.productName, from: fromNamed, to: target.version, plan, notes });
    }

    const changesByKind: Record<string, number> = {};
    for (const { plan } of products) for (const change of plan.changes) changesByKind[change.kind] = (changesByKind[change.kind] ?? 0) + 1;
    const total = {
        products: products.length,
        changes: products.reduce((sum, { plan }) => sum + plan.changes.length, 0),
        changesByKind: Object.fromEntries(Object.entries(changesByKind).sort(([a], [b]) => compareText(a, b))),
        conflicts: products.reduce((sum, { plan }) => sum + plan.conflicts.length, 0),
        productsWithConflicts: products.filter(({ plan }) => plan.conflicts.length > 0).length,
        calls: sumCalls(products.map(({ plan }) => plan.calls)),
    };
    const readCalls = sumCalls([...clients.values()].map((client) => client.calls()).map(({ total, byOperation }) => ({ total, byOperation: positive(byOperation) })));
    const result = {
        targets: [...targets.values()].map(({ shape: _shape, ...target }) => target),
        sitesLeftOut,
        products,
        skipped,
        invalidJobs,
        total,
        readCalls,
    };
    return { ...result, lines: describeConvergePlans(result) };
}

/**
 * The sites asked for, and the stored version asked for (`to`), checked against each other:
 * bad input is a `ConvergeInputError`, raised before any Smartsheet call. Sites whose template
 * folder is not the version's are left out, and said so.
 */
export async function sitesAndTarget(deps: ConvergeDeps, query: Pick<ConvergePlanQuery, "to" | "site">) {
    const sites = sitesAsked(deps, query.site);
    const stored = await deps.blueprints.list();
    const asked = query.to === undefined ? undefined : storedTarget(stored.found, query.to, sites, query.site);
    const sitesLeftOut: ConvergePlans["sitesLeftOut"] = [];
    for (const site of sites) {
        if (asked && site.templateFolderId !== asked.templateFolderId) {
            sitesLeftOut.push({ site: site.name, reason: `its template folder (${site.templateFolderId}) is not version ${asked.version}'s (${asked.templateFolderId})` });
        }
    }
    return { sites: asked ? sites.filter((site) => site.templateFolderId === asked.templateFolderId) : sites, asked, stored, sitesLeftOut };
}

/**
 * Each site's target: the version asked for, or its template folder as it is now (analysed once
 * per folder, and stored as the intake sweep stores a version). A site whose template cannot be
 * analysed is left out, said in `sitesLeftOut`; the stored versions with the fresh ones are returned.
 */
export async function analyseTargets(
    deps: ConvergeDeps,
    sites: readonly Site[],
    asked: (Blueprint & { shape: TemplateShape }) | undefined,
    stored: readonly Blueprint[],
    clients: ReadonlyMap<string, SmartsheetPort>,
    sitesLeftOut: ConvergePlans["sitesLeftOut"],
): Promise<{ targets: Map<string, TargetVersion & { shape: TemplateShape }>; blueprints: Blueprint[] }> {
    const targets = new Map<string, TargetVersion & { shape: TemplateShape }>();
    const analysed = new Map<number, Blueprint & { shape: TemplateShape }>();
    for (const site of sites) {
        let blueprint = asked;
        if (!blueprint) {
            try {
                blueprint = analysed.get(site.templateFolderId) ?? (await prepareShapedBlueprint(deps, clients.get(site.name) ?? site.smartsheet, site.templateFolderId));
            } catch (error) {
                // One site's template that cannot be read (its token refused, its folder gone, untidy) stops no other site's.
                if (failureKind(error) === "bug") throw error;
                sitesLeftOut.push({ site: site.name, reason: `its template folder (${site.templateFolderId}) could not be analysed: ${(error as Error).message}` });
                continue;
            }
            analysed.set(site.templateFolderId, blueprint);
        }
        targets.set(site.name, {
            site: site.name,
            version: blueprint.version,
            templateFolderId: blueprint.templateFolderId,
            source: asked ? "stored" : "now",
            builtAt: blueprint.builtAt,
            shape: blueprint.shape,
        });
    }
    const blueprints = [...stored.filter((known) => ![...analysed.values()].some((fresh) => fresh.version === known.version)), ...analysed.values()];
    return { targets, blueprints };
}

/** The sites asked for: the one named, or every site. */
function sitesAsked(deps: ConvergeDeps, name: string | undefined): readonly Site[] {
    if (name === undefined) return deps.sites.all();
    const site = deps.sites.named(name);
    if (!site) throw new ConvergeInputError(`There is no site "${name}"; the sites are ${deps.sites.all().map((known) => known.name).join(", ")}.`);
    return [site];
}

/** The stored version asked for, with its shape, of the template folder of the site asked for. */
function storedTarget(stored: readonly Blueprint[], version: string, sites: readonly Site[], siteName: string | undefined): Blueprint & { shape: TemplateShape } {
    const folders = new Set(sites.map((site) => site.templateFolderId));
    const ofSites = stored.filter((known) => folders.has(known.templateFolderId));
    const listed = (blueprints: readonly Blueprint[]) =>
        blueprints.length === 0
            ? "none is stored yet (the intake sweep stores each version it analyses; `converge --dry-run` without --to analyses the template as it is now)"
            : `the stored ones are ${[...blueprints]
                  .reverse()
                  .slice(0, 10)
                  .map((known) => `${known.version} (built ${known.builtAt}${known.shape ? "" : ", no shape"})`)
                  .join(", ")}${blueprints.length > 10 ? ` and ${blueprints.length - 10} older (npm run jobs -- versions)` : ""}`;
    const blueprint = stored.find((known) => known.version === version);
    if (!blueprint) throw new ConvergeInputError(`There is no template version ${version}; ${listed(ofSites)}.`);
    if (!folders.has(blueprint.templateFolderId)) {
        throw new ConvergeInputError(
            `Template version ${version} is of template folder ${blueprint.templateFolderId}, which ${siteName ? `site ${siteName} does not use` : "no site uses"}; ${listed(ofSites)}.`,
        );
    }
    if (!blueprint.shape) {
        throw new ConvergeInputError(
            `Template version ${version} was stored before versions recorded their shape, so nothing can be planned to it; ` +
                `converge to the template as it is now (leave out --to), or to a version with a shape: ${listed(ofSites.filter((known) => known.shape))}.`,
        );
    }
    return { ...blueprint, shape: blueprint.shape };
}

/** Why there is no such product to plan: not done yet, or no product of that code at all (naming the done ones). */
export async function unknownProduct(deps: ConvergeDeps, sites: readonly Site[], code: string): Promise<ConvergeInputError> {
    for (const site of sites) {
        const pk = String(site.intakeSheetId);
        const rowKey = await deps.jobs.holderOfCode(pk, code);
        const job = rowKey === undefined ? undefined : await deps.jobs.get({ pk, rk: rowKey });
        if (job) {
            return new ConvergeInputError(
                `Product ${code} of site ${site.name} is ${job.row.state}, not done: only a provisioned product converges (npm run jobs -- show ${formatJobKey({ pk, rk: rowKey! })}).`,
            );
        }
    }
    const done: string[] = [];
    for (const site of sites) done.push(...(await deps.jobs.listByState(String(site.intakeSheetId), "done")).found.map(({ row }) => row.productCode));
    done.sort(compareText);
    const where = sites.length === 1 ? `site ${sites[0]!.name}` : `the sites ${sites.map((site) => site.name).join(", ")}`;
    const shown = done.length === 0 ? "it has no done products yet" : `its done products are ${done.slice(0, 20).join(", ")}${done.length > 20 ? ` and ${done.length - 20} more (npm run jobs -- list --state done)` : ""}`;
    return new ConvergeInputError(`There is no product ${code} in ${where}; ${shown}.`);
}

/**
 * The shape the product was provisioned from: its row's version's; without one (a version stored
 * before shapes were recorded, or gone, or a row from before versions were), the oldest stored
 * version of the site's template folder with a shape — said in `instead`.
 */
export function fromVersion(row: JobRow, site: Site, blueprints: readonly Blueprint[], target: string): (FromVersion & { shape: TemplateShape }) | undefined {
    const own = row.blueprintVersion === undefined ? undefined : blueprints.find((known) => known.version === row.blueprintVersion);
    if (own?.shape) return { version: own.version, shape: own.shape };
    const oldest = [...blueprints]
        .sort((a, b) => compareText(a.builtAt, b.builtAt) || compareText(a.version, b.version))
        .find((known) => known.templateFolderId === site.templateFolderId && known.shape);
    if (!oldest) return undefined;
    const why =
        row.blueprintVersion === undefined
            ? "its row names no template version"
            : own
              ? `its version ${row.blueprintVersion} was stored before versions recorded their shape`
              : `its version ${row.blueprintVersion} is no longer stored`;
    const same = oldest.version === target ? " (the target itself: what the template changed before it cannot be told from a customer's edit, and is not planned)" : "";
    return {
        version: oldest.version,
        recorded: row.blueprintVersion ?? null,
        instead: `${why}: planned from the oldest version with a shape, ${oldest.version}${same}`,
        shape: oldest.shape!,
    };
}

/**
 * One product's plan from `from` to `target`: its copies read through `smartsheet` (one listing
 * of its folder, a `getSheet` and a `getSummary` per copy), compared three-way. The same state
 * gives the same plan. Throws what the reads throw (`ProductUnreadableError` without a folder).
 */
export async function planProduct(
    smartsheet: SmartsheetPort,
    row: JobRow,
    from: FromVersion & { shape: TemplateShape },
    target: TemplateShape,
): Promise<{ plan: ConvergencePlan; notes: string[]; reads: SheetRead[] }> {
    // Rows written before the template's sheet names were recorded name none: their copies were named from the version's sheets.
    const templates = row.templates.length > 0 ? row.templates : from.shape.sheets.map((sheet) => sheet.name);
    const reads = await readCopies(smartsheet, row, templates);
    const product = shapeOfProduct({ productCode: row.productCode, productName: row.productName, templates, reads });
    const plan = planConvergence({ from: from.shape, to: target, product, productCode: row.productCode });
    const notes = [
        ...(from.instead ? [from.instead] : []),
        ...(row.templates.length === 0 ? [`its row names no template sheets: its copies are looked for under the names version ${from.version}'s sheets give`] : []),
        ...(row.copiesAnalysed || !row.blueprintSettled
            ? [`its copies were made while the template was being edited: they may be of a later state than version ${row.blueprintVersion ?? "(none)"}, the one it was accepted with`]
            : []),
    ];
    return { plan, notes, reads };
}

class ProductUnreadableError extends Error implements DeclaresFailureKind {
    readonly failureKind = "permanent" as const;

    constructor(message: string) {
        super(message);
        this.name = "ProductUnreadableError";
    }
}

/** The product's copies as provisioning named them: one listing of its folder, then `getSheet` and `getSummary` of each. */
async function readCopies(smartsheet: SmartsheetPort, row: JobRow, templates: readonly string[]): Promise<SheetRead[]> {
    if (row.folderId === undefined) throw new ProductUnreadableError("its row records no product folder");
    const names = new Set(Object.values(composeProductNames(row.productCode, row.productName, templates).sheets));
    const children = await smartsheet.listFolderChildren(row.folderId, ["sheets"]);
    const copies = children.filter((child) => names.has(child.name)).sort((a, b) => compareText(a.name, b.name) || a.id - b.id);
    const reads: SheetRead[] = [];
    for (const copy of copies) reads.push(await readSheetForAnalysis(smartsheet, copy.id));
    return reads;
}

function positive(counts: Record<string, number>): Record<string, number> {
    return Object.fromEntries(Object.entries(counts).filter(([, count]) => count > 0));
}

/** One line per target, per product (its plan indented beneath), per product skipped, and the total. */
export function describeConvergePlans(plans: Omit<ConvergePlans, "lines">): string[] {
    const lines: string[] = [];
    for (const target of plans.targets) {
        lines.push(
            `site ${target.site}: to template version ${target.version} (${target.source === "now" ? "the template folder as it is now" : `stored, built ${target.builtAt}`})`,
        );
    }
    for (const left of plans.sitesLeftOut) lines.push(`site ${left.site}: left out, ${left.reason}`);
    for (const product of plans.products) {
        const { plan } = product;
        const upToDate = plan.changes.length === 0 && plan.conflicts.length === 0 ? ", up to date" : "";
        lines.push(
            `product ${product.productCode} (site ${product.site}, job ${product.jobKey}): from version ${product.from.version}, ` +
                `${counted(plan.changes.length, "change")}, ${counted(plan.conflicts.length, "conflict")}${upToDate}`,
        );
        lines.push(...product.notes.map((note) => `  note: ${note}`));
        lines.push(...describePlan(plan).map((line) => `  ${line}`));
    }
    for (const skipped of plans.skipped) lines.push(`product ${skipped.productCode} (site ${skipped.site}, job ${skipped.jobKey}): not planned, ${skipped.reason}`);
    for (const invalid of plans.invalidJobs) lines.push(`job ${invalid.jobKey}: its row does not parse, not planned (${invalid.reason})`);
    const { total } = plans;
    const byKind = Object.entries(total.changesByKind).map(([kind, count]) => `${kind} ${count}`);
    lines.push(
        `total: ${counted(total.products, "product")}, ${counted(total.changes, "change")}${byKind.length > 0 ? ` (${byKind.join(", ")})` : ""}, ` +
            `${counted(total.conflicts, "conflict")} (${counted(total.productsWithConflicts, "product")} to park); calls: ${describeCalls(total.calls)}`,
    );
    return lines;
}

function counted(count: number, noun: string): string {
    return `${count} ${noun}${count === 1 ? "" : "s"}`;
}
