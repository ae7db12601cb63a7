#!/usr/bin/env node
import { parseArgs } from "node:util";
import { z } from "zod";
import { inertJson, inertText, inertValue } from "../../src/shared/text/logText";

/**
 * `sheetwright-jobs <command>` (from a checkout: `npm run -s jobs -- <command>`): the ops
 * person's view of Sheetwright through the app's own HTTP API, so it works the same against
 * `npm start` and against Azure. Built once by `npm run build`; at run time it needs only
 * `dist/tools/jobs-cli/`, `dist/src/shared/text/` and the production dependency zod. Whatever it
 * prints from the API is inert (`inertText`): a customer's text shows as typed, escapes visible,
 * one line per job. Standard output carries only the answer; errors go to standard error.
 */
const USAGE = `Usage: sheetwright-jobs <command> [options]     (from a checkout: npm run -s jobs -- <command> [options])

Commands:
  list [--state S] [--site NAME]        active jobs, or every job in state S (queued, running, parked, done, rejected); of every site, or one
  show <jobKey>                         one job: its row and its orchestration
  unpark <jobKey> [--by WHO] [--note T] [--decision keep-product|take-template]
                                        resume a parked job at its stage; a product parked on its convergence's
                                        conflicts takes a decision: keep the product's edits, or write the template's over them
  reconcile                             write the terminal states that job rows missed, now
  health                                the webhook receiver's health: per site and week, rows the timer sweeps found that no webhook announced (healthy: 0)
  converge --dry-run [--to VERSION] [--site NAME] [--product CODE]
                                        each done product's plan to a template version (default: the template as it is now), and the total:
                                        changes, conflicts, Smartsheet calls; reads Smartsheet, writes nothing to it
  converge --trial [--to VERSION] [--site NAME] [--product CODE]
                                        one product's plan (the one named, or the one that changes most) carried out on copies of it
                                        in a scratch folder, audited, and the copies removed: the product is not touched; exit 1 if it fails
  converge --apply [--to VERSION] [--site NAME] [--product CODE] [--by WHO]
                                        bring those products to the version: one convergence per site, a few products at a time;
                                        a product whose edits conflict with the template's change parks, named (unpark --decision)
  versions [--site NAME]                per template version, newest first, how many products are on it, how many
                                        are provisioning from it, converging to it, parked on the way

Options:
  --url URL        the app's base URL (default: $SHEETWRIGHT_URL, else http://127.0.0.1:7071)
  --key KEY        a function key (default: $SHEETWRIGHT_KEY)
  --json           print the API's answer as one JSON document (a listing: every page in one)
  --page-size N    jobs per request when listing done or rejected jobs (1-1000, default 1000); every page is listed

Exit codes: 0 ok, 1 error, 2 usage or bad request, 3 not found, 4 conflict (e.g. not parked).`;

export const ExitCode = { ok: 0, error: 1, usage: 2, notFound: 3, conflict: 4 } as const;

class UsageError extends Error {}

const Job = z.looseObject({
    jobKey: z.string(),
    site: z.string().optional(),
    state: z.string(),
    stage: z.string().optional(),
    productCode: z.string(),
    productName: z.string(),
    attempt: z.number(),
    recoveries: z.number(),
    lastProgressAt: z.string(),
    parkReason: z.string().optional(),
    rejectReason: z.string().optional(),
    lastError: z.string().optional(),
    folderLink: z.string().optional(),
    templates: z.array(z.string()).default([]),
    copies: z.record(z.string(), z.unknown()).default({}),
    unparks: z
        .array(z.object({ by: z.string(), claimedBy: z.string().optional(), identityProvider: z.string().optional(), note: z.string().optional(), at: z.string() }))
        .default([]),
    lateWritesRemoved: z.array(z.unknown()).default([]),
    orchestration: z.object({ instanceId: z.string().optional(), runtimeStatus: z.string() }).nullable().optional(),
    blueprintVersion: z.string().optional(),
    convergence: z
        .looseObject({ to: z.string(), state: z.string(), attempt: z.number(), instanceId: z.string(), parkReason: z.string().optional(), decision: z.string().optional(), applied: z.array(z.number()).default([]) })
        .optional(),
    convergences: z.array(z.looseObject({ from: z.string().optional(), to: z.string(), at: z.string(), changes: z.number(), kept: z.number() })).default([]),
});
const JobList = z.looseObject({
    state: z.string(),
    site: z.string().optional(),
    jobs: z.array(Job),
    invalid: z.array(z.object({ jobKey: z.string(), reason: z.string() })).optional(),
    continuation: z.string().optional(),
});
const WebhookHealthReport = z.object({
    sites: z.array(
        z.object({
            site: z.string(),
            webhook: z.boolean(),
            weeks: z.array(z.object({ week: z.string(), unannounced: z.number() })).default([]),
        }),
    ),
});

