import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

const CHAOS = "test/chaos/chaos.test.ts";
/** The app under the local host: end to end, and the bench run small. */
const HOSTED = ["test/e2e/**/*.test.ts", "test/bench/**/*.test.ts"];

/**
 * Four projects in three rounds (vitest runs one group after the other, each at its own number
 * of files at a time):
 * 1. "fast": the app's tiers that start no host process (unit, integration on Azurite, simulator,
 *    adapter contract, infrastructure, the chaos auditor's own tests), four files at a time —
 *    they wait on Azurite, the simulator and short real-time claims far more than they compute.
 * 2. "host" (packages/functions-host, its conformance tests) and "e2e" (the app under that host, and the bench run small),
 *    three files at a time: each file starts host processes, which is where the CPU goes.
 * 3. "chaos": the CI-sized chaos run alone; it runs its own schedules side by side and wants the
 *    machine to itself.
 * `npm run test:fast` is round 1 plus the host's parsers, `npm run test:app` leaves out "host".
 */
/**
 * Vitest runs the files it has timed before longest first; a file it has never timed (a clean
 * clone: CI) in the order found. There the integration files, which take seconds each where a
 * unit file takes milliseconds, go first, so that none of them starts last and runs alone.
 */
class IntegrationFirst extends BaseSequencer {
    override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
        const tier = (file: TestSpecification) => (file.moduleId.includes("/test/integration/") ? 0 : 1);
        return super.sort([...files].sort((a, b) => tier(a) - tier(b)));
    }
}

export default defineConfig({
    test: {
        pool: "forks",
        sequence: { sequencer: IntegrationFirst },
        testTimeout: 30_000,
        hookTimeout: 60_000,
        projects: [
            {
                extends: true,
                test: {
                    name: "fast",
                    include: ["test/**/*.test.ts"],
                    exclude: [CHAOS, ...HOSTED],
                    globalSetup: ["test/helpers/globalSetup.ts"],
                    maxWorkers: 4,
                    sequence: { groupOrder: 0 },
                },
            },
            // Its own config (name "host", group 1, three files at a time): npm run test --workspace @sheetwright/functions-host runs the same.
            "packages/functions-host/vitest.config.mts",
            {
                extends: true,
                test: {
                    name: "e2e",
                    include: HOSTED,
                    globalSetup: ["test/helpers/globalSetup.ts"],
                    maxWorkers: 3,
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
