import { parseArgs } from "node:util";
import { z } from "zod";
import { startSimulator } from "./startSimulator";
import { DEFAULT_HOST, DEFAULT_PORT, DEFAULT_TOKENS, MAX_SITES } from "./SimulatorOptions";

const Environment = z.object({
    SIM_PORT: z.coerce.number().int().min(0).max(65535).optional(),
    SIM_HOST: z.string().min(1).default(DEFAULT_HOST),
    SIM_TOKENS: z
        .string()
        .transform((text) => text.split(",").map((token) => token.trim()).filter(Boolean))
        .pipe(z.array(z.string()).min(1))
        .optional(),
    SIM_NAME_LIMIT: z.coerce.number().int().positive().optional(),
    /** Requests per minute and token. */
    SIM_RATE_LIMIT: z.coerce.number().int().positive().optional(),
    /** Customer workspaces, each with its own token (sim-token, sim-token-2…). */
    SIM_SITES: z.coerce.number().int().min(1).max(MAX_SITES).default(1),
});

async function main(): Promise<void> {
    const { values } = parseArgs({ options: { port: { type: "string" } }, allowPositionals: false });
    const parsed = Environment.safeParse(process.env);
    if (!parsed.success) throw new Error(`Invalid simulator settings:\n${z.prettifyError(parsed.error)}`);
    const env = parsed.data;
    const port = values.port === undefined ? (env.SIM_PORT ?? DEFAULT_PORT) : z.coerce.number().int().min(0).max(65535).parse(values.port);

    const simulator = await startSimulator({
        port,
        host: env.SIM_HOST,
        tokens: env.SIM_TOKENS ?? DEFAULT_TOKENS,
        sites: env.SIM_SITES,
        ...(env.SIM_NAME_LIMIT === undefined ? {} : { nameLimit: env.SIM_NAME_LIMIT }),
        ...(env.SIM_RATE_LIMIT === undefined ? {} : { rateLimit: { requests: env.SIM_RATE_LIMIT, windowMs: 60_000 } }),
    });
    const sites = simulator.core.sites();
    console.log(`Smartsheet simulator listening`);
    console.log(`  base URL   ${simulator.baseUrl}`);
    console.log(`  admin URL  ${simulator.adminUrl}`);
    console.log(`  tokens     ${[...new Set([...(env.SIM_TOKENS ?? DEFAULT_TOKENS), ...sites.map((site) => site.token)])].join(", ")}`);
    for (const site of sites) {
        console.log(`  site ${site.name} (token ${site.token})`);
        console.log(`    intake sheet        ${site.intakeSheetId}`);
        console.log(`    template folder     ${site.templateFolderId}`);
        console.log(`    products folder     ${site.productsFolderId}`);
        console.log(`    filing index sheet  ${site.filingIndexSheetId}`);
    }

    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
        if (stopping) return;
        stopping = true;
        console.log(`Smartsheet simulator stopping (${signal})`);
        void simulator.close().then(() => process.exit(0));
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
}

main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
});
