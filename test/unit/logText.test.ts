import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loggerFor } from "../../src/shared/composition";
import { hasHiddenCharacters, inertJson, inertText, inertValue, logLine } from "../../src/shared/text/logText";
import type { InvocationContext } from "@azure/functions";

describe("log lines", () => {
    it("turns a newline, a carriage return, an escape sequence and a bidi override into visible escapes", () => {
        expect(logLine("ops\njob 1-2 parked → done (forged)")).toBe("ops\\u000ajob 1-2 parked → done (forged)");
        expect(logLine("a\rb\u001b[31mc\u202Ed\u2028e")).toBe("a\\u000db\\u001b[31mc\\u202ed\\u2028e");
        expect(logLine("job 1-2 running → done (Präzisions-Set 👩‍🔬)")).toBe("job 1-2 running → done (Präzisions-Set 👩‍🔬)");
    });

    it("regression #18.6 hostile text reaches a terminal raw: every control, bidi and invisible character is escaped visibly", () => {
        const cases: Array<[string, string]> = [
            ["\u001b]0;owned\u0007", "\\u001b]0;owned\\u0007"],
            ["\u001b[2J\u001b[H", "\\u001b[2J\\u001b[H"],
            ["a\u007fb\u0085c\u009b2J", "a\\u007fb\\u0085c\\u009b2J"],
            ["a\tb\r\nc\u2028d\u2029e", "a\\u0009b\\u000d\\u000ac\\u2028d\\u2029e"],
            ["\u202a\u202b\u202c\u202d\u202e", "\\u202a\\u202b\\u202c\\u202d\\u202e"],
            ["\u2066\u2067\u2068\u2069\u200e\u200f\u061c", "\\u2066\\u2067\\u2068\\u2069\\u200e\\u200f\\u061c"],
            ["in\u200bvi\u200csi\u2060bl\ufeffe\u00ad", "in\\u200bvi\\u200csi\\u2060bl\\ufeffe\\u00ad"],
            ["\u3164\u115f\u034f", "\\u3164\\u115f\\u034f"],
            ["tag\u{E0041}\u{E0042}", "tag\\u{e0041}\\u{e0042}"],
            ["lone \ud800 surrogate", "lone \\ud800 surrogate"],
        ];
        for (const [typed, shown] of cases) expect(logLine(typed)).toBe(shown);
    });

    it("keeps what is printable as it is: accents, CJK, right-to-left letters and emoji, with the joiners and selectors inside them", () => {
        const printable = ["Präzisions-Set Ångström", "精密セット 정밀", "مضخة תבנית", "👩‍🔬 👩🏽‍🔬 🏳️‍⚧️ 👁️‍🗨️ ❤️ 1️⃣ 🇩🇪 🏴󠁧󠁢󠁳󠁣󠁴󠁿", "a\\u202e b (typed as text)"];
        for (const text of printable) expect(inertText(text)).toBe(text);
    });

    it("escapes a joiner or a selector that glues no emoji: outside one, doubled, or at an end", () => {
        expect(inertText("Pu\u200dmp")).toBe("Pu\\u200dmp");
        expect(inertText("👩\u200d\u200d🔬")).toBe("👩\\u200d\\u200d🔬");
        expect(inertText("👩\u200d")).toBe("👩\\u200d");
        expect(inertText("\u200d🔬")).toBe("\\u200d🔬");
        expect(inertText("a\ufe0f ❤\ufe0f\ufe0f")).toBe("a\\ufe0f ❤\ufe0f\\ufe0f");
        expect(inertText("🏴\u{E0041}")).toBe("🏴\\u{e0041}");
    });

    it("writes JSON that still parses to the very value, with nothing raw a terminal would act on", () => {
        const value = { productName: "Pump\u202egnp.exe\u0085\u2028👩‍🔬", reasons: ["a\u001b[2Jb", "\u200b"] };
        const text = inertJson(value, 2);
        expect(JSON.parse(text)).toEqual(value);
        expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200b\u200c\u200e\u200f\u202a-\u202e\u2028\u2029]/);
        expect(text).toContain("Pump\\u202egnp.exe\\u0085\\u2028👩‍🔬");
        expect(text.split("\n")).toHaveLength(7);
    });

    it("makes every string of a parsed answer inert, keys too, and leaves the rest of it alone", () => {
        expect(inertValue({ "a\nb": ["c\u202ed", 3, null, { e: true }] })).toEqual({ "a\\u000ab": ["c\\u202ed", 3, null, { e: true }] });
    });

    it("says whether text holds characters that would have to be escaped", () => {
        expect(hasHiddenCharacters("Alex from ops")).toBe(false);
        expect(hasHiddenCharacters("Alex\nfrom ops")).toBe(true);
        expect(hasHiddenCharacters("Alex\u200B")).toBe(true);
        expect(hasHiddenCharacters("Alex 👩‍🔬")).toBe(false);
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

    it("every line the app writes straight to an invocation or orchestration context goes through logLine", () => {
        const source = path.resolve(__dirname, "..", "..", "src");
        const raw = (readdirSync(source, { recursive: true }) as string[])
            .filter((file) => file.endsWith(".ts"))
            .flatMap((file) => [...readFileSync(path.join(source, file), "utf8").matchAll(/\bcontext\.(?:log|trace|debug|info|warn|error)\((?!logLine\()[^)]*/g)].map((call) => `${file}: ${call[0]}`));
        expect(raw).toEqual([]);
    });

    it("no module of the app writes to the console: every line goes through an invocation, where Application Insights sees it", () => {
        const source = path.resolve(__dirname, "..", "..", "src");
        const offenders = (readdirSync(source, { recursive: true }) as string[])
            .filter((file) => file.endsWith(".ts"))
            .filter((file) => /\bconsole\.\w+\(/.test(readFileSync(path.join(source, file), "utf8")));
        expect(offenders).toEqual([]);
    });
});
