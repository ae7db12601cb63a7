import type { Site } from "../sites/Sites";

/** The route of the receiver (host.json keeps the default `api` prefix). */
export const RECEIVER_ROUTE = "intake/webhook";

/**
 * The name the app gives the webhook on a site's intake sheet, by which it adopts the one it made
 * before (a restart, another instance): the site and the app it calls back, so that two
 * deployments on one sheet (staging and production) each keep their own.
 */
export function webhookNameFor(site: Pick<Site, "name">, webhookBaseUrl: string): string {
    return `Sheetwright intake ${site.name} @ ${new URL(webhookBaseUrl).host}`;
}

/** Where Smartsheet sends the site's callbacks: the receiver, with the function key it needs. Secret (the key): never logged. */
export function callbackUrlFor(webhookBaseUrl: string, functionKey: string): string {
    return `${webhookBaseUrl}api/${RECEIVER_ROUTE}?code=${encodeURIComponent(functionKey)}`;
}
