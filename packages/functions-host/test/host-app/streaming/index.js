"use strict";
const { Readable } = require("node:stream");
const { app } = require("@azure/functions");

app.setup({ enableHttpStream: true });

app.http("streamOut", {
    methods: ["GET"],
    route: "stream/{count:int}",
    handler: async (request) => {
        const count = Number(request.params.count);
        async function* chunks() {
            for (let i = 0; i < count; i++) {
                yield `chunk ${i}\n`;
                await new Promise((resolve) => setTimeout(resolve, 5));
            }
        }
        return { body: Readable.from(chunks()), headers: { "content-type": "text/plain", "x-route-count": String(count) } };
    },
});

app.http("streamEcho", {
    methods: ["POST"],
    authLevel: "function",
    route: "echo",
    handler: async (request) => {
        const text = await request.text();
        return { jsonBody: { length: text.length, first: text.slice(0, 5), header: request.headers.get("x-test") } };
    },
});
