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

/** True when the request comes from this machine (the admin API's loopback exemption). */
export function isLoopback(req: IncomingMessage): boolean {
    const address = req.socket.remoteAddress ?? "";
    return address === "127.0.0.1" || address === "::1" || address === "::ffff:127.0.0.1" || address.startsWith("127.");
}
