import { describe, expect, it } from "vitest";
import { ExitCode } from "../../tools/jobs-cli/main";
import { jobsCliAnswered, jobsCliScripted } from "../helpers/jobsCli";

const cli = jobsCliScripted;

const VERSION = "0123456789abcdef0123";

describe("the jobs CLI's converge --dry-run and versions", () => {
    it("asks the plan route with the version, site and product given and prints the plan's lines as they came", async () => {
        const lines = [`site acme: to template version ${VERSION} (stored, built 2026-12-01T10:00:00.000Z)`, "total: 0 products, 0 changes, 0 conflicts (0 products to park); calls: none"];
        const { code, out, err, asked } = await cli(["converge", "--dry-run", "--to", VERSION, "--site", "acme", "--product", "IND-1042"], [{ status: 200, body: { lines, products: [] } }]);
        expect({ code, err }).toEqual({ code: ExitCode.ok, err: "" });
        expect(asked).toEqual([`GET /api/converge/plan?to=${VERSION}&site=acme&product=IND-1042`]);
        expect(out).toBe(lines.join("\n"));
    });

    it("prints a customer's text in the plan inert: a formula with a line break stays on its line", async () => {
        const { code, out } = await cli(["converge", "--dry-run"], [{ status: 200, body: { lines: ['  sheet "Risk Register": add column "Owner\nforged line" (TEXT_NUMBER) at 4'] } }]);
        expect(code).toBe(ExitCode.ok);
        expect(out.split("\n")).toHaveLength(1);
    });

    it("refuses converge without one of --dry-run, --trial and --apply, or with two of them, asking the app nothing", async () => {
        for (const args of [["converge", "--to", VERSION], ["converge", "--dry-run", "--apply"], ["converge", "--trial", "--apply"]]) {
            const { code, err, asked } = await cli(args, []);
            expect(code, args.join(" ")).toBe(ExitCode.usage);
            expect(err, args.join(" ")).toContain("converge takes one of --dry-run (each product's plan; nothing is written to Smartsheet), --trial");
            expect(asked, args.join(" ")).toEqual([]);
        }
    });

    it("--apply posts the choice and who asks, and prints each site's convergence; --trial prints the report and exits 1 when it failed", async () => {
        const fleet = { site: "acme", version: VERSION, source: "stored", instanceId: `converge-fleet-acme-${VERSION}-0a1b2c3d`, started: true };
        const bodies: unknown[] = [];
        const applied = await jobsCliAnswered(["converge", "--apply", "--to", VERSION, "--site", "acme", "--by", "Dana"], (_request, init) => {
            bodies.push(JSON.parse(String(init?.body)));
            return { status: 202, body: { fleets: [fleet], sitesLeftOut: [{ site: "globex", reason: "its template folder (9) is not version x's (8)" }] } };
        });
        expect(applied.code).toBe(ExitCode.ok);
        expect(applied.asked).toEqual(["POST /api/converge"]);
        expect(bodies).toEqual([{ to: VERSION, site: "acme", by: "Dana" }]);
        expect(applied.out.split("\n")).toEqual([
            `site acme: converging to version ${VERSION} (stored) as ${fleet.instanceId}; follow it with: versions --site acme, list --state done, show <jobKey>`,
            "site globex: left out, its template folder (9) is not version x's (8)",
        ]);
        const failed = await cli(["converge", "--trial", "--product", "IND-1"], [{ status: 200, body: { lines: ["trial of product IND-1 …", "trial FAILED: 1 problem"], passed: false } }]);
        expect(failed).toMatchObject({ code: ExitCode.error, out: "trial of product IND-1 …\ntrial FAILED: 1 problem" });
    });

    it("exits 2 with the app's message when it refuses a version, site or product", async () => {
        const error = `There is no template version ${VERSION}; the stored ones are fedcba9876543210fedc (built 2026-12-01T10:00:00.000Z).`;
        const { code, out, err } = await cli(["converge", "--dry-run", "--to", VERSION], [{ status: 400, body: { error } }]);
        expect({ code, out, err }).toEqual({ code: ExitCode.usage, out: "", err: error });
    });

    it("lists the versions as the app orders them, newest first, with what is not stored and the products without a version", async () => {
        const { code, out, asked } = await cli(
            ["versions", "--site", "acme"],
            [
                {
                    status: 200,
                    body: {
                        versions: [
                            { version: VERSION, builtAt: "2026-12-02T09:00:00.000Z", stored: true, shaped: true, sites: ["acme"], products: 0, inProgress: 2, converging: 38, parked: 3 },
                            { version: "fedcba9876543210fedc", builtAt: "2026-11-01T09:00:00.000Z", stored: true, shaped: false, sites: ["acme"], products: 41, inProgress: 0 },
                            { version: "aaaaaaaaaaaaaaaaaaaa", stored: false, shaped: false, sites: ["acme"], products: 3, inProgress: 0 },
                        ],
                        unversioned: [{ site: "acme", products: 7 }],
                        invalidJobs: [],
                    },
                },
            ],
        );
        expect(code).toBe(ExitCode.ok);
        expect(asked).toEqual(["GET /api/converge/versions?site=acme"]);
        expect(out.split("\n")).toEqual([
            "VERSION               BUILT                SITES  PRODUCTS  IN PROGRESS  CONVERGING  PARKED  SHAPE",
            `${VERSION}  2026-12-02 09:00:00  acme   0         2            38          3       recorded`,
            "fedcba9876543210fedc  2026-11-01 09:00:00  acme   41        0            0           0       none",
            "aaaaaaaaaaaaaaaaaaaa  (not stored)         acme   3         0            0           0       none",
            "site acme: 7 products provisioned before versions were recorded (no version)",
        ]);
    });
});
