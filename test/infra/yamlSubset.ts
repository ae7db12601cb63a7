/**
 * A reader for the block-style YAML GitHub workflows are written in, because no YAML parser is
 * installed here: mappings, sequences (`- item`, `- key: value`), `|` and `>` block scalars, quoted
 * and plain scalars, flow sequences of scalars (`[main]`) and comments. Anchors, aliases, tags, flow
 * mappings, several documents and tabs are refused with an error, never read approximately.
 */

export type YamlValue = string | number | boolean | null | YamlValue[] | { [key: string]: YamlValue };

interface Line {
    indent: number;
    text: string;
    number: number;
}

export function parseYamlSubset(source: string): YamlValue {
    const lines: Line[] = [];
    source.split("\n").forEach((raw, index) => {
        if (raw.includes("\t")) throw new Error(`line ${index + 1}: a tab; this reader takes spaces only`);
        const text = raw.replace(/\s+$/, "");
        if (text.trim() === "" || text.trim().startsWith("#")) {
            lines.push({ indent: -1, text: "", number: index + 1 });
            return;
        }
        if (text === "---" || text === "...") throw new Error(`line ${index + 1}: several documents are not supported`);
        lines.push({ indent: text.length - text.trimStart().length, text: text.trimStart(), number: index + 1 });
    });
    const reader = new Reader(lines);
    const value = reader.block(0);
    reader.expectEnd();
    return value;
}

class Reader {
    private position = 0;

    constructor(private readonly lines: Line[]) {}

    private peek(): Line | undefined {
        while (this.position < this.lines.length && this.lines[this.position]!.indent < 0) this.position += 1;
        return this.lines[this.position];
    }

    expectEnd(): void {
        const line = this.peek();
        if (line) throw new Error(`line ${line.number}: unexpected indentation`);
    }

    /** The block (mapping or sequence) whose lines start at `indent`. */
    block(indent: number): YamlValue {
        const first = this.peek();
        if (!first || first.indent < indent) return null;
        return first.text.startsWith("- ") || first.text === "-" ? this.sequence(first.indent) : this.mapping(first.indent);
    }

    private sequence(indent: number): YamlValue[] {
        const items: YamlValue[] = [];
        for (let line = this.peek(); line && line.indent === indent && (line.text.startsWith("- ") || line.text === "-"); line = this.peek()) {
            const rest = line.text.slice(1).trimStart();
            if (rest === "") {
                this.position += 1;
                items.push(this.block(indent + 1));
            } else if (isMappingEntry(rest)) {
                // `- key: value` opens a mapping whose keys sit where `key` does.
                const column = indent + (line.text.length - rest.length);
                this.lines[this.position] = { indent: column, text: rest, number: line.number };
                items.push(this.mapping(column));
            } else {
                this.position += 1;
                items.push(this.scalar(rest, line, indent));
            }
        }
        return items;
    }

    private mapping(indent: number): { [key: string]: YamlValue } {
        const map: { [key: string]: YamlValue } = {};
        for (let line = this.peek(); line && line.indent === indent; line = this.peek()) {
            if (line.text.startsWith("- ")) break;
            const entry = /^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^:#]+?)\s*:(?:\s+(.*))?$/.exec(line.text);
            if (!entry) throw new Error(`line ${line.number}: expected "key: value", found ${line.text}`);
            const key = unquote(entry[1]!);
            if (key in map) throw new Error(`line ${line.number}: key ${key} appears twice`);
            this.position += 1;
            const rest = stripComment(entry[2] ?? "");
            if (rest === "") {
                const next = this.peek();
                const nested = next && (next.indent > indent || (next.indent === indent && next.text.startsWith("- ")));
                map[key] = nested ? this.block(next.indent) : null;
            } else map[key] = this.scalar(rest, line, indent);
        }
        return map;
    }

    private scalar(text: string, line: Line, parentIndent: number): YamlValue {
        if (/^[|>][+-]?$/.test(text)) return this.blockScalar(text, parentIndent);
        if (/^[&*!]/.test(text)) throw new Error(`line ${line.number}: anchors, aliases and tags are not supported`);
        if (text.startsWith("{")) throw new Error(`line ${line.number}: flow mappings are not supported`);
        if (text.startsWith("[")) {
            if (!text.endsWith("]")) throw new Error(`line ${line.number}: a flow sequence must end on its line`);
            const inner = text.slice(1, -1).trim();
            return inner === "" ? [] : inner.split(",").map((item) => plain(item.trim(), line));
        }
        return plain(text, line);
    }

    private blockScalar(indicator: string, parentIndent: number): string {
        const body: string[] = [];
        let indent = -1;
        while (this.position < this.lines.length) {
            const line = this.lines[this.position]!;
            if (line.indent >= 0 && line.indent <= parentIndent) break;
            if (line.indent >= 0 && indent < 0) indent = line.indent;
            body.push(line.indent < 0 ? "" : " ".repeat(line.indent - indent) + line.text);
            this.position += 1;
        }
        while (body.length > 0 && body[body.length - 1] === "") body.pop();
        const text = indicator.startsWith("|") ? body.join("\n") : body.join(" ").replace(/\s+/g, " ");
        return indicator.endsWith("-") ? text : `${text}\n`;
    }
}

function isMappingEntry(text: string): boolean {
    return /^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[A-Za-z0-9_.\-/ ]+?)\s*:(\s|$)/.test(text);
}

function stripComment(text: string): string {
    if (text.startsWith('"') || text.startsWith("'")) return text.trim();
    const at = text.search(/\s#/);
    return (at >= 0 ? text.slice(0, at) : text).trim();
}

function unquote(text: string): string {
    if (text.startsWith('"')) return JSON.parse(text) as string;
    if (text.startsWith("'")) return text.slice(1, -1).replace(/''/g, "'");
    return text.trim();
}

function plain(text: string, line: Line): YamlValue {
    if (text.startsWith('"') || text.startsWith("'")) {
        if (text.length < 2 || text[text.length - 1] !== text[0]) throw new Error(`line ${line.number}: unterminated quoted string`);
        return unquote(text);
    }
    if (text === "true" || text === "false") return text === "true";
    if (text === "null" || text === "~") return null;
    if (/^-?\d+(\.\d+)?$/.test(text)) return Number(text);
    return text;
}
