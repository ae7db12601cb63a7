import { RestError, type TableClient } from "@azure/data-tables";
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
            const entity = await this.table.getEntity<Record<string, unknown>>(PARTITION, version);
            const parts = Number(entity.parts);
            let text = "";
            for (let index = 0; index < parts; index++) text += String(entity[`part${index}`] ?? "");
            return Blueprint.parse(JSON.parse(text));
        } catch (error) {
            if (error instanceof RestError && error.statusCode === 404) return undefined;
            throw error;
        }
    }

    /**
     * A settled blueprint replaces whatever is stored for its version. An unsettled one is only
     * stored where nothing is yet: it never replaces a settled analysis of the same version.
     */
    async save(blueprint: Blueprint): Promise<void> {
        const text = JSON.stringify(blueprint);
        const parts = Math.ceil(text.length / CHUNK);
        if (parts > MAX_CHUNKS) {
            throw new NeedsPersonError(
                `The template's blueprint is ${text.length} characters, more than a table row can hold; ` +
                    `reduce the formulas that use cross-sheet references in the template.`,
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
