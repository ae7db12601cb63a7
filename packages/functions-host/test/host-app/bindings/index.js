"use strict";
const { app, input, output } = require("@azure/functions");

// Settings name the containers and tables, so each test run writes to its own.
const CONTAINER = "%BINDINGS_CONTAINER%";
const TABLE = "%BINDINGS_TABLE%";
const seen = { runs: {}, queueTraces: [] };
const counted = (name) => (seen.runs[name] = (seen.runs[name] || 0) + 1);

// Blob output: the path takes the route parameter, a query parameter (either casing of Query), and a JSON body property.
const blobFromRoute = output.storageBlob({ path: `${CONTAINER}/route/{id}.txt`, connection: "BindingsStorage" });
const blobFromQuery = output.storageBlob({ path: `${CONTAINER}/query/{Query.name}-{query.NAME}.bin`, connection: "BindingsStorage" });
const blobFromBody = output.storageBlob({ path: `${CONTAINER}/body/{customer}/{headers.x-part}.json`, connection: "BindingsStorage" });

app.http("writeBlobs", {
    methods: ["POST"],
    route: "blobs/{id}",
    extraOutputs: [blobFromRoute, blobFromQuery, blobFromBody],
    handler: async (request, context) => {
        counted("writeBlobs");
        const body = await request.json();
        context.extraOutputs.set(blobFromRoute, `text for ${request.params.id}`);
        context.extraOutputs.set(blobFromQuery, Buffer.from([0, 1, 2, 250]));
        context.extraOutputs.set(blobFromBody, { customer: body.customer, lines: body.lines });
        return { status: 201 };
    },
});

app.http("blobNeedsMissingName", {
    methods: ["GET"],
    route: "blobs-missing",
    extraOutputs: [output.storageBlob({ path: `${CONTAINER}/missing/{notThere}.txt`, connection: "BindingsStorage" })],
    handler: async () => {
        counted("blobNeedsMissingName");
        return { body: "ran" };
    },
});

const blobIn = input.storageBlob({ path: `${CONTAINER}/route/{id}.txt`, connection: "BindingsStorage" });
app.http("readBlob", {
    methods: ["GET"],
    route: "blob-in/{id}",
    extraInputs: [blobIn],
    handler: async (request, context) => {
        const content = context.extraInputs.get(blobIn);
        return { jsonBody: { isBuffer: Buffer.isBuffer(content), text: content == null ? null : content.toString("utf8") } };
    },
});

// Table output: one entity or an array; keys from the value or from the binding (with expressions).
const tableOut = output.table({ tableName: TABLE, connection: "BindingsStorage" });
const tableOutKeyed = output.table({ tableName: TABLE, partitionKey: "{Query.pk}", rowKey: "{id}", connection: "BindingsStorage" });

app.http("writeEntities", {
    methods: ["POST"],
    route: "entities",
    extraOutputs: [tableOut],
    handler: async (request, context) => {
        counted("writeEntities");
        context.extraOutputs.set(tableOut, await request.json());
        return { status: 201 };
    },
});

app.http("writeKeyedEntity", {
    methods: ["POST"],
    route: "keyed/{id}",
    extraOutputs: [tableOutKeyed],
    handler: async (request, context) => {
        context.extraOutputs.set(tableOutKeyed, await request.json());
        return { status: 201 };
    },
});

const oneEntity = input.table({ tableName: TABLE, partitionKey: "{pk}", rowKey: "{rk}", connection: "BindingsStorage" });
app.http("readEntity", {
    methods: ["GET"],
    route: "entities/{pk}/{rk}",
    extraInputs: [oneEntity],
    handler: async (request, context) => ({ jsonBody: { entity: context.extraInputs.get(oneEntity) } }),
});

const partitionEntities = input.table({ tableName: TABLE, partitionKey: "{pk}", take: 2, filter: "size gt 1", connection: "BindingsStorage" });
app.http("readPartition", {
    methods: ["GET"],
    route: "partitions/{pk}",
    extraInputs: [partitionEntities],
    handler: async (request, context) => ({ jsonBody: { entities: context.extraInputs.get(partitionEntities) } }),
});

