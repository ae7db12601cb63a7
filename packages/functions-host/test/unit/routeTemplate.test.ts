import { describe, expect, it } from "vitest";
import { matchRoute, parseRouteTemplate } from "../../src/http/routeTemplate";

const match = (template: string, path: string) => matchRoute(parseRouteTemplate(template), path);

describe("HTTP route templates", () => {
    it("matches literals case-insensitively and captures parameters", () => {
        expect(match("jobs/{jobKey}/unpark", "Jobs/abc-1/UNPARK")).toEqual({ jobKey: "abc-1" });
        expect(match("jobs/{jobKey}", "jobs/abc/extra")).toBeUndefined();
        expect(match("jobs/{jobKey}", "jobs/a%20b")).toEqual({ jobKey: "a b" });
    });

    it("supports optional parameters and defaults", () => {
        expect(match("hello/{name?}", "hello")).toEqual({});
        expect(match("hello/{name?}", "hello/ada")).toEqual({ name: "ada" });
        expect(match("page/{n=1}", "page")).toEqual({ n: "1" });
    });

    it("applies constraints", () => {
        expect(match("items/{id:int}", "items/42")).toEqual({ id: "42" });
        expect(match("items/{id:int}", "items/x")).toBeUndefined();
        expect(match("flags/{on:bool}", "flags/TRUE")).toEqual({ on: "TRUE" });
        expect(match("codes/{c:alpha:minlength(2)}", "codes/a")).toBeUndefined();
        expect(match("codes/{c:regex(^p-\\d+$)}", "codes/p-12")).toEqual({ c: "p-12" });
    });

    it("supports catch-all parameters", () => {
        expect(match("files/{*path}", "files/a/b/c.txt")).toEqual({ path: "a/b/c.txt" });
        expect(match("files/{*path}", "files")).toEqual({});
    });

    it("rejects constraints it does not know, saying which", () => {
        expect(() => parseRouteTemplate("x/{id:weird}")).toThrow(/':weird' is not supported/);
    });
});
