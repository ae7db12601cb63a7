import { readdirSync, statSync } from "node:fs";
import path from "node:path";

/**
 * Expands a package.json "main" pattern relative to `cwd` the way the Node worker's globby call
 * does for the cases apps use: `*`, `?`, `[...]`, `**` and `{a,b}`. Dot-files are skipped.
 * Returns paths relative to `cwd` with forward slashes, sorted.
 */
export function expandGlob(pattern: string, cwd: string): string[] {
    const found = new Set<string>();
    for (const expanded of expandBraces(pattern.replace(/\\/g, "/").replace(/^\.\//, ""))) {
        walk(cwd, "", expanded.split("/").filter((s) => s.length > 0 && s !== "."), found);
    }
    return [...found].sort();
}

export function expandBraces(pattern: string): string[] {
    const open = pattern.indexOf("{");
    if (open < 0) return [pattern];
    let depth = 0;
    for (let i = open; i < pattern.length; i++) {
        if (pattern[i] === "{") depth++;
        else if (pattern[i] === "}" && --depth === 0) {
            const inner = pattern.slice(open + 1, i);
            const options: string[] = [];
            let level = 0;
            let start = 0;
            for (let j = 0; j < inner.length; j++) {
                if (inner[j] === "{") level++;
                else if (inner[j] === "}") level--;
                else if (inner[j] === "," && level === 0) {
                    options.push(inner.slice(start, j));
                    start = j + 1;
                }
            }
            options.push(inner.slice(start));
            const prefix = pattern.slice(0, open);
            const suffix = pattern.slice(i + 1);
            return options.flatMap((option) => expandBraces(prefix + option + suffix));
        }
    }
    return [pattern];
}

function walk(root: string, relative: string, segments: string[], found: Set<string>): void {
    const [segment, ...rest] = segments;
    const absolute = path.join(root, relative);
    if (segment === undefined) {
        if (isFile(absolute)) found.add(relative);
        return;
    }
    if (segment === "**") {
        walk(root, relative, rest, found);
        for (const entry of listDirectories(absolute)) walk(root, join(relative, entry), segments, found);
        return;
    }
    if (!/[*?[]/.test(segment)) {
        walk(root, join(relative, segment), rest, found);
        return;
    }
    const matcher = segmentRegex(segment);
    for (const entry of safeReaddir(absolute)) {
        if (entry.startsWith(".") || !matcher.test(entry)) continue;
        walk(root, join(relative, entry), rest, found);
    }
}

function segmentRegex(segment: string): RegExp {
    let source = "";
    for (let i = 0; i < segment.length; i++) {
        const c = segment[i] as string;
        if (c === "*") source += "[^/]*";
        else if (c === "?") source += "[^/]";
        else if (c === "[") {
            const close = segment.indexOf("]", i + 1);
            if (close < 0) source += "\\[";
            else {
                source += `[${segment.slice(i + 1, close).replace(/^!/, "^")}]`;
                i = close;
            }
        } else source += c.replace(/[.+^${}()|\\]/g, "\\$&");
    }
    return new RegExp(`^${source}$`);
}

function join(relative: string, entry: string): string {
    return relative ? `${relative}/${entry}` : entry;
}

function safeReaddir(dir: string): string[] {
    try {
        return readdirSync(dir);
    } catch {
        return [];
    }
}

function listDirectories(dir: string): string[] {
    return safeReaddir(dir).filter((entry) => !entry.startsWith(".") && isDirectory(path.join(dir, entry)));
}

function isFile(p: string): boolean {
    try {
        return statSync(p).isFile();
    } catch {
        return false;
    }
}

function isDirectory(p: string): boolean {
    try {
        return statSync(p).isDirectory();
    } catch {
        return false;
    }
}
