import { apiErrors } from "./ApiError";

/** 400/1041 when a name is longer than the limit, counted in UTF-16 code units as Smartsheet's Java does. */
export function assertNameFits(name: string, attribute: "sheet.name" | "folder.name", limit: number): void {
    if (name.length > limit) throw apiErrors.tooLong(attribute, limit, name.length);
}
