import { runJobsCli } from "../../tools/jobs-cli/main";

export interface ApiAnswer {
    status: number;
    body: unknown;
}

/**
 * The jobs CLI with every request it sends answered by `answer` instead of the app's HTTP API;
 * `asked` lists the requests as `METHOD /path?query`.
 */
export async function jobsCliAnswered(
    args: string[],
    answer: (request: URL, init?: RequestInit) => ApiAnswer | Promise<ApiAnswer>,
): Promise<{ code: number; out: string; err: string; asked: string[] }> {
    const out: string[] = [];
    const err: string[] = [];
    const asked: string[] = [];
    const code = await runJobsCli(args, {
        out: (line) => out.push(line),
        err: (line) => err.push(line),
        env: { SHEETWRIGHT_URL: "http://127.0.0.1:7071", SHEETWRIGHT_KEY: "k" },
        fetch: (async (url: string, init?: RequestInit) => {
            const request = new URL(url);
            asked.push(`${init?.method ?? "GET"} ${request.pathname}${request.search}`);
            const { status, body } = await answer(request, init);
            return new Response(JSON.stringify(body), { status });
        }) as typeof fetch,
    });
    return { code, out: out.join("\n"), err: err.join("\n"), asked };
}

/** The same against a script: each request gets the next answer. */
export function jobsCliScripted(args: string[], answers: ApiAnswer[]): ReturnType<typeof jobsCliAnswered> {
    return jobsCliAnswered(args, (request) => {
        const next = answers.shift();
        if (!next) throw new Error(`no answer scripted for ${request.href}`);
        return next;
    });
}
