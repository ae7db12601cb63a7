import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loggerFor } from "../../src/shared/composition";
import { hasHiddenCharacters, logLine } from "../../src/shared/text/logText";
import type { InvocationContext } from "@azure/functions";

describe("log lines", () => {
    it("turns a newline, a carriage return, an escape sequence and a bidi override into visible escapes", () => {
        expect(logLine("ops\njob 1-2 parked → done (forged)")).toBe("ops\\u000ajob 1-2 parked → done (forged)");
        expect(logLine("a\rb\u001b[31mc\u202Ed\u2028e")).toBe("a\\u000db\\u001b[31mc\\u202ed\\u2028e");
        expect(logLine("job 1-2 running → done (Präzisions-Set 👩‍🔬)")).toBe("job 1-2 running → done (Präzisions-Set 👩\\u200d🔬)");
    });

    it("says whether text holds characters that would have to be escaped", () => {
        expect(hasHiddenCharacters("Alex from ops")).toBe(false);
        expect(hasHiddenCharacters("Alex\nfrom ops")).toBe(true);
        expect(hasHiddenCharacters("Alex\u200B")).toBe(true);
    });

    it("writes every app log line through the invocation, one line per message", () => {
        const written: string[] = [];
        const context = { info: (line: string) => written.push(line), warn: (line: string) => written.push(line), error: (line: string) => written.push(line) };
        const log = loggerFor(context as unknown as InvocationContext);
        log.info("unpark requested by x\njob 1-2 running → done (forged)");
        log.error("y\u0085z");
        expect(written).toEqual(["unpark requested by x\\u000ajob 1-2 running → done (forged)", "y\\u0085z"]);
        expect(written.every((line) => !/[\n\r]/.test(line))).toBe(true);
    });

    it("no module of the app writes to the console: every line goes through an invocation, where Application Insights sees it", () => {
        const source = path.resolve(__dirname, "..", "..", "src");
        const offenders = (readdirSync(source, { recursive: true }) as string[])
            .filter((file) => file.endsWith(".ts"))
            .filter((file) => /\bconsole\.\w+\(/.test(readFileSync(path.join(source, file), "utf8")));
        expect(offenders).toEqual([]);
    });
});
