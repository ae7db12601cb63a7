import { defineConfig } from "vitest/config";

const CHAOS = "test/chaos/chaos.test.ts";

/**
 * Three projects: the local Functions host's own tests (packages/functions-host, on an Azurite
 * of their own) and the app's suite, two test files at a time each (most of their time is spent
 * waiting on hosts, timers and simulated latency), one after the other; then the CI-sized chaos
 * run alone, which runs its own schedules side by side and wants the machine to itself.
 * `npm run test:app` leaves out the host's project, `npm run test:fast` runs the tiers that start
 * no host process.
 */
export default defineConfig({
    test: {
        pool: "forks",
        testTimeout: 30_000,
        hookTimeout: 60_000,
        projects: [
            // Its own config (name "host", groupOrder 0): npm run test --workspace @sheetwright/functions-host runs the same.
            "packages/functions-host/vitest.config.mts",
            {
                extends: true,
                test: {
                    name: "suite",
                    include: ["test/**/*.test.ts"],
                    exclude: [CHAOS],
                    globalSetup: ["test/helpers/globalSetup.ts"],
                    maxWorkers: 2,
                    sequence: { groupOrder: 1 },
                },
            },
            {
                extends: true,
                test: {
                    name: "chaos",
                    include: [CHAOS],
                    maxWorkers: 1,
                    sequence: { groupOrder: 2 },
                },
            },
        ],
    },
});
