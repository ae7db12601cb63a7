import type { HttpRequest } from "@azure/functions";

/**
 * The request's body as text, reading at most `maxBytes`: `undefined` when it is larger (by its
 * Content-Length, or once more than that has arrived), and the rest is never buffered.
 */
export async function boundedBodyText(request: HttpRequest, maxBytes: number): Promise<string | undefined> {
    const declared = Number(request.headers.get("content-length") ?? "0");
    if (declared > maxBytes) return undefined;
    if (!request.body) return "";
    const reader = request.body.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > maxBytes) {
            await reader.cancel();
            return undefined;
        }
        chunks.push(value);
    }
    return Buffer.concat(chunks).toString("utf8");
}
