import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseYamlSubset, type YamlValue } from "./yamlSubset";

const root = path.resolve(__dirname, "..", "..");
type Mapping = { [key: string]: YamlValue };
type Step = { uses?: string; run?: string; with?: Mapping; name?: string };

const workflow = (name: string) => parseYamlSubset(readFileSync(path.join(root, ".github", "workflows", name), "utf8")) as Mapping;
const jobsOf = (parsed: Mapping) => parsed.jobs as Record<string, Mapping>;
const stepsOf = (job: Mapping) => job.steps as Step[];

describe("the YAML subset reader", () => {
    it("reads mappings, sequences of mappings, block scalars and flow sequences", () => {
        const parsed = parseYamlSubset(
            ["on:", "  push:", "    branches: [main, 'release']", "jobs:", "  a:", "    steps:", "      - uses: x@v1", "        with:", "          n: 20", "      - run: |", "          one", "          two", "      - plain"].join("\n"),
        );
        expect(parsed).toEqual({
            on: { push: { branches: ["main", "release"] } },
            jobs: { a: { steps: [{ uses: "x@v1", with: { n: 20 } }, { run: "one\ntwo\n" }, "plain"] } },
        });
    });

    it("refuses what it does not read rather than misread it", () => {
        expect(() => parseYamlSubset("a: &anchor 1")).toThrow(/anchors/);
        expect(() => parseYamlSubset("a: {b: 1}")).toThrow(/flow mappings/);
        expect(() => parseYamlSubset("a: 1\na: 2")).toThrow(/twice/);
        expect(() => parseYamlSubset("a:\n\tb: 1")).toThrow(/tab/);
    });
});

describe("CI workflow", () => {
    const ci = workflow("ci.yml");

    it("runs on every push and pull request", () => {
        expect(Object.keys(ci.on as Mapping).sort()).toEqual(["pull_request", "push"]);
    });

    it("runs .ci/run on Node 20, which runs the suite again on Node 22", () => {
        const steps = Object.values(jobsOf(ci)).flatMap(stepsOf);
        expect(steps.find((step) => step.uses?.startsWith("actions/setup-node@"))?.with?.["node-version"]).toBe(20);
        expect(steps.filter((step) => step.run?.trim() === ".ci/run")).toHaveLength(1);
        const ciRun = readFileSync(path.join(root, ".ci", "run"), "utf8");
        expect(ciRun).toMatch(/npm install [^\n]*node@22/);
        expect(ciRun.match(/^npm test$/gm)).toHaveLength(2);
    });
});

describe("deploy workflow", () => {
    const deploy = workflow("deploy.yml");
    const job = Object.values(jobsOf(deploy))[0]!;
    const steps = stepsOf(job);
    const indexOf = (find: (step: Step) => boolean) => steps.findIndex(find);

    it("signs in with OpenID Connect: id-token write, azure/login with ids from variables, no secret or publish profile", () => {
        expect(deploy.permissions).toEqual({ "id-token": "write", contents: "read" });
        const login = steps.find((step) => step.uses?.startsWith("azure/login@"))!;
        expect(Object.keys(login.with!).sort()).toEqual(["client-id", "subscription-id", "tenant-id"]);
        for (const value of Object.values(login.with!)) expect(String(value)).toMatch(/^\$\{\{ vars\.AZURE_[A-Z_]+ \}\}$/);
        const text = readFileSync(path.join(root, ".github", "workflows", "deploy.yml"), "utf8");
        expect(text).not.toMatch(/secrets\./);
        expect(text).not.toMatch(/publish-profile/);
        expect(text).not.toMatch(/client-secret|creds:/);
    });

    it("builds the bundled deploy package for the backend it names and deploys that folder with functions-action for Flex Consumption", () => {
        const build = indexOf((step) => Boolean(step.run?.includes("npm ci")));
        expect(steps[build]!.run!.trim().split("\n").map((line) => line.trim())).toEqual([
            "npm ci --no-audit --no-fund",
            `npm run package -- --backend "\${{ vars.DURABLE_BACKEND || 'azureStorage' }}"`,
        ]);
        const publish = indexOf((step) => Boolean(step.uses?.startsWith("Azure/functions-action@")));
        expect(build).toBeGreaterThanOrEqual(0);
        expect(publish).toBeGreaterThan(build);
        expect(steps[publish]!.with).toMatchObject({ sku: "flexconsumption", "remote-build": false, package: "dist/package" });
        expect(steps.find((step) => step.uses?.startsWith("actions/setup-node@"))?.with?.["node-version"]).toBe(22);
    });

    it("deploys only what CI passed on main, or on a person's request", () => {
        const on = deploy.on as Mapping;
        expect(Object.keys(on).sort()).toEqual(["workflow_dispatch", "workflow_run"]);
        expect(on.workflow_run).toEqual({ workflows: ["CI"], types: ["completed"], branches: ["main"] });
        expect(workflow("ci.yml").name).toBe("CI");
        expect(job.if).toBe("github.event_name == 'workflow_dispatch' || github.event.workflow_run.conclusion == 'success'");
    });
});
