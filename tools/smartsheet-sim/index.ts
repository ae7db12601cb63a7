export { startSimulator, type RunningSimulator } from "./startSimulator";
export { SimulatorCore, type SimState, type SimSheetState } from "./SimulatorCore";
export type { SimulatorOptions, SimConfig, SimConfigPatch, RateLimit } from "./SimulatorOptions";
export type { SimOperation } from "./SimOperation";
export type { ActiveFault, FaultKind, FaultRule, FaultRuleInput } from "./FaultInjector";
export type { CallLogEntry, CallsSnapshot } from "./CallLog";
export type { SimAnchors, SimSite, ColumnType, CellValue } from "./model";
export type { ApiCell, ApiColumn, ApiCrossSheetReference, ApiRow, ApiSummaryField } from "./render";
