import type { HistoryEvent } from "./historyEvent";
import type { InstanceRecord } from "./historyStore";
import { activeHistory } from "./rewind";

export interface StatusOptions {
    showHistory: boolean;
    showHistoryOutput: boolean;
    showInput: boolean;
}

/**
 * The orchestration status JSON the host's HTTP API returns. The host names the history
 * `historyEvents` while the durable-functions client reads `history`; both are filled.
 */
export function statusJson(record: InstanceRecord, history: HistoryEvent[] | undefined, options: StatusOptions): Record<string, unknown> {
    const status: Record<string, unknown> = {
        name: record.name,
        instanceId: record.instanceId,
        runtimeStatus: record.runtimeStatus,
        input: options.showInput ? parseJson(record.input) : null,
        customStatus: parseJson(record.customStatus),
        output: parseJson(record.output),
        createdTime: formatTime(record.createdTime),
        lastUpdatedTime: formatTime(record.lastUpdatedTime),
        version: record.version ? record.version : null,
    };
    if (options.showHistory && history) {
        const events = historyForStatus(history, options.showHistoryOutput);
        status.historyEvents = events;
        status.history = events;
    }
    return status;
}

/** `yyyy-MM-ddTHH:mm:ssZ`, the host's format. */
export function formatTime(date: Date): string {
    return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

export function parseJson(text: string | undefined): unknown {
    if (text === undefined || text === "") return null;
    try {
        return JSON.parse(text) as unknown;
    } catch {
        return text;
    }
}

/**
 * The history as the extension's status API shows it (DurableClient.ConvertHistoryToJArray):
 * OrchestratorStarted/Completed and TaskScheduled/SubOrchestrationInstanceCreated are folded
 * away, completions get FunctionName and ScheduledTime, outputs appear with showHistoryOutput.
 */
export function historyForStatus(history: HistoryEvent[], showHistoryOutput: boolean): Record<string, unknown>[] {
    const scheduled = new Map<number, HistoryEvent>();
    const result: Record<string, unknown>[] = [];
    for (const event of activeHistory(history)) {
        switch (event.EventType) {
            case "OrchestratorStarted":
            case "OrchestratorCompleted":
                continue;
            case "TaskScheduled":
            case "SubOrchestrationInstanceCreated":
                scheduled.set(event.EventId, event);
                continue;
            default:
                break;
        }
        const item: Record<string, unknown> = { EventType: event.EventType, Timestamp: event.Timestamp };
        switch (event.EventType) {
            case "ExecutionStarted":
                item.FunctionName = event.Name;
                if (showHistoryOutput) item.Input = parseJson(event.Input);
                break;
            case "ExecutionCompleted":
                item.OrchestrationStatus = event.OrchestrationStatus;
                if (showHistoryOutput) item.Result = parseJson(event.Result);
                if (event.FailureDetails) item.FailureDetails = parseJson(event.FailureDetails);
                break;
            case "ExecutionTerminated":
                item.Input = event.Input;
                break;
            case "TaskCompleted":
            case "TaskFailed":
            case "SubOrchestrationInstanceCompleted":
            case "SubOrchestrationInstanceFailed": {
                const origin = scheduled.get(event.TaskScheduledId ?? -1);
                item.FunctionName = origin?.Name;
                item.ScheduledTime = origin?.Timestamp;
                if (origin?.InstanceId) item.InstanceId = origin.InstanceId;
                if (event.EventType.endsWith("Completed")) {
                    if (showHistoryOutput) item.Result = parseJson(event.Result);
                } else {
                    item.Reason = event.Reason;
                    item.Details = event.Details;
                }
                break;
            }
            case "TimerCreated":
                item.FireAt = event.FireAt;
                break;
            case "TimerFired":
                item.FireAt = event.FireAt;
                item.TimerId = event.TimerId;
                break;
            case "EventRaised":
                item.Name = event.Name;
                if (showHistoryOutput) item.Input = parseJson(event.Input);
                break;
            case "ExecutionSuspended":
            case "ExecutionResumed":
                item.Reason = event.Reason;
                break;
            default:
                break;
        }
        result.push(item);
    }
    return result;
}
