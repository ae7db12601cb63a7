/**
 * ASP.NET-style route templates as HTTP triggers use them: literal segments, `{name}`,
 * optional `{name?}`, defaults `{name=value}`, catch-all `{*rest}`, and constraints
 * `{id:int}`, `{x:alpha}`, `{x:bool}`, `{x:guid}`, `{x:long}`, `{x:double}`, `{x:minlength(n)}`,
 * `{x:maxlength(n)}`, `{x:length(n)}`, `{x:min(n)}`, `{x:max(n)}`, `{x:regex(...)}`.
 * Literal matching is case-insensitive, as in the host.
 */
type Segment =
    | { kind: "literal"; text: string }
    | { kind: "param"; name: string; optional: boolean; catchAll: boolean; defaultValue?: string; constraints: Constraint[] };

type Constraint = (value: string) => boolean;

export interface RouteTemplate {
    template: string;
    segments: Segment[];
    /** Number of literal segments, for ordering routes the way the host prefers specific ones. */
    literalCount: number;
}

export function parseRouteTemplate(template: string): RouteTemplate {
    const trimmed = template.replace(/^\/+|\/+$/g, "");
    const segments: Segment[] = [];
    for (const part of trimmed === "" ? [] : trimmed.split("/")) {
        const match = /^\{(\*)?([A-Za-z_][\w]*)((?::[^{}=?]+(?:\([^)]*\))?)*)(\?)?(?:=([^}]*))?\}$/.exec(part);
        if (!match) {
            if (/[{}]/.test(part)) throw new Error(`Route template '${template}': segment '${part}' mixes literal text and parameters, which the local host does not support. Use one parameter per segment.`);
            segments.push({ kind: "literal", text: part });
            continue;
        }
        const [, star, name, constraintText, optional, defaultValue] = match;
        segments.push({
            kind: "param",
            name: name as string,
            catchAll: star === "*",
            optional: optional === "?" || star === "*" || defaultValue !== undefined,
            defaultValue,
            constraints: parseConstraints(constraintText ?? "", template),
        });
    }
    return { template, segments, literalCount: segments.filter((s) => s.kind === "literal").length };
}

function parseConstraints(text: string, template: string): Constraint[] {
    const constraints: Constraint[] = [];
    const pattern = /:([a-zA-Z]+)(?:\(([^)]*)\))?/g;
    let match: RegExpExecArray | null;
    while ((match = pattern.exec(text)) !== null) {
        const name = (match[1] as string).toLowerCase();
        const arg = match[2];
        const num = Number(arg);
        switch (name) {
            case "int":
                constraints.push((v) => /^-?\d+$/.test(v) && Math.abs(Number(v)) <= 2 ** 31);
                break;
            case "long":
                constraints.push((v) => /^-?\d+$/.test(v));
                break;
            case "double":
            case "decimal":
            case "float":
                constraints.push((v) => v.trim() !== "" && Number.isFinite(Number(v)));
                break;
            case "bool":
                constraints.push((v) => /^(true|false)$/i.test(v));
                break;
            case "alpha":
                constraints.push((v) => /^[a-z]+$/i.test(v));
                break;
            case "guid":
                constraints.push((v) => /^\{?[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\}?$/i.test(v));
                break;
            case "datetime":
                constraints.push((v) => !Number.isNaN(Date.parse(v)));
                break;
            case "minlength":
                constraints.push((v) => v.length >= num);
                break;
            case "maxlength":
                constraints.push((v) => v.length <= num);
                break;
            case "length":
                constraints.push((v) => v.length === num);
                break;
            case "min":
                constraints.push((v) => Number(v) >= num);
                break;
            case "max":
                constraints.push((v) => Number(v) <= num);
                break;
            case "regex": {
                const regex = new RegExp(arg ?? "", "i");
                constraints.push((v) => regex.test(v));
                break;
            }
            default:
                throw new Error(`Route template '${template}': constraint ':${name}' is not supported by the local host.`);
        }
    }
    return constraints;
}

/** Matches a decoded path (without the route prefix) and returns the route values, or undefined. */
export function matchRoute(route: RouteTemplate, path: string): Record<string, string> | undefined {
    const trimmed = path.replace(/^\/+|\/+$/g, "");
    const parts = trimmed === "" ? [] : trimmed.split("/").map(safeDecode);
    const values: Record<string, string> = {};
    let index = 0;
    for (const segment of route.segments) {
        if (segment.kind === "literal") {
            const part = parts[index];
            if (part === undefined || part.toLowerCase() !== segment.text.toLowerCase()) return undefined;
            index++;
            continue;
        }
        if (segment.catchAll) {
            const rest = parts.slice(index).join("/");
            if (rest !== "") values[segment.name] = rest;
            else if (segment.defaultValue !== undefined) values[segment.name] = segment.defaultValue;
            index = parts.length;
            continue;
        }
        const part = parts[index];
        if (part === undefined || part === "") {
            if (!segment.optional) return undefined;
            if (segment.defaultValue !== undefined) values[segment.name] = segment.defaultValue;
            continue;
        }
        if (!segment.constraints.every((check) => check(part))) return undefined;
        values[segment.name] = part;
        index++;
    }
    return index === parts.length ? values : undefined;
}

function safeDecode(part: string): string {
    try {
        return decodeURIComponent(part);
    } catch {
        return part;
    }
}
