import { startAzurite } from "@sheetwright/functions-host";
import { planSchedule } from "./plan";
import { scheduleSeed } from "./random";
import { addOutcome, describeOutcome, emptyTotals, failed } from "./report";
import { runSchedule } from "./runSchedule";

const USAGE = `Usage: npm run chaos -- --schedules N --seed S [--from K] [--products P] [--parallel K]

Runs N seeded random schedules of faults, crashes and people's edits against the local stack
(Azurite, the Smartsheet simulator, the local Functions host running the app) and audits each.
Schedule k of seed S has its own seed (printed); --seed <it> --schedules 1 replays it alone.
--from K runs schedules K to N-1 of seed S only, to finish a run that was cut off.
The last line is one JSON object of counts; the exit code is 1 when any failure count is not 0.`;

interface Options {
    schedules: number;
    seed: number;
    from: number;
    products: number;
    parallel: number;
}

function parseArgs(argv: string[]): Options {
    const options: Options = { schedules: 1, seed: 1, from: 0, products: 3, parallel: 2 };
    const flags: Record<string, keyof Options> = { "--schedules": "schedules", "--seed": "seed", "--from": "from", "--products": "products", "--parallel": "parallel" };
    for (let i = 0; i < argv.length; i += 1) {
        const flag = argv[i]!;
        if (flag === "--help" || flag === "-h") {
            process.stdout.write(`${USAGE}\n`);
            process.exit(0);
        }
        const key = flags[flag];
        const value = Number(argv[i + 1]);
        if (!key || !Number.isInteger(value) || value < (key === "seed" || key === "from" ? 0 : 1) || value > 0xffffffff) {
            throw new Error(`Bad argument ${flag} ${argv[i + 1] ?? ""}\n\n${USAGE}`);
        }
        options[key] = value;
        i += 1;
    }
    if (options.from >= options.schedules) {
        throw new Error(`--from ${options.from} leaves nothing to run of --schedules ${options.schedules}\n\n${USAGE}`);
    }
    return options;
}

async function main(): Promise<void> {
    const options = parseArgs(process.argv.slice(2));
    const azurite = await startAzurite({ tablePort: 0, queuePort: 0 });
    const totals = emptyTotals();
    const started = Date.now();
    let next = options.from;
    const worker = async () => {
        while (next < options.schedules) {
            const index = next++;
            const plan = planSchedule(scheduleSeed(options.seed, index), { products: options.products });
            const outcome = await runSchedule(plan, azurite.connectionString);
            addOutcome(totals, outcome);
            process.stdout.write(`${describeOutcome(index, outcome, options.products)}\n`);
        }
    };
    try {
        await Promise.all(Array.from({ length: Math.min(options.parallel, options.schedules - options.from) }, worker));
    } finally {
        await azurite.stop();
    }
    process.stdout.write(`${options.schedules - options.from} schedules in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    process.stdout.write(`${JSON.stringify(totals)}\n`);
    process.exitCode = failed(totals) ? 1 : 0;
}

main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(2);
});
