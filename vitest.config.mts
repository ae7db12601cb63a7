import { defineConfig } from "vitest/config";

const CHAOS = "test/chaos/chaos.test.ts";

/** Projects named on the command line (`--project x`); none named: every project runs. */
const named = process.argv.flatMap((arg, index) => (process.argv[index - 1] === "--project" ? [arg] : arg.startsWith("--project=") ? [arg.slice(10)] : []));
/** "e2e" shares round two with "host" two files each; without "host" in the run (`npm run test:app`) it takes the round's room alone. */
const APP_ONLY = named.length > 0 && !named.includes("host");
const E2E_WORKERS = APP_ONLY ? 3 : 2;

/**
 * Five projects in three rounds. Vitest runs one group after the other, each at its own number of
 * files at a time, and within a group one project's files after another's (by name); a file it
 * has timed before goes longest first.
 * 1. "fast": the unit tests (logic, the simulator alone, the infrastructure template) and the
 *    integration tests (Azurite, the simulator, the adapter's contract, the chaos auditor's own
 *    tests), four files at a time: they wait on storage, simulated latency and short real-time
 *    claims as much as they compute; beside them "host-unit", the local host's own unit tests.
 * 2. "e2e" (the app under the local host, and the bench run small) then "host" (the local host's
 *    own conformance tests, packages/functions-host), two files at a time (their files run tests side by side): each file starts
 *    host processes, which is where the CPU goes.
 * 3. "chaos": the CI-sized chaos run alone; it runs its own schedules side by side.
 * `npm run test:fast` is round 1. `npm run test:app` leaves out the host's projects, and its chaos
 * run joins round 2, three files at a time: the end-to-end files leave a quarter of the two cores
 * idle (waiting on compressed clocks), and the chaos schedules fill it (250 s → 205 s).
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
                    name: "fast",
                    pool: "threads",
                    include: [
                        "test/unit/**/*.test.ts",
                        "test/sim/**/*.test.ts",
                        "test/infra/**/*.test.ts",
                        "test/integration/**/*.test.ts",
                        "test/contract/**/*.test.ts",
                        "test/chaos/**/*.test.ts",
                    ],
                    exclude: [CHAOS],
                    globalSetup: ["test/helpers/globalSetup.ts"],
                    // Nothing here mocks a module, fakes a timer or sets process.env (the app takes its clock,
                    // settings and clients as arguments; every test builds its own tables and simulator), so
                    // the files share their workers' imports: loading the same modules afresh per file was
                    // half the unit tests' CPU, and one pool for both tiers instead of two saved a further tenth.
                    isolate: false,
                    maxWorkers: 4,
                    sequence: { groupOrder: 0 },
                },
            },
            {
                extends: true,
                test: {
                    name: "e2e",
                    include: ["test/e2e/**/*.test.ts", "test/bench/**/*.test.ts"],
                    globalSetup: ["test/helpers/globalSetup.ts"],
                    maxWorkers: E2E_WORKERS,
                    sequence: { groupOrder: 1 },
                },
            },
            // Their own configs, which npm run test --workspace @sheetwright/functions-host runs the same: "host-unit" (group 0,
            // no Azurite) and "host" (group 1, two files at a time).
            "packages/functions-host/vitest.unit.config.mts",
            "packages/functions-host/vitest.config.mts",
            {
                extends: true,
                test: {
                    name: "chaos",
                    include: [CHAOS],
                    maxWorkers: APP_ONLY ? E2E_WORKERS : 1,
                    sequence: { groupOrder: APP_ONLY ? 1 : 2 },
                },
            },
        ],
    },
});
