import { apiErrors } from "./ApiError";
import { IdSource } from "./IdSource";
import type { ColumnType, SimColumn, SimContainer, SimRow, SimSheet } from "./model";
import type { SheetChange } from "./Webhooks";

export interface NewColumn {
    title: string;
    type?: ColumnType;
    primary?: boolean;
    options?: string[];
    formula?: string;
}

export interface CopyInclude {
    data: boolean;
    cellLinks: boolean;
}

/** The account's folders and sheets, with the id source and clock every write uses. */
export class Workspace {
    readonly containers = new Map<number, SimContainer>();
    readonly sheets = new Map<number, SimSheet>();
    private readonly ids: IdSource;
    private seq = 0;
    /** Changes to sheets since the last `takeChanges()`: what webhooks report. */
    private changes: Array<{ sheetId: number; change: SheetChange }> = [];

    constructor(
        seed: number,
        private readonly clock: () => number = Date.now,
    ) {
        this.ids = new IdSource(seed);
    }

    nextId(): number {
        return this.ids.nextId();
    }

    now(): number {
        return this.clock();
    }

    createWorkspace(name: string): SimContainer {
        return this.addContainer("workspace", null, name, "workspaces");
    }

    createFolder(parentId: number, name: string): SimContainer {
        return this.addContainer("folder", parentId, name, "folders");
    }

    createSheet(containerId: number, name: string, columns: NewColumn[]): SimSheet {
        return this.addSheet(containerId, name, {
            columns: columns.map((spec) => ({
                id: this.nextId(),
                title: spec.title,
                type: spec.type ?? "TEXT_NUMBER",
                primary: spec.primary ?? false,
                ...(spec.options ? { options: [...spec.options] } : {}),
                ...(spec.formula ? { formula: spec.formula } : {}),
                width: 150,
            })),
            rows: [],
            crossSheetReferences: [],
            summaryFields: [],
        });
    }

    /** A folder (not the workspace), or 404. */
    folder(id: number): SimContainer {
        return this.container(id, "folder");
    }

    container(id: number, kind: SimContainer["kind"]): SimContainer {
        const container = this.containers.get(id);
        if (!container || container.kind !== kind) throw apiErrors.notFound();
        return container;
    }

    sheet(id: number): SimSheet {
        const sheet = this.sheets.get(id);
        if (!sheet) throw apiErrors.notFound();
        return sheet;
    }

    /** Folders and sheets directly inside a container, in creation order. */
    children(containerId: number): Array<SimContainer | SimSheet> {
        const folders = [...this.containers.values()].filter((c) => c.parentId === containerId);
        const sheets = [...this.sheets.values()].filter((s) => s.containerId === containerId);
        return [...folders, ...sheets].sort((a, b) => a.seq - b.seq);
    }

    /**
     * A new sheet with new sheet, column, row, reference and summary-field ids. Columns (with their
     * formulas) and summary fields always come along; rows only with `data`; cross-sheet references
     * only with `cellLinks`, still pointing at the same source sheet, rows and columns.
     */
    copySheet(source: SimSheet, containerId: number, newName: string, include: CopyInclude): SimSheet {
        const now = this.now();
        const columnIds = new Map<number, number>();
        const columns: SimColumn[] = source.columns.map((column) => {
            const id = this.nextId();
            columnIds.set(column.id, id);
            return { ...column, id, ...(column.options ? { options: [...column.options] } : {}) };
        });
        const rowIds = new Map<number, number>();
        const rows: SimRow[] = include.data
            ? source.rows.map((row) => {
                  const id = this.nextId();
                  rowIds.set(row.id, id);
                  const parentId = row.parentId === undefined ? undefined : rowIds.get(row.parentId);
                  return {
                      id,
                      ...(parentId === undefined ? {} : { parentId }),
                      createdAt: now,
                      modifiedAt: now,
                      cells: new Map(
                          [...row.cells].flatMap(([columnId, cell]) => {
                              const newColumnId = columnIds.get(columnId);
                              return newColumnId === undefined ? [] : [[newColumnId, structuredClone(cell)] as const];
                          }),
                      ),
                  };
              })
            : [];
        return this.addSheet(containerId, newName, {
            copiedFromSheetId: source.id,
            columns,
            rows,
            crossSheetReferences: include.cellLinks
                ? source.crossSheetReferences.map((reference) => ({ ...reference, id: this.nextId() }))
                : [],
            summaryFields: source.summaryFields.map((field) => ({
                ...structuredClone(field),
                id: this.nextId(),
                createdAt: now,
                modifiedAt: now,
            })),
        });
    }

    deleteSheet(id: number): void {
        this.sheet(id);
        this.sheets.delete(id);
    }

    /** Deletes a folder with everything in it, as Smartsheet does. */
    deleteFolder(id: number): void {
        this.folder(id);
        for (const child of this.children(id)) {
            if ("kind" in child) this.deleteFolder(child.id);
            else this.sheets.delete(child.id);
        }
        this.containers.delete(id);
    }

    /** Records a change to a sheet: a new version and modification time (and a "sheet updated" event). */
    touch(sheet: SimSheet): number {
        this.recordChange(sheet, { objectType: "sheet", eventType: "updated", id: sheet.id });
        sheet.version += 1;
        sheet.modifiedAt = this.now();
        return sheet.modifiedAt;
    }

    /** A change a webhook on the sheet reports (rows, cells, columns). */
    recordChange(sheet: SimSheet, change: SheetChange): void {
        this.changes.push({ sheetId: sheet.id, change });
    }

    /** The changes recorded since the last call, oldest first. */
    takeChanges(): Array<{ sheetId: number; change: SheetChange }> {
        const taken = this.changes;
        this.changes = [];
        return taken;
    }

    private addSheet(
        containerId: number,
        name: string,
        contents: Pick<SimSheet, "columns" | "rows" | "crossSheetReferences" | "summaryFields" | "copiedFromSheetId">,
    ): SimSheet {
        const now = this.now();
        const sheet: SimSheet = {
            id: this.nextId(),
            name,
            containerId,
            permalink: this.newPermalink("sheets"),
            version: 1,
            createdAt: now,
            modifiedAt: now,
            seq: this.seq++,
            ...contents,
        };
        this.sheets.set(sheet.id, sheet);
        return sheet;
    }

    private addContainer(kind: SimContainer["kind"], parentId: number | null, name: string, path: "folders" | "workspaces"): SimContainer {
        const now = this.now();
        const container: SimContainer = {
            kind,
            id: this.nextId(),
            name,
            parentId,
            permalink: this.newPermalink(path),
            createdAt: now,
            modifiedAt: now,
            seq: this.seq++,
        };
        this.containers.set(container.id, container);
        return container;
    }

    newPermalink(path: "sheets" | "folders" | "workspaces"): string {
        return `https://app.smartsheet.com/${path}/${this.ids.token(40)}`;
    }
}