const ConvergePlans = z.looseObject({ lines: z.array(z.string()) });
const ConvergeTrial = z.looseObject({ lines: z.array(z.string()), passed: z.boolean() });
const ConvergeApplied = z.looseObject({
    fleets: z.array(z.object({ site: z.string(), version: z.string(), source: z.string(), instanceId: z.string(), started: z.boolean() })),
    sitesLeftOut: z.array(z.object({ site: z.string(), reason: z.string() })).default([]),
});
const VersionCount = z.looseObject({
    version: z.string(),
    builtAt: z.string().optional(),
    stored: z.boolean(),
    shaped: z.boolean(),
    sites: z.array(z.string()),
    products: z.number(),
    inProgress: z.number(),
    converging: z.number().default(0),
    parked: z.number().default(0),
});
const TemplateVersions = z.looseObject({
    versions: z.array(VersionCount),
    unversioned: z.array(z.object({ site: z.string(), products: z.number() })).default([]),
    invalidJobs: z.array(z.object({ jobKey: z.string(), reason: z.string() })).default([]),
});

const ApiError = z.looseObject({ error: z.string() });

export interface CliIo {
    out(line: string): void;
    err(line: string): void;
    env: Record<string, string | undefined>;
    fetch: typeof fetch;
}

export async function runJobsCli(argv: string[], io: CliIo): Promise<number> {
    try {
        return await run(argv, io);
    } catch (error) {
        if (error instanceof UsageError) {
            io.err(`${inertText(error.message)}\n\n${USAGE}`);
            return ExitCode.usage;
        }
        io.err(inertText(error instanceof Error ? error.message : String(error)));
        return ExitCode.error;
    }
}

