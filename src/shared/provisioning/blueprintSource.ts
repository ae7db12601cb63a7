import type { JobRow } from "../jobs/JobRow";
import type { SmartsheetPort } from "../smartsheet/SmartsheetPort";
import { Blueprint, blueprintVersion, holders, readBlueprint } from "./Blueprint";
import { NeedsPersonError } from "./errors";
import type { ProvisioningDeps } from "./ProvisioningDeps";

/**
 * The blueprint of the template folder as it is now: one listing of the folder, plus a full
 * read of the template only when the template changed since the last analysis.
 */
export async function prepareBlueprint(
    deps: Pick<ProvisioningDeps, "blueprints" | "log" | "now">,
    smartsheet: SmartsheetPort,
    templateFolderId: number,
): Promise<Blueprint> {
    const templateSheets = (await smartsheet.listFolderChildren(templateFolderId, ["sheets"])).filter(
        (child) => child.resourceType === "sheet",
    );
    if (templateSheets.length === 0) {
        throw new NeedsPersonError(`The template folder ${templateFolderId} holds no sheets; put the template sheets back.`);
    }
    const names = templateSheets.map((sheet) => sheet.name.trim());
    const repeated = names.filter((name, index) => names.indexOf(name) !== index);
    if (repeated.length > 0) {
        throw new NeedsPersonError(`The template folder has two sheets named "${repeated[0]}"; template sheet names must be distinct.`);
    }
    const version = blueprintVersion(templateSheets);
    const known = await deps.blueprints.get(version);
    if (known) return known;

    const blueprint = await readBlueprint(smartsheet, templateFolderId, templateSheets, deps.now());
    await deps.blueprints.save(blueprint);
    deps.log.info(
        `template ${version}: analysed ${blueprint.sheets.length} sheets; ` +
            `${holders(blueprint).map((sheet) => sheet.name).join(", ") || "none"} use references into the template`,
    );
    return blueprint;
}

/** The blueprint a job was accepted with; rebuilt from the template if it went missing. */
export async function loadBlueprint(deps: ProvisioningDeps, smartsheet: SmartsheetPort, row: JobRow): Promise<Blueprint> {
    if (row.blueprintVersion) {
        const stored = await deps.blueprints.get(row.blueprintVersion);
        if (stored) return stored;
        deps.log.warn(`blueprint ${row.blueprintVersion} is missing from the table; analysing the template again`);
    }
    return prepareBlueprint(deps, smartsheet, deps.config.TEMPLATE_FOLDER_ID);
}
