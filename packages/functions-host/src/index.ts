export { startHost, type HostOptions, type RunningHost } from "./functionsHost";
export type { RegisteredFunctionInfo } from "./functionCatalog";
export { startAzurite, freePort, restartablePort, azuriteConnectionString, DEV_ACCOUNT, DEV_KEY, type AzuriteOptions, type RunningAzurite } from "./azurite";
export { HOST_MAIN, HostProcess, type HostProcessOptions } from "./hostProcess";
export { parseSchedule, type Schedule } from "./schedule/ncrontab";
export { formatTimeSpan, parseTimeSpan } from "./schedule/timeSpan";
