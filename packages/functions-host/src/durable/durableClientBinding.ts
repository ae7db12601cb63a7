/**
 * The `durableClient` input binding data the Durable extension gives a client function. The
 * durable-functions SDK uses `rpcBaseUrl` for every call when it is present; the other URLs are
 * what `createCheckStatusResponse` and `createHttpManagementPayload` hand out.
 */
export interface DurableClientBindingData {
    taskHubName: string;
    connectionName: string;
    creationUrls: { createNewInstancePostUri: string; createAndWaitOnNewInstancePostUri: string };
    managementUrls: {
        id: string;
        statusQueryGetUri: string;
        sendEventPostUri: string;
        terminatePostUri: string;
        rewindPostUri: string;
        purgeHistoryDeleteUri: string;
        restartPostUri: string;
        suspendPostUri: string;
        resumePostUri: string;
    };
    baseUrl: string;
    requiredQueryStringParameters: string;
    rpcBaseUrl: string;
    httpBaseUrl: string;
}

export const INSTANCE_ID_PLACEHOLDER = "INSTANCEID";

export function durableClientBindingData(origin: string, taskHubName: string, connectionName: string, systemKey: string): DurableClientBindingData {
    const baseUrl = `${origin}/runtime/webhooks/durabletask`;
    const required = `taskHub=${encodeURIComponent(taskHubName)}&connection=${encodeURIComponent(connectionName)}&code=${encodeURIComponent(systemKey)}`;
    const instance = `${baseUrl}/instances/${INSTANCE_ID_PLACEHOLDER}`;
    return {
        taskHubName,
        connectionName,
        creationUrls: {
            createNewInstancePostUri: `${baseUrl}/orchestrators/{functionName}[/{instanceId}]?code=${encodeURIComponent(systemKey)}`,
            createAndWaitOnNewInstancePostUri: `${baseUrl}/orchestrators/{functionName}[/{instanceId}]?timeout={timeoutInSeconds}&pollingInterval={intervalInSeconds}&code=${encodeURIComponent(systemKey)}`,
        },
        managementUrls: {
            id: INSTANCE_ID_PLACEHOLDER,
            statusQueryGetUri: `${instance}?${required}`,
            sendEventPostUri: `${instance}/raiseEvent/{eventName}?${required}`,
            terminatePostUri: `${instance}/terminate?reason={text}&${required}`,
            rewindPostUri: `${instance}/rewind?reason={text}&${required}`,
            purgeHistoryDeleteUri: `${instance}?${required}`,
            restartPostUri: `${instance}/restart?${required}`,
            suspendPostUri: `${instance}/suspend?reason={text}&${required}`,
            resumePostUri: `${instance}/resume?reason={text}&${required}`,
        },
        baseUrl,
        requiredQueryStringParameters: required,
        rpcBaseUrl: `${baseUrl}/`,
        httpBaseUrl: "",
    };
}

/** The HttpManagementPayload for one instance (what startNew over HTTP and createCheckStatusResponse return). */
export function managementPayload(data: DurableClientBindingData, instanceId: string): Record<string, string> {
    const encoded = encodeURIComponent(instanceId);
    const payload: Record<string, string> = { id: instanceId };
    for (const [key, value] of Object.entries(data.managementUrls)) {
        if (key === "id") continue;
        payload[key] = value.replace(INSTANCE_ID_PLACEHOLDER, encoded);
    }
    return payload;
}
