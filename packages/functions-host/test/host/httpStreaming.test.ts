import path from "node:path";
import { expect, it } from "vitest";
import { APP_DIR, call, testLog } from "./support/hostTestClient";
import { useInProcessHost } from "./support/inProcessHost";

const host = useInProcessHost(path.join(APP_DIR, "streaming"), () => ({ FUNCTIONS_HOST_KEY: "stream-key" }), { log: testLog("streaming") });

it("serves apps that enable HTTP streaming through the library's proxy", async () => {
    const reply = await call("GET", `${host.url}/api/stream/3`);
    expect(reply.status).toBe(200);
    expect(reply.headers.get("x-route-count")).toBe("3");
    expect(reply.text).toBe("chunk 0\nchunk 1\nchunk 2\n");
});

it("streams request bodies and still checks function keys", async () => {
    const body = "y".repeat(200_000);
    expect((await call("POST", `${host.url}/api/echo`, body)).status).toBe(401);
    const reply = await call("POST", `${host.url}/api/echo`, body, { "x-functions-key": "stream-key", "x-test": "yes", "content-type": "text/plain" });
    expect(reply.status).toBe(200);
    expect(reply.json()).toEqual({ length: 200_000, first: "yyyyy", header: "yes" });
});
