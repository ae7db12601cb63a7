import type { Sheet } from "./model";

/** The ids of the columns with the given titles; `missing` lists the titles the sheet lacks. */
export function columnIdsByTitle<K extends string>(
    sheet: Pick<Sheet, "columns">,
    titles: Record<K, string>,
): { ids: Partial<Record<K, number>>; missing: string[] } {
    const ids: Partial<Record<K, number>> = {};
    const missing: string[] = [];
    for (const [key, title] of Object.entries(titles) as Array<[K, string]>) {
        const column = sheet.columns.find((candidate) => candidate.title === title);
        if (column) ids[key] = column.id;
        else missing.push(title);
    }
    return { ids, missing };
}
