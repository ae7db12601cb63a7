import { defineConfig } from "vitest/config";

export default defineConfig({
    test: {
        include: ["test/**/*.test.ts"],
        globalSetup: ["test/helpers/globalSetup.ts"],
        pool: "forks",
        testTimeout: 30_000,
        hookTimeout: 60_000,
        reporters: process.env.CI ? ["default"] : ["default"],
    },
});
