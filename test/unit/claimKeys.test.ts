import { describe, expect, it } from "vitest";
import { ClaimKey } from "../../src/shared/provisioning/claimKeys";

describe("claim keys", () => {
    it("are spelt as the rows in flight hold them, so a run after a deploy finds an earlier run's claim", () => {
        expect([
            ClaimKey.lineFolder,
            ClaimKey.folder,
            ClaimKey.copy("Document Register"),
            ClaimKey.references("Risk Register"),
            ClaimKey.summary("Change Log"),
            ClaimKey.stamp("Suppliers"),
            ClaimKey.register,
            ClaimKey.intake,
        ]).toEqual([
            "lineFolder",
            "folder",
            "copy:Document Register",
            "references:Risk Register",
            "summary:Change Log",
            "stamp:Suppliers",
            "register",
            "intake",
        ]);
    });
});
