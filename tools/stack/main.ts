import { startLocalStack } from "./localStack";

/** `npm start`: the embedded stack on its well-known ports, like `func start` with Azurite. */
async function main(): Promise<void> {
    const stack = await startLocalStack({
        azurite: { tablePort: 10002, queuePort: 10001 },
        simulator: { port: Number(process.env.SIM_PORT ?? 7072), sites: Number(process.env.SIM_SITES ?? 2) },
        host: { port: Number(process.env.HOST_PORT ?? 7071) },
    });
    const { sim, host, azurite } = stack;
    process.stdout.write(
        [
            "",
            "Sheetwright local stack is running (Ctrl-C stops all three):",
            `  Functions host   ${host.url}   (GET ${host.url}/admin/functions)`,
            `  jobs API         ${host.url}/api/jobs   header x-functions-key: ${host.functionKey}`,
            `  Smartsheet sim   ${sim.baseUrl}   admin ${sim.adminUrl}state`,
            ...sim.core.sites().map((site) => `    site ${site.name.padEnd(8)} token ${site.token.padEnd(12)} intake sheet ${site.intakeSheetId}`),
            `  Azurite          tables ${azurite.tableUrl}   queues ${azurite.queueUrl}`,
            "",
            `Fire the intake sweep now:  curl -X POST ${host.url}/admin/functions/intakeSweep -H 'content-type: application/json' -d '{}'`,
            `The ops CLI:               export SHEETWRIGHT_URL=${host.url} SHEETWRIGHT_KEY=${host.functionKey}; npm run -s jobs -- list`,
            "",
        ].join("\n") + "\n",
    );
    let stopping = false;
    const stop = (signal: string) => {
        if (stopping) process.exit(1);
        stopping = true;
        process.stdout.write(`\n${signal}: stopping the host, the simulator and Azurite…\n`);
        stack.stop().then(
            () => process.exit(0),
            () => process.exit(1),
        );
    };
    process.on("SIGINT", () => stop("SIGINT"));
    process.on("SIGTERM", () => stop("SIGTERM"));
}

main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
});
