import { defineConfig } from "vitest/config";

/**
 * The host's unit tests (schedules, routes, history rules, settings and host.json): no host
 * process, no storage, so no Azurite of their own; in the repository root's `npm test` and
 * `npm run test:fast`, in the first round beside the app's fast tiers.
 */
export default defineConfig({
    test: {
        name: "host-unit",
        pool: "threads",
        include: ["test/unit/**/*.test.ts"],
        // A group's projects must agree on it: the root's first round runs four files at a time.
        maxWorkers: 4,
        sequence: { groupOrder: 0 },
    },
});
