import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

/**
 * A small reader for the Bicep this repository writes — not a Bicep compiler. It finds the top-level
 * statements (param, var, resource, module, import, output, func) by scanning with strings and
 * comments skipped, and takes apart what the checks need: resource types and API versions, module
 * references, object literals (their keys and value texts) and string literals. It throws on text it
 * cannot read (an unterminated string or bracket), so a check never passes on a file it misread.
 */

export interface Statement {
    keyword: "param" | "var" | "resource" | "module" | "import" | "output" | "func" | "targetScope" | "metadata" | "type";
    /** The declared name (the symbol), or "" for targetScope and import. */
    name: string;
    /** Everything after the name (or keyword) up to the end of the statement. */
    rest: string;
    line: number;
}

export interface ResourceDeclaration {
    file: string;
    symbol: string;
    type: string;
    apiVersion: string;
    existing: boolean;
    /** The resource's body: the object literal (or the loop or condition around it). */
    body: string;
    line: number;
}

export interface ModuleReference {
    file: string;
    symbol: string;
    /** `br/public:avm/res/web/site:0.15.1` or a path relative to the file, e.g. `app/api.bicep`. */
    target: string;
    body: string;
    line: number;
}

export interface ObjectEntry {
    key: string;
    /** The value's Bicep text, trimmed. */
    value: string;
}

export interface BicepFile {
    path: string;
    text: string;
    statements: Statement[];
    resources: ResourceDeclaration[];
    modules: ModuleReference[];
    /** `var` name → its expression text. */
    vars: Map<string, string>;
    /** `param` name → its declaration after the name: type and default, e.g. `string = 'x'`. */
    params: Map<string, string>;
}

const KEYWORDS = new Set(["param", "var", "resource", "module", "import", "output", "func", "targetScope", "metadata", "type"]);

/** Every .bicep file under `dir`, read. */
export function readBicepTree(dir: string): BicepFile[] {
    const files: BicepFile[] = [];
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) files.push(...readBicepTree(full));
        else if (entry.name.endsWith(".bicep")) files.push(readBicep(full));
    }
    return files.sort((a, b) => a.path.localeCompare(b.path));
}

export function readBicep(file: string): BicepFile {
    return parseBicep(file, readFileSync(file, "utf8"));
}

export function parseBicep(file: string, text: string): BicepFile {
    const statements = topLevelStatements(file, text);
    const resources: ResourceDeclaration[] = [];
    const modules: ModuleReference[] = [];
    const vars = new Map<string, string>();
    const params = new Map<string, string>();
    for (const statement of statements) {
        if (statement.keyword === "resource") {
            const match = /^'([^'@]+)@([^']+)'\s+(existing\s+)?=\s*([\s\S]*)$/.exec(statement.rest);
            if (!match) throw new Error(`${file}:${statement.line}: cannot read the resource declaration ${statement.name}`);
            resources.push({
                file,
                symbol: statement.name,
                type: match[1]!,
                apiVersion: match[2]!,
                existing: Boolean(match[3]),
                body: match[4]!.trim(),
                line: statement.line,
            });
        } else if (statement.keyword === "module") {
            const match = /^'([^']+)'\s*=\s*([\s\S]*)$/.exec(statement.rest);
            if (!match) throw new Error(`${file}:${statement.line}: cannot read the module reference ${statement.name}`);
            modules.push({ file, symbol: statement.name, target: match[1]!, body: match[2]!.trim(), line: statement.line });
        } else if (statement.keyword === "var") {
            const match = /^=\s*([\s\S]*)$/.exec(statement.rest);
            if (!match) throw new Error(`${file}:${statement.line}: cannot read var ${statement.name}`);
            vars.set(statement.name, match[1]!.trim());
        } else if (statement.keyword === "param") {
            params.set(statement.name, statement.rest.trim());
        }
    }
    return { path: file, text, statements, resources, modules, vars, params };
}

