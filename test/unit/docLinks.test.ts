import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(__dirname, "..", "..");
const pages = ["README.md", "BENCHMARKS.md", ...readdirSync(path.join(root, "docs")).filter((file) => file.endsWith(".md")).map((file) => `docs/${file}`)];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
    return heading
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, "")
        .replace(/\s/g, "-");
}

function anchorsIn(markdown: string): Set<string> {
    const withoutCode = markdown.replace(/^```[\s\S]*?^```/gm, "");
    return new Set([...withoutCode.matchAll(/^#{1,6} (.+)$/gm)].map((match) => anchorOf(match[1]!)));
}

/** Every `[text](target)` outside code blocks whose target is in this repository. */
function localLinks(markdown: string): string[] {
    const withoutCode = markdown.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "");
    return [...withoutCode.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!).filter((target) => !/^[a-z]+:/i.test(target));
}

describe("links between the README and docs/ (one home per topic: a moved section must not leave a dead link)", () => {
    it.each(pages)("every link in %s leads to a file of the repository and, with #, to one of its headings", (page) => {
        const markdown = readFileSync(path.join(root, page), "utf8");
        const dead: string[] = [];
        for (const link of localLinks(markdown)) {
            const [file, anchor] = link.split("#") as [string, string | undefined];
            const target = file === "" ? path.join(root, page) : path.resolve(path.dirname(path.join(root, page)), file);
            if (!existsSync(target)) {
                dead.push(`${link}: no such file`);
                continue;
            }
            if (anchor !== undefined && target.endsWith(".md") && !anchorsIn(readFileSync(target, "utf8")).has(anchor)) dead.push(`${link}: no such heading`);
        }
        expect(dead).toEqual([]);
    });
});
