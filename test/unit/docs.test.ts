import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { SETTINGS } from "../../src/shared/config";
import { runJobsCli } from "../../tools/jobs-cli/main";

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

/** The code blocks of a Markdown page, line by line. */
function codeLines(markdown: string): string[] {
    return [...markdown.matchAll(/^```[a-z]*\n([\s\S]*?)^```/gm)].flatMap((block) => block[1]!.split("\n"));
}

/** The routes the app declares (`route: "jobs/{jobKey}"`), as patterns over a request path. */
function declaredRoutes(): RegExp[] {
    const functions = path.join(root, "src", "functions");
    return readdirSync(functions)
        .flatMap((file) => [...readFileSync(path.join(functions, file), "utf8").matchAll(/route: "([^"]+)"/g)].map((match) => match[1]!))
        .map((route) => new RegExp(`^/api/${route.replace(/\{[^}]+\}/g, "[^/?]+")}(\\?|$)`));
}

describe("docs/operations.md: the commands it gives ops", () => {
    const page = readFileSync(path.join(root, "docs", "operations.md"), "utf8");

    it("every sheetwright-jobs command it shows is one the CLI takes, calling a route the app declares", async () => {
        const commands = codeLines(page)
            .map((line) => line.replace(/\s+#.*$/, "").replace(/\s*\|.*$/, "").trim())
            .filter((line) => line.startsWith("sheetwright-jobs "));
        expect(commands.length).toBeGreaterThanOrEqual(8);
        const routes = declaredRoutes();
        for (const command of commands) {
            const args = [...command.matchAll(/"([^"]*)"|(\S+)/g)]
                .map((match) => match[1] ?? match[2]!)
                .slice(1)
                .map((arg) => (/^<.*>$/.test(arg) || arg.includes("<") ? (arg.includes("Id>") || arg === "<key>" ? "4583173393803140-1042" : "x") : arg));
            const asked: string[] = [];
            const errors: string[] = [];
            const code = await runJobsCli(args, {
                out: () => undefined,
                err: (line) => errors.push(line),
                env: { SHEETWRIGHT_URL: "http://127.0.0.1:7071", SHEETWRIGHT_KEY: "k" },
                fetch: (async (url: string, init?: RequestInit) => {
                    const request = new URL(url);
                    asked.push(`${init?.method ?? "GET"} ${request.pathname}${request.search}`);
                    const body =
                        request.pathname === "/api/reconcile"
                            ? { checked: 0, transitions: [] }
                            : request.pathname === "/api/converge/plan"
                              ? { lines: ["total: 0 products, 0 changes, 0 conflicts (0 products to park); calls: none"] }
                            : request.pathname === "/api/converge/trial"
                              ? { lines: ["trial passed: the plan does what it says on a copy of the product"], passed: true }
                            : request.pathname === "/api/converge"
                              ? { fleets: [{ site: "acme", version: "0123456789abcdef0123", source: "now", instanceId: "converge-fleet-acme-0123456789abcdef0123-00000000", started: true }], sitesLeftOut: [] }
                            : request.pathname === "/api/converge/versions"
                              ? { versions: [], unversioned: [], invalidJobs: [] }
                            : request.pathname === "/api/webhooks/health"
                              ? { sites: [{ site: "acme", webhook: true, weeks: [{ week: "2026-W49", unannounced: 0 }] }] }
                            : request.pathname.endsWith("/unpark")
                              ? { jobKey: "4583173393803140-1042", action: "unpark event raised", instanceId: "provision-4583173393803140-1042-a1", stage: "copy" }
                              : request.pathname === "/api/jobs"
                                ? { state: "done", jobs: [], invalid: [] }
                                : { jobKey: "4583173393803140-1042", state: "parked", productCode: "IND-1", productName: "Pump", attempt: 1, recoveries: 0, lastProgressAt: "2026-12-01T00:00:00Z" };
                    return new Response(JSON.stringify(body), { status: request.pathname.endsWith("/unpark") || request.pathname === "/api/converge" ? 202 : 200 });
                }) as typeof fetch,
            });
            expect({ command, code, errors }).toEqual({ command, code: 0, errors: [] });
            expect(asked.length).toBeGreaterThan(0);
            for (const request of asked) expect(routes.some((route) => route.test(request.split(" ")[1]!)), `${command} → ${request}`).toBe(true);
        }
    });

    it("every /api/ path its curl commands call is a route the app declares", () => {
        const routes = declaredRoutes();
        const paths = codeLines(page)
            .filter((line) => line.trim().startsWith("curl"))
            .flatMap((line) => [...line.matchAll(/(\/api\/[^"'\s]+)/g)].map((match) => match[1]!));
        expect(paths.length).toBeGreaterThanOrEqual(4);
        for (const apiPath of paths) expect(routes.some((route) => route.test(apiPath)), apiPath).toBe(true);
    });

    it("every link within the page leads to one of its headings", () => {
        const anchors = [...page.matchAll(/^#+ (.+)$/gm)].map((heading) =>
            heading[1]!.trim().toLowerCase().replace(/[^\p{L}\p{N}_\- ]/gu, "").replace(/ /g, "-"),
        );
        const links = [...page.matchAll(/\]\(#([^)]+)\)/g)].map((link) => link[1]!);
        expect(links.length).toBeGreaterThan(0);
        expect(links.filter((link) => !anchors.includes(link))).toEqual([]);
    });

    it("names the DfMon tab's file as it is in the repository", () => {
        for (const [, file] of page.matchAll(/--file (\S+)/g)) expect(() => readFileSync(path.join(root, file!))).not.toThrow();
        expect(page).toContain("CustomTemplatesFolderName");
    });
});
