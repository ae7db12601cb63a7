import Module from "node:module";
import type { FunctionCallback, FunctionMetadata, HookCallback, ProgrammingModel, RpcLogCategory, RpcLogLevel } from "./coreTypes";

/** Version strings the app sees as `coreApi.version` / `coreApi.hostVersion`. */
export const WORKER_VERSION = "3.12.0-localhost";
export const HOST_VERSION = "4.1037.0-localhost";

const KNOWN_HOOKS = new Set(["preInvocation", "postInvocation", "appStart", "appTerminate", "log"]);

export interface CapturedFunction {
    metadata: FunctionMetadata;
    callback: FunctionCallback;
}

export class Disposable {
    #callOnDispose: (() => unknown) | undefined;

    constructor(callOnDispose: () => unknown) {
        this.#callOnDispose = callOnDispose;
    }

    static from(...disposableLikes: { dispose: () => unknown }[]): Disposable {
        return new Disposable(() => {
            for (const d of disposableLikes) d.dispose();
        });
    }

    dispose(): unknown {
        const fn = this.#callOnDispose;
        this.#callOnDispose = undefined;
        return fn?.();
    }
}

/**
 * What the app registered through `@azure/functions-core`: the programming model, every function
 * (metadata + callback) and every hook. One per process, as in the real worker.
 */
export class FunctionRegistry {
    programmingModel: ProgrammingModel | undefined;
    readonly functions = new Map<string, CapturedFunction>();
    readonly hooks = new Map<string, HookCallback[]>();
    readonly appHookData: Record<string, unknown> = {};
    readonly appLevelOnlyHookData: Record<string, unknown> = {};
    startupFinished = false;
    #inLogHook = false;
    /** Where `coreApi.log` (the library's system log) goes; the host replaces it. */
    systemLog: (level: RpcLogLevel, category: RpcLogCategory, message: string) => void = (level, _category, message) => {
        if (level === "warning" || level === "error" || level === "critical") console.error(message);
    };

    getHooks(name: string): HookCallback[] {
        return this.hooks.get(name) ?? [];
    }

    async executeHooks(name: string, context: Record<string, unknown>): Promise<void> {
        for (const callback of [...this.getHooks(name)]) await callback(context);
    }

    /** Runs `app.hook.log` handlers for one log event; a throwing or re-entrant hook is ignored. */
    runLogHooks(level: RpcLogLevel, category: RpcLogCategory, message: string, invocationContext?: unknown): void {
        const hooks = this.getHooks("log");
        if (hooks.length === 0 || this.#inLogHook) return;
        this.#inLogHook = true;
        try {
            const appHookData = this.appHookData;
            for (const hook of hooks) {
                const context = { hookData: {}, get appHookData() { return appHookData; }, level, message, category, invocationContext };
                try {
                    void Promise.resolve(hook(context)).catch(() => undefined);
                } catch {
                    // A failing log hook must not break the invocation that logged.
                }
            }
        } finally {
            this.#inLogHook = false;
        }
    }

}

let installed: FunctionRegistry | undefined;

/**
 * Makes `require('@azure/functions-core')` answer with the host's core API, exactly as the Node
 * worker's setupCoreModule does (a Proxy over Module.prototype.require). Idempotent.
 */
export function installCoreApi(): FunctionRegistry {
    if (installed) return installed;
    const registry = new FunctionRegistry();
    const coreApi = {
        version: WORKER_VERSION,
        hostVersion: HOST_VERSION,
        Disposable,
        registerHook(hookName: string, callback: HookCallback): Disposable {
            if (!KNOWN_HOOKS.has(hookName)) {
                const error = new RangeError(`Unrecognized hook "${hookName}"`) as RangeError & { isAzureFunctionsSystemError?: boolean };
                error.isAzureFunctionsSystemError = true;
                throw error;
            }
            const list = registry.hooks.get(hookName) ?? [];
            list.push(callback);
            registry.hooks.set(hookName, list);
            return new Disposable(() => {
                const current = registry.hooks.get(hookName) ?? [];
                registry.hooks.set(
                    hookName,
                    current.filter((c) => c !== callback),
                );
            });
        },
        setProgrammingModel(model: ProgrammingModel): void {
            registry.programmingModel = model;
        },
        getProgrammingModel(): ProgrammingModel | undefined {
            return registry.programmingModel;
        },
        registerFunction(metadata: FunctionMetadata, callback: FunctionCallback): Disposable {
            if (registry.startupFinished) throw new Error("A function can only be registered during app startup.");
            const functionId = metadata.functionId ?? metadata.name;
            if (registry.functions.has(functionId)) {
                throw new Error(`A function named '${metadata.name}' is already registered. Function names must be unique within the app.`);
            }
            registry.functions.set(functionId, { metadata, callback });
            return new Disposable(() => {
                if (registry.startupFinished) throw new Error("A function can only be disposed during app startup.");
                registry.functions.delete(functionId);
            });
        },
        log(level: RpcLogLevel, category: RpcLogCategory, message: string): void {
            registry.systemLog(level, category, message);
        },
    };

    const moduleProto = Module.prototype as unknown as { require: (id: string) => unknown };
    moduleProto.require = new Proxy(moduleProto.require, {
        apply(target, thisArg, argArray: unknown[]) {
            if (argArray[0] === "@azure/functions-core") return coreApi;
            return Reflect.apply(target, thisArg, argArray);
        },
    });
    installed = registry;
    return registry;
}
