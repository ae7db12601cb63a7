"use strict";
const { app } = require("@azure/functions");
const { state, release } = require("../lib/state");

app.http("hello", {
    methods: ["GET", "POST"],
    route: "hello/{name?}",
    handler: async (request, context) => {
        const name = request.params.name || "world";
        context.log(`hello ${name}`);
        context.warn(`warning for ${name}`);
        return {
            jsonBody: {
                name,
                method: request.method,
                query: Object.fromEntries(request.query.entries()),
                body: request.method === "POST" ? await request.text() : null,
                echoHeader: request.headers.get("x-echo"),
                url: request.url,
                invocationId: context.invocationId,
            },
            headers: { "x-powered-by": "conformance-app" },
            cookies: [{ name: "visited", value: "yes", httpOnly: true }],
        };
    },
});

app.http("secured", {
    methods: ["GET"],
    authLevel: "function",
    route: "secured",
    handler: async () => ({ body: "secret" }),
});

app.http("adminOnly", {
    methods: ["GET"],
    authLevel: "admin",
    route: "admin-only",
    handler: async () => ({ body: "admin" }),
});

app.http("items", {
    methods: ["GET"],
    route: "items/{id:int}",
    handler: async (request) => ({ jsonBody: { id: Number(request.params.id) } }),
});

app.http("noContent", {
    methods: ["DELETE"],
    route: "items/{id}",
    handler: async () => undefined,
});

app.http("slow", {
    methods: ["GET"],
    route: "slow",
    handler: async (request) => {
        const ms = Number(request.query.get("ms") || "100");
        await new Promise((resolve) => setTimeout(resolve, ms));
        return { body: "slow done" };
    },
});

app.http("throws", {
    methods: ["GET"],
    route: "throws",
    handler: async () => {
        throw new Error("deliberate HTTP failure");
    },
});

app.http("probe", {
    methods: ["GET"],
    route: "probe",
    handler: async () => ({ jsonBody: state }),
});

app.http("release", {
    methods: ["POST"],
    route: "release/{key}",
    handler: async (request) => {
        release(request.params.key);
        return { status: 202 };
    },
});
