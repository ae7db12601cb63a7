import { describe, expect, it } from "vitest";
import type { HistoryEvent } from "../../src/durable/historyEvent";
import { toSdkHistory } from "../../src/durable/historyEvent";
import { instanceIdProblem } from "../../src/durable/instanceId";
import { checkDeterminism, computeRetryDelay, flattenActions, idConsumingActions } from "../../src/durable/orchestratorActions";

describe("instance id rules", () => {
    it("accepts ordinary ids, rejects what the host rejects", () => {
        expect(instanceIdProblem("sheet-123:row-4")).toBeUndefined();
        expect(instanceIdProblem("")).toMatch(/empty/);
        expect(instanceIdProblem("x".repeat(257))).toMatch(/maximum is 256/);
        expect(instanceIdProblem("@entity")).toMatch(/must not start with '@'/);
        for (const bad of ["a/b", "a\\b", "a#b", "a?b", "a\nb"]) expect(instanceIdProblem(bad)).toMatch(/not allowed/);
    });
});

describe("retry delays (DTFx RetryInterceptor)", () => {
    it("grows by the backoff coefficient, capped by maxRetryInterval", () => {
        const options = { firstRetryIntervalInMilliseconds: 1000, maxNumberOfAttempts: 5, backoffCoefficient: 2, maxRetryIntervalInMilliseconds: 3000 };
        expect([0, 1, 2, 3].map((n) => computeRetryDelay(options, n, 0, 0))).toEqual([1000, 2000, 3000, 3000]);
    });

    it("stops (zero) once retryTimeout since the first attempt has passed", () => {
        const options = { firstRetryIntervalInMilliseconds: 1000, maxNumberOfAttempts: 5, retryTimeoutInMilliseconds: 5000 };
        expect(computeRetryDelay(options, 1, 0, 4999)).toBe(1000);
        expect(computeRetryDelay(options, 1, 0, 5000)).toBe(0);
    });
});

describe("actions and determinism", () => {
    const actions = [[{ actionType: 0, functionName: "a" }, { actionType: 12, compoundActions: [{ actionType: 1, functionName: "b" }, { actionType: 11, compoundActions: [{ actionType: 6, externalEventName: "e" }, { actionType: 5, fireAt: "2025-01-01T00:00:00Z" }] }] }]];

    it("flattens WhenAll/WhenAny in order; waits take no sequence id", () => {
        const flat = flattenActions(actions);
        expect(flat.map((a) => a.actionType)).toEqual([0, 1, 6, 5]);
        expect(idConsumingActions(flat).map((a) => a.actionType)).toEqual([0, 1, 5]);
    });

    it("accepts a replay that schedules what the history recorded, and names the first difference otherwise", () => {
        const recorded: HistoryEvent[] = [
            { EventType: "TaskScheduled", EventId: 0, Timestamp: "", Name: "a" },
            { EventType: "TaskScheduled", EventId: 1, Timestamp: "", Name: "b" },
        ];
        const current = idConsumingActions(flattenActions(actions));
        expect(checkDeterminism(recorded, current)).toBeUndefined();
        const renamed = checkDeterminism(recorded, [{ actionType: 0, functionName: "a" }, { actionType: 0, functionName: "c" }]);
        expect(renamed).toMatch(/^Non-Deterministic workflow detected: .*'b' with sequence ID 1.*'c' instead/);
        expect(checkDeterminism(recorded, [{ actionType: 0, functionName: "a" }])).toMatch(/hasn't \(yet\?\) scheduled this task/);
    });
});

describe("history for the SDK", () => {
    it("numbers event types, marks earlier episodes as played and drops host bookkeeping", () => {
        const history: HistoryEvent[] = [
            { EventType: "OrchestratorStarted", EventId: -1, Timestamp: "2025-01-01T00:00:00.000Z" },
            { EventType: "ExecutionStarted", EventId: -1, Timestamp: "2025-01-01T00:00:00.000Z", Name: "o", MessageId: "m1" },
            { EventType: "TaskScheduled", EventId: 0, Timestamp: "2025-01-01T00:00:00.000Z", Name: "a", RetryOptions: "{}", Attempt: 1 },
            { EventType: "OrchestratorCompleted", EventId: -1, Timestamp: "2025-01-01T00:00:00.000Z", CustomStatus: "null" },
            { EventType: "OrchestratorStarted", EventId: -1, Timestamp: "2025-01-01T00:00:01.000Z" },
            { EventType: "TaskFailed", EventId: -1, Timestamp: "2025-01-01T00:00:01.000Z", TaskScheduledId: 0, Reason: "r", Details: "d", FailureDetails: '{"ErrorType":"E"}' },
        ];
        const sdk = toSdkHistory(history);
        expect(sdk.map((e) => e.EventType)).toEqual([12, 0, 4, 13, 12, 6]);
        expect(sdk.map((e) => e.IsPlayed)).toEqual([true, true, true, true, false, false]);
        expect(sdk[1]).not.toHaveProperty("MessageId");
        expect(sdk[2]).not.toHaveProperty("RetryOptions");
        expect(sdk[5]?.FailureDetails).toEqual({ ErrorType: "E" });
    });
});
