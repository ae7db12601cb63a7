export { startHost, type HostOptions, type RunningHost } from "./functionsHost";
export type { RegisteredFunctionInfo } from "./functionCatalog";
