import { z } from "zod";
import { apiErrors } from "./ApiError";

/**
 * Validates a request body, answering as Smartsheet does: 1024 when there is no body, 1012 for a
 * missing attribute, 1018 for an attribute with an unusable value.
 */
export function parseBody<T extends z.ZodType>(schema: T, body: unknown, detail?: Record<string, unknown>): z.output<T> {
    if (body === undefined) throw apiErrors.bodyRequired();
    const result = schema.safeParse(body, { reportInput: true });
    if (result.success) return result.data;
    const issue = result.error.issues[0];
    const path = attributePath(issue?.path ?? []);
    if (!issue || !("input" in issue) || issue.input === undefined) throw apiErrors.missingAttribute(path, detail);
    throw apiErrors.invalidValue(issue.input, path, detail);
}

function attributePath(path: readonly PropertyKey[]): string {
    if (path.length === 0) return "body";
    return path.map((part, i) => (typeof part === "number" ? `[${part}]` : `${i > 0 ? "." : ""}${String(part)}`)).join("");
}

/** An id attribute: a JSON number, or a numeric string (Smartsheet's JSON reader coerces it). */
export const JsonId = z.union([z.number().int().nonnegative(), z.string().regex(/^\d+$/).transform(Number)]);
