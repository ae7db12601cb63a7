import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { SETTINGS } from "../../src/shared/config";

const root = path.resolve(__dirname, "..", "..");

/** Every page under docs/. */
function docPages(): string[] {
    return readdirSync(path.join(root, "docs"))
        .filter((name) => name.endsWith(".md"))
        .map((name) => path.join(root, "docs", name));
}

describe("the documentation matches the configuration schema", () => {
    it("lists every setting in a settings table of the README or of docs/", () => {
        const docs = [readFileSync(path.join(root, "README.md"), "utf8"), ...docPages().map((page) => readFileSync(page, "utf8"))].join("\n");
        for (const name of Object.keys(SETTINGS)) expect(docs).toContain(`| \`${name}\` |`);
    });

    it("gives every setting a line in local.settings.example.json, and no other", () => {
        const example = JSON.parse(readFileSync(path.join(root, "local.settings.example.json"), "utf8")) as { Values: Record<string, string> };
        const names = Object.keys(example.Values).filter((name) => name !== "FUNCTIONS_WORKER_RUNTIME");
        expect(names.sort()).toEqual(Object.keys(SETTINGS).sort());
    });
});
