import { odata, RestError, type TableClient } from "@azure/data-tables";
import { Blueprint } from "./Blueprint";
import { NeedsPersonError } from "./errors";

const PARTITION = "blueprint";
/** A Table string property holds 32K UTF-16 characters; an entity at most 1 MB. */
const CHUNK = 30_000;
const MAX_CHUNKS = 15;

/** Blueprints kept in the Jobs table (partition `blueprint`, one row per template version). */
export class BlueprintStore {
    constructor(private readonly table: TableClient) {}

    async get(version: string): Promise<Blueprint | undefined> {
        try {
            return blueprintIn(await this.table.getEntity<Record<string, unknown>>(PARTITION, version));
        } catch (error) {
            if (error instanceof RestError && error.statusCode === 404) return undefined;
            throw error;
        }
    }

    /** Every stored blueprint, oldest first (by when it was built); a row that does not parse is named in `invalid`. */
    async list(): Promise<{ found: Blueprint[]; invalid: Array<{ version: string; reason: string }> }> {
        const found: Blueprint[] = [];
        const invalid: Array<{ version: string; reason: string }> = [];
        const entities = this.table.listEntities<Record<string, unknown>>({ queryOptions: { filter: odata`PartitionKey eq ${PARTITION}` } });
        for await (const entity of entities) {
            try {
                found.push(blueprintIn(entity));
            } catch (error) {
                invalid.push({ version: String(entity.rowKey), reason: error instanceof Error ? error.message : String(error) });
            }
        }
        found.sort((a, b) => (a.builtAt < b.builtAt ? -1 : a.builtAt > b.builtAt ? 1 : a.version < b.version ? -1 : 1));
        return { found, invalid };
    }

    /**
     * A settled blueprint replaces whatever is stored for its version. An unsettled one is only
     * stored where nothing is yet: it never replaces a settled analysis of the same version.
     */
    async save(blueprint: Blueprint): Promise<void> {
        const text = JSON.stringify(blueprint);
        const parts = Math.ceil(text.length / CHUNK);
        if (parts > MAX_CHUNKS) {
            const shape = blueprint.shape ? JSON.stringify(blueprint.shape).length : 0;
            throw new NeedsPersonError(
                `The template's blueprint (version ${blueprint.version}) is ${text.length} characters, ${shape} of them its shape ` +
                    `(every sheet's columns and summary fields), more than a table row holds (${MAX_CHUNKS * CHUNK}); ` +
                    `reduce the template's columns, summary fields or the formulas that use cross-sheet references.`,
            );
        }
        const entity: Record<string, unknown> & { partitionKey: string; rowKey: string } = {
            partitionKey: PARTITION,
            rowKey: blueprint.version,
            kind: "blueprint",
            templateFolderId: String(blueprint.templateFolderId),
            builtAt: blueprint.builtAt,
            parts,
        };
        for (let index = 0; index < parts; index++) entity[`part${index}`] = text.slice(index * CHUNK, (index + 1) * CHUNK);
        if (blueprint.settled) {
            await this.table.upsertEntity(entity, "Replace");
            return;
        }
        try {
            await this.table.createEntity(entity);
        } catch (error) {
            if (!(error instanceof RestError && error.statusCode === 409)) throw error;
        }
    }
}

/** A blueprint row's parts joined and parsed. */
function blueprintIn(entity: Record<string, unknown>): Blueprint {
    const parts = Number(entity.parts);
    let text = "";
    for (let index = 0; index < parts; index++) text += String(entity[`part${index}`] ?? "");
    return Blueprint.parse(JSON.parse(text));
}
