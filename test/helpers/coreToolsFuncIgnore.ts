/**
 * How `func azure functionapp publish` (Azure Functions Core Tools) picks the files of the package,
 * modelled from its source: `FileSystemHelpers.GetLocalFiles` walks the app folder, skipping every
 * folder named .git or .vscode and every file named .funcignore, .gitignore, local.settings.json or
 * project.lock.json, at any depth; each other file's path (relative, with "/") goes through
 * `GitIgnoreParser`, built from .funcignore. That parser is not git's: it is a port of the npm
 * package gitignore-parser (codemix), and reads a pattern so:
 *
 * - blank lines and lines starting with "#" are skipped, every line is trimmed;
 * - "!" makes the pattern a re-inclusion; then one leading "/" is dropped (nothing else anchors);
 * - the pattern becomes a regular expression matched at the START of the path and nowhere else,
 *   and with no end: it matches every path it is a prefix of ("*.js" also matches "a.js.map");
 * - "**" matches anything (slashes too), "*" anything but a slash, so "*.ts" matches "a.ts" at
 *   the root only; no other glob character works ("?" and "[...]" match themselves);
 * - a path is in the package when a re-inclusion matches it or no exclusion does: "!" wins
 *   whatever the order of the lines.
 */
export interface FuncIgnore {
    accepts(path: string): boolean;
}

const SKIPPED_FOLDERS = [".git", ".vscode"];
const SKIPPED_FILES = [".funcignore", ".gitignore", "local.settings.json", "project.lock.json"];

export function coreToolsFuncIgnore(content: string): FuncIgnore {
    const exclusions: string[] = [];
    const inclusions: string[] = [];
    for (const raw of content.split("\n")) {
        let line = raw.trim();
        if (line === "" || line.startsWith("#")) continue;
        const include = line.startsWith("!");
        if (include) line = line.slice(1);
        if (line.startsWith("/")) line = line.slice(1);
        (include ? inclusions : exclusions).push(line);
    }
    const excluded = anyOf(exclusions);
    const included = anyOf(inclusions);
    return { accepts: (path) => included.test(path) || !excluded.test(path) };
}

function anyOf(patterns: string[]): RegExp {
    if (patterns.length === 0) return /$^/;
    return new RegExp(`^((${patterns.map(patternSource).join(")|(")}))`);
}

function patternSource(pattern: string): string {
    return pattern
        .replace(/[-[\]/{}()+?.\\^$|]/g, "\\$&")
        .split("**")
        .join("(.+)")
        .split("*")
        .join("([^\\/]+)");
}

/** The files of `paths` (relative, with "/") that Core Tools would put in the package. */
export function publishedFiles(paths: readonly string[], funcignore: string): string[] {
    const parser = coreToolsFuncIgnore(funcignore);
    return paths.filter((path) => {
        const parts = path.split("/");
        const name = parts[parts.length - 1]!.toLowerCase();
        if (parts.slice(0, -1).some((folder) => SKIPPED_FOLDERS.includes(folder.toLowerCase()))) return false;
        if (SKIPPED_FILES.includes(name)) return false;
        return parser.accepts(path);
    });
}
