import { randomBytes } from "node:crypto";

/** A table or queue name no other test uses: letters and digits, starting with a letter. */
export function uniqueName(prefix: string): string {
    return `${prefix}${randomBytes(4).toString("hex")}`.toLowerCase().replace(/[^a-z0-9]/g, "");
}
