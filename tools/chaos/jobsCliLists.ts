/**
 * Child process of the chaos harness: runs `sheetwright-jobs list …` once per argument set given as
 * JSON in argv[2], one after the other in this one process (a Node start costs more than a list
 * on 2 cores), writing each list's output to stdout/stderr exactly as the CLI writes them, each
 * preceded by a marker line. The harness itself never loads the app's code; this process is the CLI.
 */
import { runJobsCli } from "../jobs-cli/main";
import { LIST_MARKER } from "./jobsCliListsMarker";

async function main(): Promise<void> {
    const lists = JSON.parse(process.argv[2] ?? "[]") as string[][];
    for (const [index, argv] of lists.entries()) {
        process.stdout.write(`${LIST_MARKER}${index}\n`);
        const code = await runJobsCli(argv, {
            out: (line) => process.stdout.write(`${line}\n`),
            err: (line) => process.stdout.write(`${line}\n`),
            env: process.env,
            fetch,
        });
        if (code !== 0) process.stdout.write(`(jobs ${argv.slice(0, 3).join(" ")} exited ${code})\n`);
    }
}

if (require.main === module) {
    main().catch((error: unknown) => {
        process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
        process.exitCode = 1;
    });
}
