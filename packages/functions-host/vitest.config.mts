import { defineConfig } from "vitest/config";

/**
 * The host's conformance tests (its unit tests: vitest.unit.config.mts), two files at a time (most of their time is spent waiting on
 * hosts and timers), on one Azurite of their own. `npm test` at the repository's root runs them
 * too, as its project "host".
 */
export default defineConfig({
    test: {
        name: "host",
        pool: "forks",
        testTimeout: 30_000,
        hookTimeout: 60_000,
        include: ["test/host/**/*.test.ts"],
        globalSetup: ["test/helpers/globalSetup.ts"],
        maxWorkers: 2,
        // In the repository root's npm test: after its fast tiers, beside its end-to-end tests, before its chaos run.
        sequence: { groupOrder: 1 },
    },
});
