import { RestError } from "@azure/data-tables";
import { TaskFailedError } from "durable-functions";
import { describe, expect, it } from "vitest";
import { failureKind, type FailureKind } from "../../src/shared/failures";
import { InvalidJobRowError, JobConcurrencyError, JobNotFoundError, JobStateConflictError } from "../../src/shared/jobs/JobStore";
import { NameDoesNotFitError } from "../../src/shared/naming/productNames";
import { failureOfStep, StepBugError } from "../../src/shared/provisioning/contracts";
import { ClaimedElsewhereError, NeedsPersonError, SupersededError } from "../../src/shared/provisioning/errors";
import { AmbiguousWriteError, PermanentSmartsheetError, TransientSmartsheetError } from "../../src/shared/smartsheet/errors";
import { RateLimitWaitTooLongError } from "../../src/shared/smartsheet/RateLimiter";
import { NoSiteError } from "../../src/shared/sites/Sites";

const key = { pk: "111", rk: "222" };
const storage = (statusCode?: number) => new RestError(`storage said ${statusCode ?? "nothing"}`, statusCode === undefined ? {} : { statusCode });

describe("failureKind: each error says once, where it is made, whether a failure retries", () => {
    it.each<[string, unknown, FailureKind]>([
        ["a Smartsheet 5xx on a read", new TransientSmartsheetError("503", { operation: "getSheet", statusCode: 503 }), "transient"],
        ["a request the rate limit held back past its deadline", new RateLimitWaitTooLongError(500), "transient"],
        ["another run writing the same thing", new ClaimedElsewhereError("another run is writing copy:Approvals"), "transient"],
        ["a job row written meanwhile (412)", new JobConcurrencyError(key), "transient"],
        ["storage that did not answer", storage(), "transient"],
        ["storage timing out (408)", storage(408), "transient"],
        ["storage throttling (429)", storage(429), "transient"],
        ["storage failing (503)", storage(503), "transient"],
        ["a copy that may have been made (4002)", new AmbiguousWriteError("4002", { operation: "copySheet", statusCode: 500, errorCode: 4002 }), "ambiguous"],
        ["Smartsheet refusing (403/1004)", new PermanentSmartsheetError("403", { operation: "copySheet", statusCode: 403, errorCode: 1004 }), "permanent"],
        ["a problem only a person can fix", new NeedsPersonError("a formula points at another product"), "permanent"],
        ["a name that cannot fit", new NameDoesNotFitError("too long"), "permanent"],
        ["a job whose intake sheet is in no site of SITES", new NoSiteError("999", []), "permanent"],
        ["a job row that fails validation", new InvalidJobRowError(key, "state: invalid"), "permanent"],
        ["a job row that is gone", new JobNotFoundError(key), "permanent"],
        ["a job taken over by a recovery", new SupersededError("owned by attempt 2"), "superseded"],
        ["a job moved on from the states a write may start from", new JobStateConflictError(key, "done", ["running"]), "superseded"],
        ["a TypeError", new TypeError("Cannot read properties of undefined (reading 'id')"), "bug"],
        ["a plain Error (a broken assumption)", new Error("The product folder is not recorded yet"), "bug"],
        ["a storage refusal nobody handled where the call was made (400)", storage(400), "bug"],
        ["a string thrown", "oops", "bug"],
        ["undefined thrown", undefined, "bug"],
        ["an object declaring no known kind", Object.assign(new Error("x"), { failureKind: "maybe" }), "bug"],
        ["a step's bug, marked for the orchestration", new StepBugError("copyTemplateSheet", "boom"), "bug"],
    ])("%s is %s", (_what, error, kind) => {
        expect(failureKind(error)).toBe(kind);
    });

    it("a site missing from SITES is permanent on its own, not as a Smartsheet error", () => {
        const error = new NoSiteError("999", []);
        expect(error).not.toBeInstanceOf(PermanentSmartsheetError);
        expect(failureKind(error)).toBe("permanent");
    });

    it("Smartsheet errors still say transient or permanent, and whether a write may have happened, from the one kind they declare", () => {
        expect(new AmbiguousWriteError("x", { operation: "copySheet" })).toMatchObject({ kind: "transient", ambiguous: true, failureKind: "ambiguous" });
        expect(new TransientSmartsheetError("x", { operation: "getSheet" })).toMatchObject({ kind: "transient", ambiguous: false });
        expect(new PermanentSmartsheetError("x", { operation: "getSheet" })).toMatchObject({ kind: "permanent", ambiguous: false, failureKind: "permanent" });
    });
});

describe("failureOfStep: what the orchestration learns of a step whose retries are spent", () => {
    const bug = new StepBugError("remapReferences", "Cannot read properties of undefined (reading 'sheetId')\n    at plan.ts:110");

    it("finds a bug in the error Durable Functions throws, with the step and the first line of its message", () => {
        const thrown = new TaskFailedError({ errorType: bug.name, errorMessage: bug.message, isNonRetriable: false, isCausedBy: () => false });
        expect(failureOfStep(thrown)).toEqual({ kind: "bug", step: "remapReferences", message: "Cannot read properties of undefined (reading 'sheetId')" });
    });

    it("finds it in an inner failure, or in the Reason and Details of a host without failure details", () => {
        const inner = new TaskFailedError({
            errorType: "FunctionInvocationException",
            errorMessage: "Exception while executing function: Functions.remapReferences",
            isNonRetriable: false,
            innerFailure: { errorType: "Error", errorMessage: `Result: Failure\nException: ${bug.message}`, isNonRetriable: false, isCausedBy: () => false },
            isCausedBy: () => false,
        });
        expect(failureOfStep(inner)).toMatchObject({ kind: "bug", step: "remapReferences" });
        expect(failureOfStep(new Error(`Activity function 'remapReferences' failed: ${bug.message} \n {"Message":"..."}`))).toMatchObject({ kind: "bug", step: "remapReferences" });
    });

    it("counts any other failure as transient, as it always did", () => {
        const transient = new TransientSmartsheetError("503", { operation: "getSheet", statusCode: 503 });
        expect(failureOfStep(new TaskFailedError({ errorType: transient.name, errorMessage: transient.message, isNonRetriable: false, isCausedBy: () => false }))).toEqual({ kind: "transient" });
        expect(failureOfStep("lost")).toEqual({ kind: "transient" });
    });
});
