import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { SETTINGS } from "../../src/shared/config";

const root = path.resolve(__dirname, "..", "..");

describe("the documentation matches the configuration schema", () => {
    it("lists every setting in the README's configuration table", () => {
        const readme = readFileSync(path.join(root, "README.md"), "utf8");
        for (const name of Object.keys(SETTINGS)) expect(readme).toContain(`| \`${name}\` |`);
    });

    it("lists every setting in docs/configuration.md's table", () => {
        const configuration = readFileSync(path.join(root, "docs", "configuration.md"), "utf8");
        for (const name of Object.keys(SETTINGS)) expect(configuration).toContain(`| \`${name}\` |`);
    });

    it("gives every setting a line in local.settings.example.json, and no other", () => {
        const example = JSON.parse(readFileSync(path.join(root, "local.settings.example.json"), "utf8")) as { Values: Record<string, string> };
        const names = Object.keys(example.Values).filter((name) => name !== "FUNCTIONS_WORKER_RUNTIME");
        expect(names.sort()).toEqual(Object.keys(SETTINGS).sort());
    });
});
