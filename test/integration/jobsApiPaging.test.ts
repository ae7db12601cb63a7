import { describe, expect, it } from "vitest";
import { listJobs, MAX_PAGE_SIZE } from "../../src/shared/recovery/jobsApi";
import { writeDoneJobs } from "../helpers/jobs";
import { useProvisioningHarness } from "../helpers/provisioningHarness";

interface Page {
    state: string;
    site?: string;
    jobs: Array<{ jobKey: string; site?: string }>;
    invalid: unknown[];
    continuation?: string;
}

describe("GET /api/jobs pages the finished jobs instead of stopping at 1,000 per site", () => {
    const harness = useProvisioningHarness({ simulator: { sites: 2 } });

    /** Every page of a listing, following `continuation` to the end. */
    async function allPages(query: { state: string; site?: string; pageSize?: string }): Promise<Page[]> {
        const pages: Page[] = [];
        let continuation: string | undefined;
        do {
            const answer = await listJobs(harness.current.deps, { ...query, continuation });
            expect(answer.status).toBe(200);
            pages.push(answer.jsonBody as Page);
            continuation = pages.at(-1)!.continuation;
        } while (continuation !== undefined && pages.length < 100);
        return pages;
    }

    it("lists 1,250 done jobs of one site completely, in pages of at most pageSize, and says nothing more follows after the last", async () => {
        const { table, sites } = harness.current;
        const [acme] = sites;
        const written = await writeDoneJobs(table, String(acme!.intakeSheetId), 1250);

        const pages = await allPages({ state: "done", site: acme!.name });
        expect(pages.map((page) => page.jobs.length)).toEqual([MAX_PAGE_SIZE, 250]);
        expect(pages.at(-1)!.continuation).toBeUndefined();
        const listed = pages.flatMap((page) => page.jobs.map((job) => job.jobKey));
        expect(listed).toEqual(written.map((rowKey) => `${acme!.intakeSheetId}-${rowKey}`));
        expect(pages.every((page) => page.site === acme!.name && page.state === "done")).toBe(true);
    });

    it("fills each page site after site, every site's done jobs once", async () => {
        const { table, sites } = harness.current;
        const [first, second] = sites;
        await writeDoneJobs(table, String(first!.intakeSheetId), 130);
        await writeDoneJobs(table, String(second!.intakeSheetId), 90);

        const pages = await allPages({ state: "done", pageSize: "100" });
        expect(pages.map((page) => page.jobs.length)).toEqual([100, 100, 20]);
        const jobs = pages.flatMap((page) => page.jobs);
        expect(new Set(jobs.map((job) => job.jobKey)).size).toBe(220);
        expect(jobs.filter((job) => job.site === first!.name)).toHaveLength(130);
        expect(jobs.filter((job) => job.site === second!.name)).toHaveLength(90);
    });

    it("answers 400 saying what to send for a bad pageSize, a continuation it never gave, or one from another listing", async () => {
        const { deps, table, sites } = harness.current;
        await writeDoneJobs(table, String(sites[0]!.intakeSheetId), 3);
        for (const pageSize of ["0", "1001", "ten", "2.5"]) {
            const answer = await listJobs(deps, { state: "done", pageSize });
            expect(answer.status).toBe(400);
            expect((answer.jsonBody as { error: string }).error).toMatch(/^pageSize ".*": expected (a whole number of jobs from 1 to 1000|at most 1000 jobs)/);
        }
        const forged = await listJobs(deps, { state: "done", continuation: "not-a-token" });
        expect(forged).toEqual({ status: 400, jsonBody: { error: expect.stringMatching(/^continuation is not one this API gave; send the continuation of the previous answer/) } });

        const first = (await listJobs(deps, { state: "done", pageSize: "1" })).jsonBody as Page;
        expect(first.continuation).toBeDefined();
        const elsewhere = await listJobs(deps, { state: "rejected", continuation: first.continuation });
        expect(elsewhere).toEqual({ status: 400, jsonBody: { error: expect.stringMatching(/^continuation belongs to the listing of state=done; ask with the same state and site/) } });

        const active = await listJobs(deps, { state: null, pageSize: "10" });
        expect(active).toEqual({ status: 400, jsonBody: { error: expect.stringMatching(/^pageSize and continuation page the finished states \(done, rejected\); the active jobs come whole/) } });
    });
});
