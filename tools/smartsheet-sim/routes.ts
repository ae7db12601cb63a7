import { addColumn, deleteColumn, getColumns, updateColumn } from "./columnRoutes";
import { createCrossSheetReference, getCrossSheetReference, listCrossSheetReferences } from "./crossSheetReferenceRoutes";
import { createFolder, deleteFolder, getFolderChildren } from "./folderRoutes";
import { addRows, deleteRows, updateRows } from "./rowRoutes";
import { copySheet, deleteSheet, getSheet, updateSheet } from "./sheetRoutes";
import type { RouteHandler } from "./RouteContext";
import type { SimOperation } from "./SimOperation";
import { addSummaryFields, deleteSummaryFields, getSummary, getSummaryFields, updateSummaryFields } from "./summaryRoutes";
import { createWebhook, deleteWebhook, getWebhook, listWebhooks, resetSharedSecret, updateWebhook } from "./webhookRoutes";

export interface Route {
    method: string;
    op: SimOperation;
    handler: RouteHandler;
    pattern: RegExp;
    paramNames: string[];
}

export type RouteMatch =
    | { kind: "route"; route: Route; params: Map<string, number> }
    | { kind: "methodNotAllowed" }
    | { kind: "none" };

const ROUTES: Route[] = [
    route("GET", "/folders/:folderId/children", "getFolderChildren", getFolderChildren),
    route("POST", "/folders/:folderId/folders", "createFolder", createFolder),
    route("DELETE", "/folders/:folderId", "deleteFolder", deleteFolder),
    route("POST", "/sheets/:sheetId/copy", "copySheet", copySheet),
    route("GET", "/sheets/:sheetId", "getSheet", getSheet),
    route("PUT", "/sheets/:sheetId", "updateSheet", updateSheet),
    route("DELETE", "/sheets/:sheetId", "deleteSheet", deleteSheet),
    route("POST", "/sheets/:sheetId/rows", "addRows", addRows),
    route("PUT", "/sheets/:sheetId/rows", "updateRows", updateRows),
    route("DELETE", "/sheets/:sheetId/rows", "deleteRows", deleteRows),
    route("GET", "/sheets/:sheetId/columns", "getColumns", getColumns),
    route("POST", "/sheets/:sheetId/columns", "addColumn", addColumn),
    route("PUT", "/sheets/:sheetId/columns/:columnId", "updateColumn", updateColumn),
    route("DELETE", "/sheets/:sheetId/columns/:columnId", "deleteColumn", deleteColumn),
    route("GET", "/sheets/:sheetId/crosssheetreferences", "listCrossSheetReferences", listCrossSheetReferences),
    route("POST", "/sheets/:sheetId/crosssheetreferences", "createCrossSheetReference", createCrossSheetReference),
    route("GET", "/sheets/:sheetId/crosssheetreferences/:crossSheetReferenceId", "getCrossSheetReference", getCrossSheetReference),
    route("GET", "/sheets/:sheetId/summary", "getSummary", getSummary),
    route("GET", "/sheets/:sheetId/summary/fields", "getSummaryFields", getSummaryFields),
    route("POST", "/sheets/:sheetId/summary/fields", "addSummaryFields", addSummaryFields),
    route("PUT", "/sheets/:sheetId/summary/fields", "updateSummaryFields", updateSummaryFields),
    route("DELETE", "/sheets/:sheetId/summary/fields", "deleteSummaryFields", deleteSummaryFields),
    route("GET", "/webhooks", "listWebhooks", listWebhooks),
    route("POST", "/webhooks", "createWebhook", createWebhook),
    route("GET", "/webhooks/:webhookId", "getWebhook", getWebhook),
    route("PUT", "/webhooks/:webhookId", "updateWebhook", updateWebhook),
    route("DELETE", "/webhooks/:webhookId", "deleteWebhook", deleteWebhook),
    // The guide writes resetsharedsecret, the OpenAPI text resetSharedSecret.
    route("POST", "/webhooks/:webhookId/resetsharedsecret", "resetSharedSecret", resetSharedSecret),
    route("POST", "/webhooks/:webhookId/resetSharedSecret", "resetSharedSecret", resetSharedSecret),
];

/** `path` is relative to the API root, with or without the `/2.0` prefix. */
export function matchRoute(method: string, path: string): RouteMatch {
    const relative = path.replace(/^\/2\.0(?=\/)/, "").replace(/(.)\/+$/, "$1");
    let pathKnown = false;
    for (const candidate of ROUTES) {
        const match = candidate.pattern.exec(relative);
        if (!match) continue;
        if (candidate.method !== method.toUpperCase()) {
            pathKnown = true;
            continue;
        }
        const params = new Map(candidate.paramNames.map((name, i) => [name, Number(match[i + 1])]));
        return { kind: "route", route: candidate, params };
    }
    return pathKnown ? { kind: "methodNotAllowed" } : { kind: "none" };
}

function route(method: string, template: string, op: SimOperation, handler: RouteHandler): Route {
    const paramNames: string[] = [];
    const source = template.replace(/:(\w+)/g, (_whole, name: string) => {
        paramNames.push(name);
        return "(\\d+)";
    });
    return { method, op, handler, pattern: new RegExp(`^${source}$`), paramNames };
}
