import path from "node:path";

export { startHost, type HostOptions, type RunningHost } from "./functionsHost";
export type { RegisteredFunctionInfo } from "./functionCatalog";
export { startAzurite, freePort, restartablePort, azuriteConnectionString, DEV_ACCOUNT, DEV_KEY, type AzuriteOptions, type RunningAzurite } from "./azurite";

/** The host's command line (the bin `functions-host`), for running it as a child process: `node <HOST_MAIN> --app <dir> --port <port>`. */
export const HOST_MAIN: string = path.join(__dirname, "main.js");
export { parseSchedule, type Schedule } from "./schedule/ncrontab";
export { formatTimeSpan, parseTimeSpan } from "./schedule/timeSpan";
