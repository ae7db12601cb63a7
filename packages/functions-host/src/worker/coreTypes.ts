/**
 * The slice of the `@azure/functions-core` contract (the module the Node worker provides at run
 * time) that the host implements. Shapes follow the worker's `types-core/index.d.ts`.
 */
export interface RpcHttpData {
    method?: string | null;
    url?: string | null;
    headers?: Record<string, string> | null;
    body?: RpcTypedData | null;
    params?: Record<string, string> | null;
    statusCode?: string | null;
    query?: Record<string, string> | null;
    cookies?: RpcHttpCookie[] | null;
    enableContentNegotiation?: boolean | null;
}

export interface RpcHttpCookie {
    name?: string | null;
    value?: string | null;
    domain?: { value?: string | null } | null;
    path?: { value?: string | null } | null;
    expires?: { value?: { seconds?: number | null } | null } | null;
    secure?: { value?: boolean | null } | null;
    httpOnly?: { value?: boolean | null } | null;
    sameSite?: string | null;
    maxAge?: { value?: number | null } | null;
}

export interface RpcTypedData {
    string?: string | null;
    json?: string | null;
    bytes?: Uint8Array | null;
    stream?: Uint8Array | null;
    http?: RpcHttpData | null;
    int?: number | null;
    double?: number | null;
    collectionString?: { string?: string[] | null } | null;
    collectionBytes?: { bytes?: Uint8Array[] | null } | null;
    collectionDouble?: { double?: number[] | null } | null;
    collectionSint64?: { sint64?: number[] | null } | null;
}

export interface RpcBindingInfo {
    type?: string | null;
    direction?: "in" | "out" | "inout" | null;
    dataType?: string | null;
    [option: string]: unknown;
}

export interface FunctionMetadata {
    name: string;
    functionId?: string;
    bindings: Record<string, RpcBindingInfo>;
    retryOptions?: unknown;
}

export type FunctionCallback = (...args: unknown[]) => unknown;

export interface RpcParameterBinding {
    name?: string | null;
    data?: RpcTypedData | null;
}

export interface RpcInvocationRequest {
    invocationId?: string | null;
    functionId?: string | null;
    inputData?: RpcParameterBinding[] | null;
    triggerMetadata?: Record<string, RpcTypedData> | null;
    traceContext?: { traceParent?: string | null; traceState?: string | null; attributes?: Record<string, string> | null } | null;
    retryContext?: unknown;
}

export interface RpcInvocationResponse {
    invocationId?: string | null;
    outputData?: RpcParameterBinding[] | null;
    returnValue?: RpcTypedData | null;
}

export type RpcLogLevel = "trace" | "debug" | "information" | "warning" | "error" | "critical" | "none";
export type RpcLogCategory = "user" | "system" | "customMetric";

export interface CoreInvocationContext {
    invocationId: string;
    request: RpcInvocationRequest;
    metadata: FunctionMetadata & { functionId?: string; scriptFile?: string; rawBindings?: string[] };
    state?: "preInvocationHooks" | "postInvocationHooks" | "invocation";
    log(level: RpcLogLevel, category: RpcLogCategory, message: string): void;
}

export interface InvocationModel {
    getArguments(): Promise<{ context: unknown; inputs: unknown[] }>;
    invokeFunction(context: unknown, inputs: unknown[], callback: FunctionCallback): Promise<unknown>;
    getResponse(context: unknown, result: unknown): Promise<RpcInvocationResponse>;
}

export interface ProgrammingModel {
    name: string;
    version: string;
    getInvocationModel(coreContext: CoreInvocationContext): InvocationModel | Promise<InvocationModel>;
    getCapabilities?(capabilities: Record<string, string>): Promise<Record<string, string>>;
}

export type HookCallback = (context: Record<string, unknown>) => void | Promise<void>;