// A queue message's JSON properties are binding data too (and trigger metadata).
const orderBlob = output.storageBlob({ path: `${CONTAINER}/orders/{orderId}-{customer.name}.txt`, connection: "BindingsStorage" });
app.storageQueue("queueToBlob", {
    queueName: "%BINDINGS_ORDERS_QUEUE%",
    connection: "AzureWebJobsStorage",
    extraOutputs: [orderBlob],
    handler: async (message, context) => {
        seen.orderMetadata = { orderId: context.triggerMetadata.orderId, dequeueCount: context.triggerMetadata.dequeueCount };
        context.extraOutputs.set(orderBlob, `order ${message.orderId}`);
    },
});

// A queue output whose name comes from the query.
const namedQueue = output.storageQueue({ queueName: "{Query.q}", connection: "AzureWebJobsStorage" });
app.http("toNamedQueue", {
    methods: ["POST"],
    route: "to-queue",
    extraOutputs: [namedQueue],
    handler: async (request, context) => {
        context.extraOutputs.set(namedQueue, await request.text());
        return { status: 202 };
    },
});

// HTTP trigger data without streaming: request.params is the route only; a table row keyed by
// query, header and body expressions shows what the binding expressions saw.
const metadataRow = output.table({ tableName: TABLE, partitionKey: "{query.kind}", rowKey: "{headers.x-row}-{customer}-{Flag}", connection: "BindingsStorage" });
app.http("httpData", {
    methods: ["POST"],
    route: "data/{id}/{extra?}",
    extraOutputs: [metadataRow],
    handler: async (request, context) => {
        context.extraOutputs.set(metadataRow, { seen: "yes" });
        return { jsonBody: { params: request.params, triggerMetadata: context.triggerMetadata ?? null } };
    },
});

// Trace context, read the way apps hand it to OpenTelemetry in a preInvocation hook:
// propagation.extract(context.active(), { traceparent, tracestate }). extractSpanContext applies
// the W3CTraceContextPropagator's parsing rules, so an invalid header would come out undefined.
function extractSpanContext(carrier) {
    const match = /^\s?([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?\s?$/.exec(carrier.traceparent || "");
    if (!match || match[1] === "ff" || (match[1] === "00" && match[5])) return undefined;
    if (/^0+$/.test(match[2]) || /^0+$/.test(match[3])) return undefined;
    return { traceId: match[2], spanId: match[3], traceFlags: parseInt(match[4], 16), isRemote: true, traceState: carrier.tracestate || undefined };
}

app.hook.preInvocation((hookContext) => {
    const trace = hookContext.invocationContext.traceContext;
    hookContext.hookData.spanContext = trace ? extractSpanContext({ traceparent: trace.traceParent, tracestate: trace.traceState }) : undefined;
});

app.hook.postInvocation((hookContext) => {
    if (hookContext.invocationContext.functionName === "traceQueue" || hookContext.invocationContext.functionName === "traceTimer") {
        seen.queueTraces.push({ function: hookContext.invocationContext.functionName, spanContext: hookContext.hookData.spanContext, ...traceCarrier(hookContext.invocationContext) });
    }
});

function traceCarrier(context) {
    const trace = context.traceContext;
    return { traceparent: trace && trace.traceParent, tracestate: trace && trace.traceState, attributes: trace && trace.attributes };
}

let lastSpanContext;
app.hook.preInvocation((hookContext) => {
    if (hookContext.invocationContext.functionName === "traceEcho") lastSpanContext = hookContext.hookData.spanContext;
});

app.http("traceEcho", {
    methods: ["GET"],
    route: "trace",
    handler: async (request, context) => ({ jsonBody: { ...traceCarrier(context), spanContext: lastSpanContext ?? null } }),
});

app.storageQueue("traceQueue", {
    queueName: "%BINDINGS_QUEUE%",
    connection: "AzureWebJobsStorage",
    handler: async () => undefined,
});

app.timer("traceTimer", {
    schedule: "0 0 0 1 1 *",
    handler: async () => undefined,
});

app.http("seen", {
    methods: ["GET"],
    route: "seen",
    handler: async () => ({ jsonBody: seen }),
});
