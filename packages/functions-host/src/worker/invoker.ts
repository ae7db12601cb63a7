import { randomUUID } from "node:crypto";
import type { HostLogger } from "../logger";
import { formatTimeSpan } from "../schedule/timeSpan";
import type { CapturedFunction, FunctionRegistry } from "./coreApi";
import { invocationTraceContext } from "./traceContext";
import type { CoreInvocationContext, FunctionCallback, RpcInvocationRequest, RpcInvocationResponse, RpcLogCategory, RpcLogLevel, RpcParameterBinding, RpcTypedData } from "./coreTypes";

export interface InvocationRequest {
    inputData: RpcParameterBinding[];
    triggerMetadata?: Record<string, RpcTypedData>;
    /** Why the host runs it, for the "Executing" log line (e.g. "This function was programmatically called via the host APIs."). */
    reason: string;
    /** W3C trace context from the caller (HTTP `traceparent`/`tracestate`); a new trace otherwise. */
    incomingTrace?: { traceparent?: string; tracestate?: string };
    /** Called once the invocation id is known (tests and the HTTP-streaming proxy use it). */
    onInvocationId?: (invocationId: string) => void;
    /** A retry of a failed invocation under the function's retry policy: `context.retryContext`. */
    retryContext?: { retryCount: number; maxRetryCount: number; exception?: { message: string; stackTrace?: string; source?: string } };
}

export interface InvocationResult {
    invocationId: string;
    response: RpcInvocationResponse;
}

export class FunctionTimeoutError extends Error {
    constructor(readonly timeoutText: string, readonly functionName: string) {
        super(`Timeout value of ${timeoutText} was exceeded by function: Functions.${functionName}`);
        this.name = "FunctionTimeoutException";
    }
}

export function errorMessage(error: unknown): string {
    if (error instanceof Error) return error.message;
    if (typeof error === "string") return error;
    try {
        return JSON.stringify(error) ?? String(error);
    } catch {
        return String(error);
    }
}

/**
 * Runs one invocation exactly as the Node worker's InvocationHandler does:
 * getInvocationModel → getArguments → preInvocation hooks → invokeFunction → postInvocation
 * hooks → getResponse. Enforces host.json functionTimeout: an invocation that runs longer is
 * reported as failed with the host's message and its late result is ignored (the real host
 * restarts the worker process instead; in-process the promise cannot be killed).
 */
export class Invoker {
    readonly #inFlight = new Set<Promise<unknown>>();

    constructor(
        private readonly registry: FunctionRegistry,
        private readonly logger: HostLogger,
        private readonly functionTimeoutMs: number,
    ) {}

