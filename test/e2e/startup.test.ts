import { describe, expect, it } from "vitest";
import { startE2E } from "../helpers/e2e";

describe("start-up", () => {
    it("refuses to load with bad settings, naming every problem and never the token", { timeout: 60_000 }, async () => {
        const token = "tok_5e3b1c9d7a2f4e6b8c0d1a3f5e7b9c2dSECRET";
        const error = await startE2E({
            settings: {
                SMARTSHEET_ACCESS_TOKEN: token,
                INTAKE_SHEET_ID: "the intake sheet",
                // Not longer than host.json's functionTimeout (10 minutes): a live worker could be taken over.
                STALE_AFTER_MINUTES: "10",
            },
        }).catch((caught: unknown) => caught as Error);
        expect(error).toBeInstanceOf(Error);
        const output = (error as Error).message;
        expect(output).toMatch(/The host exited while starting/);
        expect(output).toMatch(/Sheetwright cannot start: 2 settings are wrong/);
        expect(output).toMatch(/INTAKE_SHEET_ID: expected the numeric Smartsheet id of the intake sheet/);
        expect(output).toMatch(/STALE_AFTER_MINUTES: 10 minutes is not longer than the host's functionTimeout/);
        expect(output).not.toContain(token);
    });

    it("refuses a reaper window that is not longer than the host's functionTimeout", { timeout: 60_000 }, async () => {
        const error = await startE2E({ settings: { STALE_AFTER_MINUTES: "10" } }).catch((caught: unknown) => caught as Error);
        expect((error as Error).message).toMatch(
            /STALE_AFTER_MINUTES: 10 minutes is not longer than the host's functionTimeout \(600 s\) \+ the longest step retry delay .*; the reaper could take a job from a live worker/,
        );
    });
});
