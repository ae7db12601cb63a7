import path from "node:path";
import { startHost, type RunningHost } from "./index";

const USAGE = `Usage: functions-host [--app <dir>] [--port <port>] [--host <address>]

Runs a compiled Azure Functions v4 Node app (the folder with its package.json; default: the
current directory) with a local host: HTTP triggers under /api, timers, queue triggers and the
Durable Task emulator against Azurite. Settings come from the environment and the app's
local.settings.json ("Values"); AzureWebJobsStorage must point at a running Azurite.`;

interface CliOptions {
    appDir: string;
    port: number;
    host?: string;
}

function parseArgs(argv: string[]): CliOptions {
    const options: CliOptions = { appDir: process.cwd(), port: 7071 };
    for (let i = 0; i < argv.length; i++) {
        const arg = argv[i] as string;
        const [flag, inline] = arg.startsWith("--") && arg.includes("=") ? (arg.split(/=(.*)/s, 2) as [string, string]) : [arg, undefined];
        const value = () => {
            const next = inline ?? argv[++i];
            if (next === undefined || next.startsWith("--")) throw new Error(`${flag} needs a value.\n\n${USAGE}`);
            return next;
        };
        switch (flag) {
            case "--app":
                options.appDir = path.resolve(value());
                break;
            case "--port": {
                const port = Number(value());
                if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be a port number (0-65535).\n\n${USAGE}`);
                options.port = port;
                break;
            }
            case "--host":
                options.host = value();
                break;
            case "--help":
            case "-h":
                process.stdout.write(`${USAGE}\n`);
                process.exit(0);
                break;
            default:
                throw new Error(`Unknown argument '${arg}'.\n\n${USAGE}`);
        }
    }
    return options;
}

async function main(): Promise<void> {
    const options = parseArgs(process.argv.slice(2));
    process.on("unhandledRejection", (reason) => {
        process.stderr.write(`Unhandled promise rejection in the app: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}\n`);
    });
    const host: RunningHost = await startHost({ appDir: options.appDir, port: options.port, host: options.host });
    let stopping = false;
    const shutdown = (signal: string) => {
        if (stopping) {
            process.exit(1);
        }
        stopping = true;
        process.stdout.write(`Received ${signal}; stopping the host (press Ctrl+C again to exit at once).\n`);
        host.stop().then(
            () => process.exit(0),
            (error: unknown) => {
                process.stderr.write(`Stopping failed: ${(error as Error).message}\n`);
                process.exit(1);
            },
        );
    };
    process.on("SIGINT", () => shutdown("SIGINT"));
    process.on("SIGTERM", () => shutdown("SIGTERM"));
}

main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
});
