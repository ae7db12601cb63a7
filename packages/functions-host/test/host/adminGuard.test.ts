import { describe, expect, it } from "vitest";
import { APP_DIR, call, conformanceSettings, DURABLE } from "./support/hostTestClient";
import { useInProcessHost } from "./support/inProcessHost";

const host = useInProcessHost(APP_DIR, ({ connectionString }) => conformanceSettings(connectionString, { FUNCTIONS_MASTER_KEY: "guard-master-key" }), { pollIntervalMs: 200, log: () => undefined });

describe("the loopback-only admin and durable APIs against a web page in the developer's browser", () => {
    it("serves a program on this machine without a key", async () => {
        expect((await call("GET", `${host.url}/admin/functions`)).status).toBe(200);
        expect((await call("GET", `${host.url}${DURABLE}/instances/`)).status).toBe(200);
    });

    it("refuses a request carrying a browser Origin unless it presents the master key", async () => {
        const fromPage = { origin: "https://attacker.example" };
        expect((await call("GET", `${host.url}/admin/functions`, undefined, fromPage)).status).toBe(401);
        expect((await call("POST", `${host.url}${DURABLE}/instances/x/terminate`, undefined, fromPage)).status).toBe(401);
        expect((await call("POST", `${host.url}/admin/host/ping`, undefined, { origin: "http://127.0.0.1:5173" })).status).toBe(401);
        expect((await call("GET", `${host.url}/admin/functions`, undefined, { ...fromPage, "x-functions-key": "guard-master-key" })).status).toBe(200);
    });

    it("refuses a request whose Host names another machine (DNS rebinding)", async () => {
        const response = await rawRequest(host.url, "/admin/functions", { host: "rebound.attacker.example:7071" });
        expect(response).toBe(401);
    });

    it("bounds an admin request's body and still answers 413", async () => {
        const name = host.functions[0]!.name;
        const reply = await call("POST", `${host.url}/admin/functions/${name}`, JSON.stringify({ input: "x".repeat(200_000) }));
        expect(reply.status).toBe(413);
    });
});

/** fetch cannot set Host; node:http can. */
async function rawRequest(base: string, path: string, headers: Record<string, string>): Promise<number> {
    const { request } = await import("node:http");
    const url = new URL(path, base);
    return new Promise((resolve, reject) => {
        const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: "GET", headers }, (response) => {
            response.resume();
            resolve(response.statusCode ?? 0);
        });
        req.on("error", reject);
        req.end();
    });
}
