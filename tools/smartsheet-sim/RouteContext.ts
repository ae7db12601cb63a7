import type { SimConfig } from "./SimulatorOptions";
import type { Webhooks } from "./Webhooks";
import type { Workspace } from "./Workspace";

/** What a REST handler sees of one request. */
export interface RouteContext {
    workspace: Workspace;
    config: SimConfig;
    /** A numeric path parameter by its name in the route template. */
    id(name: string): number;
    query: URLSearchParams;
    /** The parsed JSON body; undefined when the request had none. */
    body: unknown;
    /** The bearer token the call came with: the user it acts as, and the owner of its webhooks. */
    token: string;
    webhooks: Webhooks;
}

/** A handler returns (or resolves to) the JSON body of a 200 answer; it throws an ApiError to refuse. */
export type RouteHandler = (context: RouteContext) => unknown;

/** The envelope every successful write answers with. */
export function success(result?: unknown, version?: number): Record<string, unknown> {
    return {
        message: "SUCCESS",
        resultCode: 0,
        ...(result === undefined ? {} : { result }),
        ...(version === undefined ? {} : { version }),
    };
}