/**
 * Splits the file into top-level statements: a statement starts at a line that begins (at column 0,
 * outside any bracket, string or comment) with a keyword; decorators and comments before it are dropped.
 */
function topLevelStatements(file: string, text: string): Statement[] {
    const starts: Array<{ at: number; line: number }> = [];
    const decorators: number[] = [];
    scan(file, text, (index, depth, lineStart, line) => {
        if (depth !== 0 || !lineStart) return;
        if (text[index] === "@") decorators.push(index);
        const word = /^[A-Za-z]+/.exec(text.slice(index, index + 20))?.[0];
        if (word && KEYWORDS.has(word)) starts.push({ at: index, line });
    });
    return starts.map((start, i) => {
        const next = i + 1 < starts.length ? starts[i + 1]!.at : text.length;
        const end = Math.min(next, ...decorators.filter((at) => at > start.at));
        const source = withoutTrailingComments(text.slice(start.at, end));
        const keyword = /^[A-Za-z]+/.exec(source)![0] as Statement["keyword"];
        const afterKeyword = source.slice(keyword.length).trimStart();
        if (keyword === "targetScope" || keyword === "import") return { keyword, name: "", rest: afterKeyword, line: start.line };
        const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(afterKeyword)?.[0];
        if (!name) throw new Error(`${file}:${start.line}: ${keyword} without a name`);
        return { keyword, name, rest: afterKeyword.slice(name.length).trim(), line: start.line };
    });
}

/** The statement without the blank and comment lines that belong to the next one. */
function withoutTrailingComments(source: string): string {
    const lines = source.split("\n");
    while (lines.length > 1) {
        const last = lines[lines.length - 1]!.trim();
        if (last === "" || last.startsWith("//")) lines.pop();
        else break;
    }
    return lines.join("\n").trim();
}

/**
 * Walks `text` calling `visit` at each character outside strings and comments, with the bracket depth,
 * whether only blanks precede it on its line, and its line number.
 */
function scan(file: string, text: string, visit: (index: number, depth: number, lineStart: boolean, line: number) => void): void {
    let depth = 0;
    let line = 1;
    let lineStart = true;
    let i = 0;
    while (i < text.length) {
        const char = text[i]!;
        if (char === "\n") {
            line += 1;
            lineStart = true;
            i += 1;
            continue;
        }
        if (text.startsWith("//", i)) {
            const end = text.indexOf("\n", i);
            i = end < 0 ? text.length : end;
            continue;
        }
        if (text.startsWith("/*", i)) {
            const end = text.indexOf("*/", i + 2);
            if (end < 0) throw new Error(`${file}:${line}: unterminated /* comment`);
            line += text.slice(i, end).split("\n").length - 1;
            i = end + 2;
            continue;
        }
        if (text.startsWith("'''", i)) {
            const end = text.indexOf("'''", i + 3);
            if (end < 0) throw new Error(`${file}:${line}: unterminated ''' string`);
            visit(i, depth, lineStart, line);
            line += text.slice(i, end).split("\n").length - 1;
            lineStart = false;
            i = end + 3;
            continue;
        }
        if (char === "'") {
            visit(i, depth, lineStart, line);
            i = endOfString(file, text, i, line);
            lineStart = false;
            continue;
        }
        if (char === " " || char === "\t" || char === "\r") {
            i += 1;
            continue;
        }
        visit(i, depth, lineStart, line);
        lineStart = false;
        if (char === "{" || char === "[" || char === "(") depth += 1;
        else if (char === "}" || char === "]" || char === ")") {
            depth -= 1;
            if (depth < 0) throw new Error(`${file}:${line}: unbalanced '${char}'`);
        }
        i += 1;
    }
    if (depth !== 0) throw new Error(`${file}: unbalanced brackets at the end of the file`);
}