async function run(argv: string[], io: CliIo): Promise<number> {
    let parsed;
    try {
        parsed = parseArgs({
            args: argv,
            allowPositionals: true,
            options: {
                url: { type: "string" },
                key: { type: "string" },
                state: { type: "string" },
                site: { type: "string" },
                by: { type: "string" },
                note: { type: "string" },
                "dry-run": { type: "boolean", default: false },
                apply: { type: "boolean", default: false },
                trial: { type: "boolean", default: false },
                decision: { type: "string" },
                to: { type: "string" },
                product: { type: "string" },
                json: { type: "boolean", default: false },
                "page-size": { type: "string" },
                help: { type: "boolean", short: "h", default: false },
            },
        });
    } catch (error) {
        throw new UsageError((error as Error).message);
    }
    const { values, positionals } = parsed;
    const [command, ...rest] = positionals;
    if (values.help || command === undefined) {
        io.out(USAGE);
        return values.help ? ExitCode.ok : ExitCode.usage;
    }
    const api = client(values.url ?? io.env.SHEETWRIGHT_URL ?? "http://127.0.0.1:7071", values.key ?? io.env.SHEETWRIGHT_KEY, io);
    const jobKey = () => {
        if (rest.length !== 1) throw new UsageError(`${command} takes one job key, <intakeSheetId>-<intakeRowId>.`);
        return encodeURIComponent(rest[0]!);
    };
    const expectNoMore = () => {
        if (rest.length > 0) throw new UsageError(`${command} takes no arguments (got ${rest.join(" ")}).`);
    };

    switch (command) {
        case "list": {
            expectNoMore();
            const query = new URLSearchParams();
            if (values.state) query.set("state", values.state);
            if (values.site) query.set("site", values.site);
            if (values["page-size"] !== undefined) query.set("pageSize", values["page-size"]);
            // Finished states come in pages: follow the continuation to the end, then print once.
            let answer = await api("GET", `jobs${query.size > 0 ? `?${query}` : ""}`);
            if (answer.status !== 200) return failed(answer, io);
            const whole = JobList.parse(answer.body);
            const seen = new Set<string>();
            for (let continuation = whole.continuation; continuation !== undefined; ) {
                if (seen.has(continuation)) throw new Error("The app answered the same continuation twice; the listing would never end. Report this with the app's version.");
                seen.add(continuation);
                query.set("continuation", continuation);
                answer = await api("GET", `jobs?${query}`);
                if (answer.status !== 200) return failed(answer, io);
                const page = JobList.parse(answer.body);
                whole.jobs.push(...page.jobs);
                whole.invalid = [...(whole.invalid ?? []), ...(page.invalid ?? [])];
                continuation = page.continuation;
            }
            delete whole.continuation;
            if (values.json) return printed(whole, io);
            const list = JobList.parse(inertValue(whole));
            io.out(table(list.jobs));
            io.out(`${list.jobs.length} ${list.state} job${list.jobs.length === 1 ? "" : "s"}${list.site ? ` of site ${list.site}` : ""}`);
            for (const bad of list.invalid ?? []) io.err(`invalid row ${bad.jobKey}: ${bad.reason}`);
            return ExitCode.ok;
        }
        case "show": {
            const answer = await api("GET", `jobs/${jobKey()}`);
            if (answer.status !== 200) return failed(answer, io);
            if (values.json) return printed(answer.body, io);
            io.out(details(Job.parse(inertValue(answer.body))));
            return ExitCode.ok;
        }
        case "unpark": {
            const body: Record<string, string> = {};
            if (values.by !== undefined) body.by = values.by;
            if (values.note !== undefined) body.note = values.note;
            if (values.decision !== undefined) {
                if (values.decision !== "keep-product" && values.decision !== "take-template") {
                    throw new UsageError(`--decision is keep-product or take-template, not "${values.decision}".`);
                }
                body.decision = values.decision;
            }
            const answer = await api("POST", `jobs/${jobKey()}/unpark`, body);
            if (answer.status !== 202) return failed(answer, io);
            if (values.json) return printed(answer.body, io);
            const result = inertValue(answer.body) as { jobKey: string; action: string; instanceId: string; stage?: string; to?: string; decision?: string };
            if (result.to !== undefined) {
                io.out(`${result.jobKey}: ${result.action} (${result.instanceId}); it goes on converging to ${result.to}${result.decision ? `, ${result.decision}` : ""}`);
            } else {
                io.out(`${result.jobKey}: ${result.action} (${result.instanceId}); it resumes at the ${result.stage ?? "copy"} stage`);
            }
            return ExitCode.ok;
        }
        case "reconcile": {
            expectNoMore();
            const answer = await api("POST", "reconcile", {});
            if (answer.status !== 200) return failed(answer, io);
            if (values.json) return printed(answer.body, io);
            const report = inertValue(answer.body) as { checked: number; transitions: string[] };
            for (const line of report.transitions) io.out(line);
            io.out(`${report.checked} active jobs checked, ${report.transitions.length} transitions`);
            return ExitCode.ok;
        }
        case "health": {
            expectNoMore();
            const answer = await api("GET", "webhooks/health");
            if (answer.status !== 200) return failed(answer, io);
            if (values.json) return printed(answer.body, io);
            for (const site of WebhookHealthReport.parse(inertValue(answer.body)).sites) {
                if (!site.webhook) io.out(`${site.site}: no webhook (WEBHOOK_BASE_URL not set): timer sweeps alone`);
                else io.out(`${site.site}: ${site.weeks.map((week) => `${week.week} ${week.unannounced}`).join(", ")} unannounced by week (healthy: 0)`);
            }
            return ExitCode.ok;
        }
        case "converge": {
            expectNoMore();
            if ([values["dry-run"], values.trial, values.apply].filter(Boolean).length !== 1) {
                throw new UsageError(
                    "converge takes one of --dry-run (each product's plan; nothing is written to Smartsheet), --trial (one product's plan carried out on a copy of it, audited, removed) or --apply (carry the plans out).",
                );
            }
            if (values.trial) {
                const body: Record<string, string> = {};
                for (const name of ["to", "site", "product"] as const) if (values[name] !== undefined) body[name] = values[name];
                const answer = await api("POST", "converge/trial", body);
                if (answer.status !== 200) return failed(answer, io);
                if (values.json) return printed(answer.body, io);
                const report = ConvergeTrial.parse(inertValue(answer.body));
                for (const line of report.lines) io.out(line);
                return report.passed ? ExitCode.ok : ExitCode.error;
            }
            if (values.apply) {
                const body: Record<string, string> = {};
                for (const name of ["to", "site", "product", "by"] as const) if (values[name] !== undefined) body[name] = values[name];
                const answer = await api("POST", "converge", body);
                if (answer.status !== 202) return failed(answer, io);
                if (values.json) return printed(answer.body, io);
                const started = ConvergeApplied.parse(inertValue(answer.body));
                for (const fleet of started.fleets) {
                    io.out(
                        `site ${fleet.site}: ${fleet.started ? "converging" : "converging already"} to version ${fleet.version} ` +
                            `(${fleet.source === "now" ? "the template as it is now" : "stored"}) as ${fleet.instanceId}; ` +
                            `follow it with: versions${fleet.site ? ` --site ${fleet.site}` : ""}, list --state done, show <jobKey>`,
                    );
                }
                for (const left of started.sitesLeftOut) io.out(`site ${left.site}: left out, ${left.reason}`);
                return ExitCode.ok;
            }
            const query = new URLSearchParams();
            if (values.to !== undefined) query.set("to", values.to);
            if (values.site !== undefined) query.set("site", values.site);
            if (values.product !== undefined) query.set("product", values.product);
            const answer = await api("GET", `converge/plan${query.size > 0 ? `?${query}` : ""}`);
            if (answer.status !== 200) return failed(answer, io);
            if (values.json) return printed(answer.body, io);
            for (const line of ConvergePlans.parse(inertValue(answer.body)).lines) io.out(line);
            return ExitCode.ok;
        }
        case "versions": {
            expectNoMore();
            const query = new URLSearchParams();
            if (values.site !== undefined) query.set("site", values.site);
            const answer = await api("GET", `converge/versions${query.size > 0 ? `?${query}` : ""}`);
            if (answer.status !== 200) return failed(answer, io);
            if (values.json) return printed(answer.body, io);
            const report = TemplateVersions.parse(inertValue(answer.body));
            io.out(versionsTable(report.versions));
            for (const { site, products } of report.unversioned) io.out(`site ${site}: ${products} product${products === 1 ? "" : "s"} provisioned before versions were recorded (no version)`);
            for (const bad of report.invalidJobs) io.err(`invalid row ${bad.jobKey}: ${bad.reason}`);
            return ExitCode.ok;
        }
        default:
            throw new UsageError(`Unknown command "${command}".`);
    }
}

