import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { AppSettings } from "../config/appSettings";
import type { AuthLevel } from "../functionCatalog";

/**
 * The host's keys: the default function key (setting FUNCTIONS_HOST_KEY) and the master key
 * (FUNCTIONS_MASTER_KEY), generated when the setting is absent. A request presents a key in the
 * `x-functions-key` header or the `code` query parameter.
 */
export class HostKeys {
    readonly functionKey: string;
    readonly masterKey: string;
    readonly generated: { functionKey: boolean; masterKey: boolean };

    constructor(settings: AppSettings) {
        const functionKey = settings.get("FUNCTIONS_HOST_KEY");
        const masterKey = settings.get("FUNCTIONS_MASTER_KEY");
        this.functionKey = functionKey && functionKey.trim() !== "" ? functionKey : generateKey();
        this.masterKey = masterKey && masterKey.trim() !== "" ? masterKey : generateKey();
        this.generated = { functionKey: !functionKey, masterKey: !masterKey };
    }

    static presented(req: IncomingMessage, url: URL): string | undefined {
        const header = req.headers["x-functions-key"];
        if (typeof header === "string" && header !== "") return header;
        return url.searchParams.get("code") ?? undefined;
    }

    /** anonymous: anyone; function: the function key or the master key; admin: the master key only. */
    allows(level: AuthLevel, key: string | undefined): boolean {
        if (level === "anonymous") return true;
        if (key === undefined) return false;
        if (key === this.masterKey) return true;
        return level === "function" && key === this.functionKey;
    }
}

function generateKey(): string {
    return randomBytes(30).toString("base64url");
}

/**
 * True when the request comes from a program on this machine (the admin API's loopback
 * exemption): a loopback peer that names a loopback host, and no browser page behind it — a
 * page on any site can make the developer's browser send requests to 127.0.0.1 (and rebind a
 * DNS name to it), but then the browser says so with an `Origin` header or a foreign `Host`.
 */
export function isLoopback(req: IncomingMessage): boolean {
    const address = req.socket.remoteAddress ?? "";
    const peer = address === "::1" || address.startsWith("127.") || address.startsWith("::ffff:127.");
    return peer && req.headers.origin === undefined && isLoopbackHost(req.headers.host);
}

function isLoopbackHost(host: string | undefined): boolean {
    if (host === undefined) return true;
    const name = host.replace(/:\d+$/, "").toLowerCase();
    return name === "localhost" || name === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(name);
}