/** Index just past the single-quoted string starting at `start`, interpolations `${…}` included. */
function endOfString(file: string, text: string, start: number, line: number): number {
    let i = start + 1;
    while (i < text.length) {
        const char = text[i]!;
        if (char === "\\") i += 2;
        else if (char === "'") return i + 1;
        else if (char === "\n") break;
        else if (text.startsWith("${", i)) {
            let depth = 1;
            i += 2;
            while (i < text.length && depth > 0) {
                if (text[i] === "'") i = endOfString(file, text, i, line);
                else {
                    if (text[i] === "{") depth += 1;
                    else if (text[i] === "}") depth -= 1;
                    i += 1;
                }
            }
        } else i += 1;
    }
    throw new Error(`${file}:${line}: unterminated string`);
}

/** The object literals at the outermost level of an expression: `{…}`, `cond ? {} : {…}`, `[for x in y: {…}]`, `if (c) {…}`. */
export function objectLiteralsIn(expression: string): string[] {
    const literals: string[] = [];
    let start = -1;
    let startDepth = 0;
    scan("(expression)", expression, (index, depth) => {
        const char = expression[index];
        if (char === "{" && start < 0) {
            start = index;
            startDepth = depth;
        } else if (char === "}" && start >= 0 && depth === startDepth + 1) {
            literals.push(expression.slice(start, index + 1));
            start = -1;
        }
    });
    return literals;
}

/** The entries of one object literal `{ key: value … }`: one per line at its top level (Bicep separates them by newlines). */
export function objectEntries(literal: string): ObjectEntry[] {
    const inner = literal.trim();
    if (!inner.startsWith("{") || !inner.endsWith("}")) throw new Error(`not an object literal: ${inner.slice(0, 60)}`);
    const body = inner.slice(1, -1);
    const entries: ObjectEntry[] = [];
    const boundaries: number[] = [];
    scan("(object)", body, (index, depth, lineStart) => {
        if (depth === 0 && lineStart) boundaries.push(index);
    });
    boundaries.push(body.length);
    for (let i = 0; i + 1 < boundaries.length; i += 1) {
        const text = body.slice(boundaries[i], boundaries[i + 1]).trim();
        if (text === "" || text.startsWith("//")) continue;
        const match = /^('(?:[^'\\]|\\.)*'|[A-Za-z_$][A-Za-z0-9_$]*)\s*:\s*([\s\S]*)$/.exec(text);
        if (!match) throw new Error(`cannot read the object entry: ${text.slice(0, 80)}`);
        const key = match[1]!.startsWith("'") ? match[1]!.slice(1, -1) : match[1]!;
        entries.push({ key, value: stripComment(match[2]!).trim() });
    }
    return entries;
}

/** `value // a comment` → `value`: the first `//` outside a string. */
function stripComment(value: string): string {
    let inString = false;
    for (let i = 0; i < value.length; i += 1) {
        if (value[i] === "\\" && inString) i += 1;
        else if (value[i] === "'") inString = !inString;
        else if (!inString && value.startsWith("//", i)) return value.slice(0, i);
    }
    return value;
}

/** The value of `key` in an object literal, or undefined. */
export function entryValue(literal: string, key: string): string | undefined {
    return objectEntries(literal).find((entry) => entry.key === key)?.value;
}

/** A plain string literal's text (`'abc'` → `abc`); undefined for anything else, interpolations included. */
export function stringLiteral(value: string): string | undefined {
    const match = /^'((?:[^'\\$]|\\.|\$(?!\{))*)'$/.exec(value.trim());
    return match ? match[1]!.replace(/\\(.)/g, "$1") : undefined;
}

/** Every string literal in a text (interpolated ones with their `${…}` as written). */
export function stringLiteralsIn(text: string): string[] {
    const literals: string[] = [];
    scan("(text)", text, (index) => {
        if (text.startsWith("'''", index)) {
            const end = text.indexOf("'''", index + 3);
            literals.push(text.slice(index + 3, end));
        } else if (text[index] === "'") {
            const end = endOfString("(text)", text, index, 0);
            literals.push(text.slice(index + 1, end - 1));
        }
    });
    return literals;
}
