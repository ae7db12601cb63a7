import { describe, expect, it } from "vitest";
import { ExitCode } from "../../tools/jobs-cli/main";
import { jobsCliScripted } from "../helpers/jobsCli";

const cli = jobsCliScripted;

const job = (rowId: number, patch: object = {}) => ({
    jobKey: `4583173393803140-${rowId}`,
    site: "acme",
    state: "done",
    productCode: `IND-${rowId}`,
    productName: "Pump",
    attempt: 1,
    recoveries: 0,
    lastProgressAt: "2026-12-01T10:00:00.000Z",
    ...patch,
});

describe("the jobs CLI's output", () => {
    it("follows the listing's continuation to the end and prints every page's jobs as one JSON document", async () => {
        const { code, out, err, asked } = await cli(
            ["list", "--state", "done", "--page-size", "2", "--json"],
            [
                { status: 200, body: { state: "done", jobs: [job(1), job(2)], invalid: [], continuation: "c1" } },
                { status: 200, body: { state: "done", jobs: [], invalid: [{ jobKey: "4583173393803140-3", reason: "its row is invalid" }], continuation: "c2" } },
                { status: 200, body: { state: "done", jobs: [job(4)], invalid: [] } },
            ],
        );
        expect(code).toBe(ExitCode.ok);
        expect(err).toBe("");
        expect(asked).toEqual([
            "GET /api/jobs?state=done&pageSize=2",
            "GET /api/jobs?state=done&pageSize=2&continuation=c1",
            "GET /api/jobs?state=done&pageSize=2&continuation=c2",
        ]);
        const document = JSON.parse(out) as { jobs: Array<{ jobKey: string }>; invalid: unknown[] };
        expect(document.jobs.map((listed) => listed.jobKey)).toEqual(["4583173393803140-1", "4583173393803140-2", "4583173393803140-4"]);
        expect(document.invalid).toHaveLength(1);
        expect(document).not.toHaveProperty("continuation");
    });

    it("stops with an error, not a loop, when the app answers the same continuation twice", async () => {
        const page = { status: 200, body: { state: "done", jobs: [job(1)], invalid: [], continuation: "same" } };
        const { code, err } = await cli(["list", "--state", "done"], [page, page]);
        expect(code).toBe(ExitCode.error);
        expect(err).toMatch(/same continuation twice/);
    });

    it("shows who unparked: the platform identity with its provider and what was claimed, or a bare claim", async () => {
        const unparks = [
            { by: "dana@contoso.com", claimedBy: "Dana", identityProvider: "aad", note: "renamed", at: "2026-12-01T11:00:00.000Z" },
            { by: "ops", at: "2026-12-01T12:00:00.000Z" },
        ];
        const { code, out } = await cli(["show", "4583173393803140-1"], [{ status: 200, body: job(1, { state: "parked", unparks }) }]);
        expect(code).toBe(ExitCode.ok);
        expect(out).toMatch(/^unparked:\s+2026-12-01T11:00:00.000Z by dana@contoso.com \(aad, claimed "Dana"\): renamed$/m);
        expect(out).toMatch(/^unparked:\s+2026-12-01T12:00:00.000Z by ops$/m);
    });
});

describe("sheetwright-jobs health", () => {
    it("prints each site's weeks of rows no webhook announced, and says which sites run on timer sweeps alone", async () => {
        const { code, out, asked } = await cli(
            ["health"],
            [
                {
                    status: 200,
                    body: {
                        sites: [
                            { site: "acme", webhook: true, weeks: [{ week: "2026-W46", unannounced: 0 }, { week: "2026-W47", unannounced: 0 }, { week: "2026-W48", unannounced: 1 }, { week: "2026-W49", unannounced: 0 }] },
                            { site: "globex", webhook: false },
                        ],
                    },
                },
            ],
        );
        expect(code).toBe(ExitCode.ok);
        expect(asked).toEqual(["GET /api/webhooks/health"]);
        expect(out.split("\n")).toEqual([
            "acme: 2026-W46 0, 2026-W47 0, 2026-W48 1, 2026-W49 0 unannounced by week (healthy: 0)",
            "globex: no webhook (WEBHOOK_BASE_URL not set): timer sweeps alone",
        ]);
    });
});
