import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { restartablePort } from "@sheetwright/functions-host";
import { hostPorts } from "../../tools/chaos/stack";

// Chaos seed 4, schedule 222 (seed 2139294081): Azurite restarted on its old port found it taken (EADDRINUSE).
describe("ports for a server the chaos harness restarts (regression: Azurite restarted on a port taken while it was down)", () => {
    it("are free and below the OS's ephemeral range, where no port-0 listener or outgoing connection is given one", async () => {
        const ephemeralFrom = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
        const ports = await Promise.all(Array.from({ length: 20 }, () => restartablePort()));
        for (const port of ports) {
            expect(port).toBeGreaterThan(1024);
            expect(port).toBeLessThan(ephemeralFrom);
        }
        const other = await restartablePort(undefined, [ports[0]!]);
        expect(other).not.toBe(ports[0]);
    });
});

// Chaos seed 26120211, schedule 9 (seed 1630671830): the host's first start found its port taken (EADDRINUSE).
describe("ports for a schedule's hosts (regression: a host's port taken between the pick and its start)", () => {
    it("are two distinct ports below the OS's ephemeral range", async () => {
        const ephemeralFrom = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
        for (let n = 0; n < 10; n++) {
            const [host, peer] = await hostPorts();
            expect(host).not.toBe(peer);
            expect(Math.max(host, peer)).toBeLessThan(ephemeralFrom);
        }
    });
});
