import { shapeOfTemplate, type TemplateShape } from "../convergence/TemplateShape";
import type { JobRow } from "../jobs/JobRow";
import type { FolderChild } from "../smartsheet/model";
import type { SmartsheetPort } from "../smartsheet/SmartsheetPort";
import type { Site } from "../sites/Sites";
import { analysisSettles, Blueprint, blueprintOf, blueprintVersion, outsideSheetIds, readOutsideSheets, readTemplateSheets, type SheetRead } from "./Blueprint";
import type { ProvisioningDeps } from "./ProvisioningDeps";
import { sheetsToRemap, templateSheetsIn } from "./templateRules";

type BlueprintDeps = Pick<ProvisioningDeps, "blueprints" | "log" | "now" | "timing">;

/** The template folder's sheets (one listing), refused when a person has to tidy the template first. */
export async function listTemplateSheets(smartsheet: SmartsheetPort, templateFolderId: number): Promise<FolderChild[]> {
    return templateSheetsIn(templateFolderId, await smartsheet.listFolderChildren(templateFolderId, ["sheets"]));
}

/**
 * The blueprint of the template folder as it is now: one listing of the folder, plus a full
 * read of the template only when the template changed since the last analysis, or when that
 * analysis was too close to an edit to be sure of the version and a new one now can be.
 */
export async function prepareBlueprint(deps: BlueprintDeps, smartsheet: SmartsheetPort, templateFolderId: number): Promise<Blueprint> {
    const templateSheets = await listTemplateSheets(smartsheet, templateFolderId);
    const known = await deps.blueprints.get(blueprintVersion(templateSheets));
    if (known && (known.settled || !analysisSettles(templateSheets, deps.now(), deps.timing.clockSkewMs))) return known;
    return (await analyseTemplate(deps, smartsheet, templateFolderId, templateSheets)).blueprint;
}

/**
 * Reads every sheet of the template as listed, and stores its blueprint unless this version
 * was analysed before. The reads come back too: they map a copy's references (which keep the
 * template's row and column ids) to row numbers and column titles.
 */
export async function analyseTemplate(
    deps: BlueprintDeps,
    smartsheet: SmartsheetPort,
    templateFolderId: number,
    templateSheets: readonly FolderChild[],
): Promise<{ blueprint: Blueprint; reads: Map<number, SheetRead> }> {
    const settled = analysisSettles(templateSheets, deps.now(), deps.timing.clockSkewMs);
    const reads = await readTemplateSheets(smartsheet, templateSheets);
    const known = await deps.blueprints.get(blueprintVersion(templateSheets));
    if (known && (known.settled || !settled)) {
        if (known.shape) return { blueprint: known, reads };
        // Stored before shapes were recorded: these reads are of the same version, so they give it its shape.
        const shaped = Blueprint.parse({ ...known, shape: shapeOfTemplate(templateSheets.map((listed) => reads.get(listed.id)!)) });
        await deps.blueprints.save(shaped);
        deps.log.info(`template ${known.version}: its shape recorded (${shaped.shape!.sheets.length} sheets)`);
        return { blueprint: shaped, reads };
    }

    const outsideSheets = await readOutsideSheets(smartsheet, outsideSheetIds(templateSheets, reads), templateSheets.map((listed) => listed.name));
    const blueprint = blueprintOf(templateFolderId, templateSheets, reads, outsideSheets, deps.now(), settled);
    await deps.blueprints.save(blueprint);
    deps.log.info(
        `template ${blueprint.version}: analysed ${blueprint.sheets.length} sheets; ` +
            `${sheetsToRemap(blueprint.sheets).map((sheet) => sheet.name).join(", ") || "none"} use references into the template` +
            (settled ? "" : "; the template was edited moments ago, so jobs accepted with this analysis remap from their own copies"),
    );
    return { blueprint, reads };
}

/**
 * The blueprint of the template folder as it is now, with its shape: `prepareBlueprint`, and a
 * full read of the template when its version was stored before shapes were recorded (once per
 * version: the shape is stored with it).
 */
export async function prepareShapedBlueprint(deps: BlueprintDeps, smartsheet: SmartsheetPort, templateFolderId: number): Promise<Blueprint & { shape: TemplateShape }> {
    const templateSheets = await listTemplateSheets(smartsheet, templateFolderId);
    const known = await deps.blueprints.get(blueprintVersion(templateSheets));
    const fresh = !known || (!known.settled && analysisSettles(templateSheets, deps.now(), deps.timing.clockSkewMs));
    const blueprint = known?.shape && !fresh ? known : (await analyseTemplate(deps, smartsheet, templateFolderId, templateSheets)).blueprint;
    if (!blueprint.shape) throw new Error(`template ${blueprint.version}: analysed without a shape; this is a bug`);
    return { ...blueprint, shape: blueprint.shape };
}

/** The blueprint a job was accepted with; rebuilt from its site's template if it went missing. */
export async function loadBlueprint(deps: ProvisioningDeps, site: Site, smartsheet: SmartsheetPort, row: JobRow): Promise<Blueprint> {
    if (row.blueprintVersion) {
        const stored = await deps.blueprints.get(row.blueprintVersion);
        if (stored) return stored;
        deps.log.warn(`blueprint ${row.blueprintVersion} is missing from the table; analysing the template again`);
    }
    return prepareBlueprint(deps, smartsheet, site.templateFolderId);
}
