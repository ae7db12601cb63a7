import type { IncomingMessage, ServerResponse } from "node:http";

export const MAX_BODY_BYTES = 100 * 1024 * 1024;

export function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
    return new Promise((resolve, reject) => {
        const chunks: Buffer[] = [];
        let size = 0;
        req.on("data", (chunk: Buffer) => {
            size += chunk.length;
            if (size > limit) {
                reject(new HttpError(413, `The request body is larger than ${limit} bytes.`));
                // Read on without keeping anything, so the 413 can still be answered.
                req.removeAllListeners("data");
                req.resume();
                return;
            }
            chunks.push(chunk);
        });
        req.on("end", () => resolve(Buffer.concat(chunks)));
        req.on("error", reject);
    });
}

export class HttpError extends Error {
    constructor(
        readonly statusCode: number,
        message: string,
    ) {
        super(message);
    }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    const text = JSON.stringify(body);
    res.writeHead(status, { "Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(text), ...headers });
    res.end(text);
}

export function sendText(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
    res.writeHead(status, { "Content-Type": "text/plain; charset=utf-8", "Content-Length": Buffer.byteLength(text), ...headers });
    res.end(text);
}

export function sendEmpty(res: ServerResponse, status: number, headers: Record<string, string> = {}): void {
    res.writeHead(status, { "Content-Length": 0, ...headers });
    res.end();
}

/** The host's generic 500 body, which carries the exception message (the JS client shows it as "Details"). */
export function sendServerError(res: ServerResponse, message: string): void {
    sendJson(res, 500, { Message: "An error has occurred.", ExceptionMessage: message, ExceptionType: "System.InvalidOperationException", StackTrace: null });
}

/** Lower-cased headers with repeated values joined by ", ", as the host passes them to the worker. */
export function flatHeaders(req: IncomingMessage): Record<string, string> {
    const headers: Record<string, string> = {};
    for (const [key, value] of Object.entries(req.headers)) {
        if (value === undefined) continue;
        headers[key.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
    }
    return headers;
}