interface Answer {
    status: number;
    body: unknown;
}

function client(baseUrl: string, key: string | undefined, io: CliIo) {
    const base = baseUrl.replace(/\/+$/, "");
    return async (method: string, path: string, body?: unknown): Promise<Answer> => {
        let response: Response;
        try {
            response = await io.fetch(`${base}/api/${path}`, {
                method,
                headers: { ...(key ? { "x-functions-key": key } : {}), ...(body ? { "content-type": "application/json" } : {}) },
                body: body ? JSON.stringify(body) : undefined,
                signal: AbortSignal.timeout(60_000),
            });
        } catch (error) {
            throw new Error(`Cannot reach ${base} (${(error as Error).cause ?? (error as Error).message}); is the app running (npm start), and is --url right?`);
        }
        if (response.status === 401) throw new Error(`${base} refused the function key; pass --key or set SHEETWRIGHT_KEY (npm start prints it).`);
        const text = await response.text();
        let parsed: unknown = text;
        try {
            parsed = text === "" ? undefined : JSON.parse(text);
        } catch {
            // not JSON: shown as it is
        }
        return { status: response.status, body: parsed };
    };
}

function failed(answer: Answer, io: CliIo): number {
    const message = ApiError.safeParse(answer.body);
    io.err(message.success ? inertText(message.data.error) : `The app answered ${answer.status}: ${inertJson(answer.body)}`);
    if (answer.status === 404) return ExitCode.notFound;
    if (answer.status === 409) return ExitCode.conflict;
    if (answer.status === 400 || answer.status === 413) return ExitCode.usage;
    return ExitCode.error;
}

function printed(body: unknown, io: CliIo): number {
    io.out(inertJson(body, 2));
    return ExitCode.ok;
}

