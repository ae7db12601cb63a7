import { defineConfig } from "vitest/config";

const CHAOS = "test/chaos/chaos.test.ts";

/**
 * Two groups, one after the other: the suite, two test files at a time (most of its time is
 * spent waiting on hosts, timers and simulated latency), then the CI-sized chaos run alone,
 * which runs its own schedules side by side and wants the machine to itself.
 */
export default defineConfig({
    test: {
        pool: "forks",
        testTimeout: 30_000,
        hookTimeout: 60_000,
        projects: [
            {
                extends: true,
                test: {
                    name: "suite",
                    include: ["test/**/*.test.ts"],
                    exclude: [CHAOS],
                    globalSetup: ["test/helpers/globalSetup.ts"],
                    maxWorkers: 2,
                    sequence: { groupOrder: 0 },
                },
            },
            {
                extends: true,
                test: {
                    name: "chaos",
                    include: [CHAOS],
                    maxWorkers: 1,
                    sequence: { groupOrder: 1 },
                },
            },
        ],
    },
});