    /** Waits for running invocations, at most `timeoutMs`. */
    async drain(timeoutMs: number): Promise<void> {
        const deadline = Date.now() + timeoutMs;
        while (this.#inFlight.size > 0 && Date.now() < deadline) {
            await Promise.race([Promise.allSettled([...this.#inFlight]), delay(Math.max(1, deadline - Date.now()))]);
        }
    }

    async invoke(fn: CapturedFunction, request: InvocationRequest): Promise<InvocationResult> {
        const invocationId = randomUUID();
        request.onInvocationId?.(invocationId);
        const name = fn.metadata.name;
        const started = Date.now();
        this.logger.function("information", name, invocationId, `Executing 'Functions.${name}' (Reason='${request.reason}', Id=${invocationId})`);
        const run = this.#run(fn, invocationId, request);
        this.#inFlight.add(run);
        void run.catch(() => undefined).finally(() => this.#inFlight.delete(run));

        let timer: NodeJS.Timeout | undefined;
        const timeout =
            this.functionTimeoutMs > 0
                ? new Promise<never>((_resolve, reject) => {
                      timer = setTimeout(() => reject(new FunctionTimeoutError(formatTimeSpan(this.functionTimeoutMs), name)), this.functionTimeoutMs);
                  })
                : undefined;
        try {
            const response = await (timeout ? Promise.race([run, timeout]) : run);
            this.logger.function("information", name, invocationId, `Executed 'Functions.${name}' (Succeeded, Id=${invocationId}, Duration=${Date.now() - started}ms)`);
            return { invocationId, response };
        } catch (error) {
            if (error instanceof FunctionTimeoutError) {
                this.#inFlight.delete(run);
                this.logger.function("error", name, invocationId, `${error.message}. The host abandons this invocation; its late result will be ignored.`);
                void run.then(
                    () => this.logger.function("warning", name, invocationId, "An abandoned (timed-out) invocation finished; its result was ignored."),
                    () => undefined,
                );
            }
            this.logger.function("error", name, invocationId, `Executed 'Functions.${name}' (Failed, Id=${invocationId}, Duration=${Date.now() - started}ms)\n${error instanceof Error ? (error.stack ?? error.message) : errorMessage(error)}`);
            throw error;
        } finally {
            if (timer) clearTimeout(timer);
        }
    }

    async #run(fn: CapturedFunction, invocationId: string, request: InvocationRequest): Promise<RpcInvocationResponse> {
        const model = this.registry.programmingModel;
        if (!model) throw new Error("The app registered no programming model; it must register its functions through @azure/functions v4.");
        const name = fn.metadata.name;
        const rpcRequest: RpcInvocationRequest = {
            invocationId,
            functionId: fn.metadata.functionId ?? name,
            inputData: request.inputData,
            triggerMetadata: request.triggerMetadata ?? {},
            traceContext: invocationTraceContext(name, request.incomingTrace),
            ...(request.retryContext ? { retryContext: request.retryContext } : {}),
        };
        const coreCtx: CoreInvocationContext = {
            invocationId,
            request: rpcRequest,
            metadata: {
                ...fn.metadata,
                functionId: fn.metadata.functionId ?? name,
                scriptFile: "n/a",
                rawBindings: Object.entries(fn.metadata.bindings).map(([bindingName, binding]) => JSON.stringify({ ...binding, name: bindingName })),
            },
            state: undefined,
            log: (level, category, message) => this.#log(name, invocationId, level, category, message, invocationContext),
        };

        let invocationContext: unknown;
        const invocationModel = await model.getInvocationModel(coreCtx);
        const args = await invocationModel.getArguments();
        const context = args.context;
        invocationContext = context;
        let inputs = args.inputs;
        let callback: FunctionCallback = fn.callback;
        const hookData: Record<string, unknown> = {};
        const appHookData = this.registry.appHookData;

        const preContext = {
            get hookData() {
                return hookData;
            },
            get appHookData() {
                return appHookData;
            },
            get invocationContext() {
                return context;
            },
            functionCallback: callback,
            inputs,
        };
        coreCtx.state = "preInvocationHooks";
        try {
            await this.registry.executeHooks("preInvocation", preContext);
        } finally {
            coreCtx.state = undefined;
        }
        inputs = preContext.inputs;
        callback = preContext.functionCallback;

        const postContext = {
            get hookData() {
                return hookData;
            },
            get appHookData() {
                return appHookData;
            },
            get invocationContext() {
                return context;
            },
            inputs,
            result: null as unknown,
            error: null as unknown,
        };
        coreCtx.state = "invocation";
        try {
            postContext.result = await invocationModel.invokeFunction(context, inputs, callback);
        } catch (error) {
            postContext.error = error;
        } finally {
            coreCtx.state = undefined;
        }
        coreCtx.state = "postInvocationHooks";
        try {
            await this.registry.executeHooks("postInvocation", postContext);
        } finally {
            coreCtx.state = undefined;
        }
        if (postContext.error !== null && postContext.error !== undefined) throw postContext.error;
        return await invocationModel.getResponse(context, postContext.result);
    }

    #log(functionName: string, invocationId: string, level: RpcLogLevel, category: RpcLogCategory, message: string, invocationContext: unknown): void {
        this.registry.runLogHooks(level, category, message, invocationContext);
        if (category === "system" && (level === "trace" || level === "debug" || level === "information")) return;
        this.logger.function(level, functionName, invocationId, message);
    }
}

function delay(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
}