function table(jobs: Array<z.infer<typeof Job>>): string {
    const rows = [
        ["JOB", "STATE", "STAGE", "CODE", "SITE", "NAME", "ATTEMPT", "RECOVERIES", "LAST PROGRESS", "REASON"],
        ...jobs.map((job) => [
            job.jobKey,
            job.state,
            job.stage ?? "",
            job.productCode,
            job.site ?? "",
            clip(job.productName, 30),
            String(job.attempt),
            String(job.recoveries),
            job.lastProgressAt.replace("T", " ").slice(0, 19),
            clip(job.parkReason ?? job.rejectReason ?? "", 60),
        ]),
    ];
    const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
    return rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join("  ").trimEnd()).join("\n");
}

function versionsTable(versions: Array<z.infer<typeof VersionCount>>): string {
    const rows = [
        ["VERSION", "BUILT", "SITES", "PRODUCTS", "IN PROGRESS", "CONVERGING", "PARKED", "SHAPE"],
        ...versions.map((version) => [
            version.version,
            version.builtAt ? version.builtAt.replace("T", " ").slice(0, 19) : "(not stored)",
            version.sites.join(","),
            String(version.products),
            String(version.inProgress),
            String(version.converging),
            String(version.parked),
            version.shaped ? "recorded" : "none",
        ]),
    ];
    const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
    return rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join("  ").trimEnd()).join("\n");
}

function details(job: z.infer<typeof Job>): string {
    const copied = Object.keys(job.copies).length;
    const lines: Array<[string, string | undefined]> = [
        ["job", job.jobKey],
        ["site", job.site],
        ["product", `${job.productCode} ${job.productName}`],
        ["state", job.stage ? `${job.state} (stage ${job.stage})` : job.state],
        ["sheets copied", `${copied}/${job.templates.length}`],
        ["attempt", `${job.attempt}, ${job.recoveries} recoveries`],
        ["last progress", job.lastProgressAt],
        ["folder", job.folderLink],
        ["park reason", job.parkReason],
        ["reject reason", job.rejectReason],
        ["last error", job.lastError],
        ["late writes removed", job.lateWritesRemoved.length > 0 ? String(job.lateWritesRemoved.length) : undefined],
        ["orchestration", job.orchestration ? `${job.orchestration.instanceId ?? ""} ${job.orchestration.runtimeStatus}`.trim() : "none"],
        ["template version", job.blueprintVersion],
        [
            "convergence",
            job.convergence && job.convergence.state !== "done"
                ? `to ${job.convergence.to}: ${job.convergence.state} (attempt ${job.convergence.attempt}, ${job.convergence.instanceId}, ${job.convergence.applied.length} changes made)` +
                  `${job.convergence.parkReason ? `: ${job.convergence.parkReason}` : ""}${job.convergence.decision ? `, decision ${job.convergence.decision}` : ""}`
                : undefined,
        ],
        ...job.convergences.map((done): [string, string] => ["converged", `${done.at}: ${done.from ?? "?"} → ${done.to}, ${done.changes} changes, ${done.kept} conflicts kept`]),
        ...job.unparks.map((unpark): [string, string] => ["unparked", `${unpark.at} by ${unparkedBy(unpark)}${unpark.note ? `: ${unpark.note}` : ""}`]),
    ];
    return lines
        .filter((line): line is [string, string] => line[1] !== undefined && line[1] !== "")
        .map(([label, value]) => `${`${label}:`.padEnd(21)}${value}`)
        .join("\n");
}

/** `dana@contoso.com (aad)`, with what the caller claimed when it differs; a bare claim as it was typed. */
function unparkedBy(unpark: { by: string; claimedBy?: string; identityProvider?: string }): string {
    if (!unpark.identityProvider) return unpark.by;
    const claimed = unpark.claimedBy !== undefined && unpark.claimedBy !== unpark.by ? `, claimed "${unpark.claimedBy}"` : "";
    return `${unpark.by} (${unpark.identityProvider}${claimed})`;
}

const graphemes = new Intl.Segmenter("en", { granularity: "grapheme" });

/** At most `max` graphemes: an emoji or an accented letter is never cut in two. */
function clip(text: string, max: number): string {
    const whole = [...graphemes.segment(text)].map(({ segment }) => segment);
    return whole.length <= max ? text : `${whole.slice(0, max - 1).join("")}…`;
}

if (require.main === module) {
    void runJobsCli(process.argv.slice(2), {
        out: (line) => process.stdout.write(`${line}\n`),
        err: (line) => process.stderr.write(`${line}\n`),
        env: process.env,
        fetch,
    }).then((code) => {
        process.exitCode = code;
    });
}
