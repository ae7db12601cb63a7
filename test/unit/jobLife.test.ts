import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { JobLife, lineOf } from "../../src/shared/jobs/jobLife";
import type { JobRow } from "../../src/shared/jobs/JobRow";

const SRC = join(__dirname, "../../src");

function sourceFiles(dir: string): string[] {
    return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
    );
}

const running = {
    intakeSheetId: "111",
    intakeRowId: "222",
    state: "running",
    stage: "remap",
    attempt: 1,
    instanceId: "provision-111-222-a1",
    recoveries: 1,
    unparks: [],
    claims: {},
    lastProgressAt: "2026-12-01T10:00:00.000Z",
} as unknown as JobRow;
const NOW = "2026-12-01T12:00:00.000Z";

describe("the job's life, in one place", () => {
    it("is the only file that spells out which states a transition may start from", () => {
        const elsewhere = sourceFiles(SRC)
            .filter((file) => !file.endsWith(join("jobs", "jobLife.ts")))
            .filter((file) => /from:\s*\[\s*"/.test(readFileSync(file, "utf8")))
            .map((file) => relative(SRC, file));
        expect(elsewhere).toEqual([]);
    });

    it("opens, rejects and reconsiders an intake row's job with the state each names, and says so in the transition line", () => {
        const draft = { intakeSheetId: "111", intakeRowId: "333", productCode: "IND-1", productName: "Pump", productLine: "Industrial", attempt: 1 } as Parameters<typeof JobLife.open.apply>[0];
        expect(JobLife.open.apply(draft)).toMatchObject({ state: "queued", productCode: "IND-1" });
        expect(JobLife.reject.apply(draft, "Product Line is required")).toMatchObject({ state: "rejected", rejectReason: "Product Line is required" });
        expect(JobLife.reconsider.apply({ ...draft, rejectReason: "Product Line is required" })).toMatchObject({ state: "queued", rejectReason: undefined });
        expect([JobLife.open.from, JobLife.reject.from, JobLife.reconsider.from]).toEqual([[], ["rejected"], ["rejected"]]);
        const key = { pk: "111", rk: "333" };
        expect(lineOf(JobLife.open, key, "new", "IND-1 Pump")).toBe("job 111-333 new → queued (IND-1 Pump)");
        expect(lineOf(JobLife.reject, key, "new", "Product Line is required")).toBe("job 111-333 new → rejected (Product Line is required)");
        expect(lineOf(JobLife.reconsider, key, "rejected", "the intake row was corrected")).toBe("job 111-333 rejected → queued (the intake row was corrected)");
    });

    it("parks once per reason: the same parking again changes nothing, a new reason parks anew", () => {
        const parked = JobLife.park.apply(running, { reason: "403 on the template", stage: "copy", now: NOW })!;
        expect(parked).toMatchObject({ state: "parked", stage: "copy", parkReason: "403 on the template", parkedAt: NOW, parkAlerted: false });
        expect(JobLife.park.apply(parked, { reason: "403 on the template", stage: "copy", now: "later" })).toBeUndefined();
        expect(JobLife.park.apply(parked, { reason: "name too long", stage: "copy", now: "later" })).toMatchObject({ parkReason: "name too long" });
    });

    it("a parking forgets what the remap decided, so the stage reads afresh what a person fixed before it writes again", () => {
        const planned = { ...running, remapPlan: { blueprintVersion: "v1", summaries: { "Document Register": { updates: [{ id: 7, formula: "=1" }], stampsCode: false } } } };
        expect(JobLife.park.apply(planned, { reason: "x", stage: "remap", now: NOW })!.remapPlan).toBeUndefined();
        expect(JobLife.parkAfterRecoveries.apply(planned, { instanceId: "provision-111-222-a2", reason: "No progress", now: NOW }).remapPlan).toBeUndefined();
    });

    it("resumes a parked job with a fresh recovery budget, and leaves a running one alone", () => {
        const parked = JobLife.park.apply(running, { reason: "x", stage: "remap", now: NOW })!;
        expect(JobLife.resume.apply(parked)).toMatchObject({ state: "running", recoveries: 0, parkReason: undefined, parkedAt: undefined });
        expect(JobLife.resume.apply(running)).toBeUndefined();
    });

    it("a new parking, a resume and an unpark each forget the last parking's alert answer: a given-up or backed-off alert binds no later parking", () => {
        const failed = { parkAlertAttempts: 1, parkAlertRetryAt: NOW, parkAlertFailed: { status: 404, reason: "gone", tries: 1, at: NOW } };
        const parked = { ...JobLife.park.apply(running, { reason: "x", stage: "remap", now: NOW })!, ...failed };
        const trail = { by: "dana", at: NOW, parkReason: "x" };
        for (const next of [
            JobLife.park.apply(parked, { reason: "another", stage: "remap", now: NOW })!,
            JobLife.resume.apply(parked)!,
            JobLife.unparkToNewAttempt.apply(parked, { trail, instanceId: "provision-111-222-a2", now: NOW }),
        ]) {
            expect(next.parkAlertFailed).toBeUndefined();
            expect(next.parkAlertRetryAt).toBeUndefined();
        }
    });

    it("a take-over is the next attempt under a new instance, one recovery more; after too many it parks instead", () => {
        const next = JobLife.takeOver.apply(running, { instanceId: "provision-111-222-a2", why: "a1 is gone", now: NOW });
        expect(next).toMatchObject({ state: "running", attempt: 2, instanceId: "provision-111-222-a2", recoveries: 2, lastProgressAt: NOW });
        const parked = JobLife.parkAfterRecoveries.apply(running, { instanceId: "provision-111-222-a2", reason: "No progress", now: NOW });
        expect(parked).toMatchObject({ state: "parked", attempt: 2, instanceId: "provision-111-222-a2", parkReason: "No progress", recoveries: 1 });
    });

    it("an unpark with nobody waiting starts the next attempt at the parked stage and keeps who asked", () => {
        const parked = JobLife.park.apply(running, { reason: "x", stage: "remap", now: NOW })!;
        const trail = { by: "dana", at: NOW, parkReason: "x" };
        const next = JobLife.unparkToNewAttempt.apply(parked, { trail, instanceId: "provision-111-222-a2", now: NOW });
        expect(next).toMatchObject({ state: "running", stage: "remap", attempt: 2, recoveries: 0, unparks: [trail] });
    });

    it("only open jobs are taken over, only finished orchestrations' rows are reconciled to done", () => {
        expect(JobLife.takeOver.from).toEqual(["queued", "running"]);
        expect(JobLife.missedDone.from).not.toContain("done");
        expect(JobLife.missedDone.apply({ ...running, claims: { folder: { claimedAt: NOW, by: "x", writing: true } } })).toMatchObject({
            state: "done",
            claims: {},
        });
        expect(JobLife.begin.apply({ ...running, state: "parked" }, NOW)).toBeUndefined();
    });
});
