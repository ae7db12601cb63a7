import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { ApiError, apiErrors } from "./ApiError";
import { CallLog, type CallsSnapshot } from "./CallLog";
import { FaultInjector, type ActiveFault, type FaultRule, type FaultRuleInput } from "./FaultInjector";
import { RateLimiter } from "./RateLimiter";
import {
    isoTime,
    renderColumn,
    renderReference,
    renderRows,
    renderSummaryField,
    type ApiColumn,
    type ApiCrossSheetReference,
    type ApiRow,
    type ApiSummaryField,
} from "./render";
import type { RouteHandler } from "./RouteContext";
import { matchRoute } from "./routes";
import { DEMO_SEED, seedDemoWorkspace } from "./seedDemoWorkspace";

/** How long before the simulator's start (or reset) its seeded workspace counts as built. */
const SEEDED_BEFORE_MS = 60 * 60_000;
import {
    applyConfigPatch,
    DEFAULT_TOKENS,
    initialConfig,
    MAX_SITES,
    SimConfigPatch,
    type SimConfig,
    type SimulatorOptions,
} from "./SimulatorOptions";
import { Webhooks, userIdOf, type SimWebhook, type WebhookDelivery, type WebhookEvent, type WebhookStatus } from "./Webhooks";
import type { ActiveWebhookFault, WebhookFaultRuleInput } from "./WebhookFaults";
import { Workspace } from "./Workspace";
import type { SimAnchors, SimSite } from "./model";

export interface ApiRequest {
    method: string;
    /** The URL path, without the query string. */
    path: string;
    /** The raw query string, without "?". */
    query: string;
    authorization: string | undefined;
    bodyText: string;
    /** The `Smartsheet-Change-Agent` header: echoed as `changeAgent` on the webhook events of this write. */
    changeAgent?: string;
}

export type ApiOutcome =
    | { kind: "json"; status: number; body: unknown }
    | { kind: "html"; status: number; body: string }
    /** Send nothing: the socket stays open until the client gives up or the server closes. */
    | { kind: "hang" };

export interface SimState {
    /** The first site's anchors, as before there were sites. */
    anchors: SimAnchors | null;
    intakeSheetId?: number;
    templateFolderId?: number;
    productsFolderId?: number;
    filingIndexSheetId?: number;
    /** Every seeded customer workspace with its token (the first is the one of the anchors above); empty when not seeded. */
    sites: SimSite[];
    /** The first workspace. */
    workspace: { id: number; name: string; permalink: string; createdAt: string };
    folders: Array<{ id: number; name: string; parentId: number | null; permalink: string; createdAt: string }>;
    sheets: SimSheetState[];
}

export interface SimSheetState {
    id: number;
    name: string;
    /** The containing folder, or the workspace. */
    folderId: number;
    permalink: string;
    version: number;
    createdAt: string;
    modifiedAt: string;
    copiedFromSheetId?: number;
    columns: ApiColumn[];
    rows: ApiRow[];
    crossSheetReferences: ApiCrossSheetReference[];
    summaryFields: ApiSummaryField[];
}

const BAD_GATEWAY_HTML =
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n";

/**
 * The simulator's state and behaviour, without HTTP: the REST pipeline (auth, rate limit, faults,
 * latency, handlers, call log) and the admin operations the `/__sim/` API exposes.
 */
export class SimulatorCore {
    private readonly tokens: ReadonlySet<string>;
    /** Each site's token and name; site n is seeded n-th. */
    private readonly siteTokens: ReadonlyArray<{ name: string; token: string }>;
    private readonly startConfig: SimConfig;
    private readonly seeded: boolean;
    private readonly clock: () => number;
    private currentConfig: SimConfig;
    private workspace: Workspace;
    private seededAnchors: SimAnchors | undefined;
    private seededSites: Array<SimSite & { workspaceId: number }> = [];
    private readonly callLog = new CallLog();
    private readonly faultInjector = new FaultInjector();
    private readonly rateLimiter = new RateLimiter();
    private readonly webhooks: Webhooks;

    constructor(options: SimulatorOptions = {}) {
        const tokens = options.tokens ?? DEFAULT_TOKENS;
        const sites = options.sites ?? 1;
        if (!Number.isInteger(sites) || sites < 1 || sites > MAX_SITES) throw new Error(`sites: expected a whole number from 1 to ${MAX_SITES}, got ${sites}`);
        if (tokens.length === 0) throw new Error("tokens: expected at least one token");
        this.siteTokens = Array.from({ length: sites }, (_, index) => ({
            name: index === 0 ? "demo" : `demo-${index + 1}`,
            token: index === 0 ? tokens[0]! : `${tokens[0]}-${index + 1}`,
        }));
        this.tokens = new Set([...tokens, ...this.siteTokens.map((site) => site.token)]);
        this.startConfig = initialConfig(options);
        this.currentConfig = this.startConfig;
        this.seeded = options.seed ?? true;
        this.clock = options.clock ?? Date.now;
        this.workspace = new Workspace(DEMO_SEED, this.clock);
        this.webhooks = new Webhooks(
            () => this.currentConfig.webhooks,
            () => this.clock(),
            () => this.workspace.nextId(),
        );
        this.reset();
    }

    /** Smartsheet's clock: what `modifiedAt` and each answer's `Date` header say. */
    now(): number {
        return this.clock();
    }

    /** The demo workspace's well-known ids; the same after every reset. */
    get anchors(): SimAnchors {
        if (!this.seededAnchors) throw new Error("The simulator was started with seed: false; there are no demo anchors.");
        return { ...this.seededAnchors };
    }

    /** The seeded customer workspaces, each with its token; the first is the one `anchors` describes. */
    sites(): SimSite[] {
        return this.seededSites.map(({ workspaceId: _, ...site }) => ({ ...site }));
    }

    state(): SimState {
        const workspace = this.workspace;
        const containers = [...workspace.containers.values()].sort((a, b) => a.seq - b.seq);
        const root = containers.find((container) => container.kind === "workspace");
        if (!root) throw new Error("The simulated account has no workspace");
        const anchors = this.seededAnchors ? { ...this.seededAnchors } : null;
        return {
            anchors,
            sites: this.sites(),
            ...(anchors
                ? {
                      intakeSheetId: anchors.intakeSheetId,
                      templateFolderId: anchors.templateFolderId,
                      productsFolderId: anchors.productsFolderId,
                      filingIndexSheetId: anchors.filingIndexSheetId,
                  }
                : {}),
            workspace: { id: root.id, name: root.name, permalink: root.permalink, createdAt: isoTime(root.createdAt) },
            folders: containers
                .filter((container) => container.kind === "folder")
                .map((folder) => ({
                    id: folder.id,
                    name: folder.name,
                    parentId: folder.parentId,
                    permalink: folder.permalink,
                    createdAt: isoTime(folder.createdAt),
                })),
            sheets: [...workspace.sheets.values()]
                .sort((a, b) => a.seq - b.seq)
                .map((sheet) => ({
                    id: sheet.id,
                    name: sheet.name,
                    folderId: sheet.containerId,
                    permalink: sheet.permalink,
                    version: sheet.version,
                    createdAt: isoTime(sheet.createdAt),
                    modifiedAt: isoTime(sheet.modifiedAt),
                    ...(sheet.copiedFromSheetId === undefined ? {} : { copiedFromSheetId: sheet.copiedFromSheetId }),
                    columns: sheet.columns.map(renderColumn),
                    rows: renderRows(sheet, sheet.rows),
                    crossSheetReferences: sheet.crossSheetReferences.map((reference) =>
                        renderReference(reference, workspace.sheets.has(reference.sourceSheetId)),
                    ),
                    summaryFields: sheet.summaryFields.map((field, index) => renderSummaryField(field, index)),
                })),
        };
    }

    calls(): CallsSnapshot {
        return this.callLog.snapshot();
    }

    resetCalls(): void {
        this.callLog.reset();
    }

    /** Replaces the active fault rules; an empty list clears them. */
    setFaults(rules: readonly FaultRuleInput[]): ActiveFault[] {
        return this.faultInjector.setRules(rules);
    }

    faults(): ActiveFault[] {
        return this.faultInjector.list();
    }

    config(): SimConfig {
        return structuredClone(this.currentConfig);
    }

    configure(patch: SimConfigPatch): SimConfig {
        this.currentConfig = applyConfigPatch(this.currentConfig, SimConfigPatch.parse(patch));
        return this.config();
    }

    /**
     * Locks (or unlocks) rows of a sheet as a sheet admin would: the API's tokens then get 403/1050
     * writing them. Answers every row of the sheet now locked. An unknown sheet or row is 404, and
     * nothing changes.
     */
    lockRows(sheetId: number, rowIds: readonly number[], locked: boolean): number[] {
        const sheet = this.workspace.sheet(sheetId);
        const rows = rowIds.map((rowId) => sheet.rows.find((row) => row.id === rowId));
        if (rows.some((row) => row === undefined)) throw apiErrors.notFound();
        for (const row of rows) row!.locked = locked;
        return sheet.rows.filter((row) => row.locked).map((row) => row.id);
    }

    /** Back to the freshly seeded workspace (same ids, no row locked) (same ids), with faults, calls and config as at start. */
    reset(): void {
        // The seeded workspace was built before the app ever ran: its sheets were last modified an hour ago.
        let seeding = true;
        this.workspace = new Workspace(DEMO_SEED, () => this.clock() - (seeding ? SEEDED_BEFORE_MS : 0));
        if (this.seeded) {
            // Seeded in order from one id source: the first site's ids are the same with any number of sites.
            const seeded = this.siteTokens.map((site, index) => ({ ...site, anchors: seedDemoWorkspace(this.workspace, { number: index + 1 }) }));
            this.seededAnchors = seeded[0]!.anchors;
            this.seededSites = seeded.map(({ name, token, anchors: { workspaceId, ...ids } }) => ({ name, token, ...ids, workspaceId }));
        } else this.workspace.createWorkspace("Sheetwright Demo");
        seeding = false;
        this.currentConfig = this.startConfig;
        this.workspace.takeChanges();
        this.faultInjector.reset();
        this.callLog.reset();
        this.rateLimiter.reset();
        this.webhooks.reset();
    }

    /** Stops webhook timers and callbacks in flight: nothing is sent after the simulator stops. */
    stop(): void {
        this.webhooks.stop();
    }

    /** Every token's webhooks, each with the token that owns it. */
    webhookList(): Array<SimWebhook & { owner: string }> {
        return this.webhooks.all().map(({ delivery: _, ...hook }: SimWebhook & { delivery?: unknown }) => structuredClone(hook));
    }

    /** Every request sent to a callback URL: verifications, event and status callbacks, faults applied. */
    webhookDeliveries(): WebhookDelivery[] {
        return this.webhooks.deliveries();
    }

    /** Replaces the active webhook fault rules; an empty list clears them. */
    setWebhookFaults(rules: readonly WebhookFaultRuleInput[]): ActiveWebhookFault[] {
        return this.webhooks.faults.setRules(rules);
    }

    webhookFaults(): ActiveWebhookFault[] {
        return this.webhooks.faults.list();
    }

    /**
     * Smartsheet changes a webhook's status behind its owner's back: disabled (any DISABLED_*
     * status), or ENABLED again after DISABLED_SCOPE_INACCESSIBLE (access restored).
     */
    setWebhookStatus(webhookId: number, status: WebhookStatus): SimWebhook {
        const { delivery: _, ...hook } = this.webhooks.setStatus(webhookId, status) as SimWebhook & { delivery?: unknown };
        return structuredClone(hook);
    }

    /** Answers one REST call: auth, rate limit, route, fault, handler, latency; then logs it. */
    async handleApi(request: ApiRequest): Promise<ApiOutcome> {
        const at = new Date().toISOString();
        const match = matchRoute(request.method, request.path);
        const op = match.kind === "route" ? match.route.op : "unknown";
        const token = /^Bearer\s+(\S+)\s*$/i.exec(request.authorization ?? "")?.[1];
        const log = (outcome: ApiOutcome, fault?: FaultRule) => {
            const errorCode = outcome.kind === "json" ? (outcome.body as { errorCode?: unknown } | null)?.errorCode : undefined;
            this.callLog.record({
                op,
                method: request.method,
                path: request.path,
                ...(request.query ? { query: request.query } : {}),
                status: outcome.kind === "hang" ? null : outcome.status,
                ...(typeof errorCode === "number" ? { errorCode } : {}),
                at,
                ...(fault ? { fault: fault.kind } : {}),
            }, token === undefined ? "(none)" : this.tokens.has(token) ? token : "(unknown)");
            return outcome;
        };

        if (token === undefined) return log(errorOutcome(apiErrors.tokenMissing()));
        if (!this.tokens.has(token)) return log(errorOutcome(apiErrors.tokenInvalid()));
        if (!this.rateLimiter.tryAcquire(token, this.currentConfig.rateLimit, Date.now())) {
            return log(errorOutcome(apiErrors.rateLimited()));
        }
        if (match.kind === "none") return log(errorOutcome(apiErrors.notFound()));
        if (match.kind === "methodNotAllowed") return log(errorOutcome(apiErrors.methodNotAllowed(request.method)));
        if (!this.reaches(token, match.params, request.bodyText)) return log(errorOutcome(apiErrors.notAuthorized()));

        const latency = this.currentConfig.latencyMs[match.route.op];
        const fault = this.faultInjector.take(match.route.op, `${request.path}?${request.query}\n${request.bodyText}`);
        const refusal = fault && refusalFor(fault);
        if (refusal) {
            await pause(latency);
            return log(refusal, fault);
        }
        if (fault?.kind === "delay") await pause(fault.delayMs);

        let outcome = await this.run(match.route.handler, match.params, request, token);
        this.publishChanges(token, request.changeAgent);
        if (outcome.kind === "json" && outcome.status === 200) {
            if (fault?.kind === "commitThenHang") return log({ kind: "hang" }, fault);
            if (fault?.kind === "commitThenError4002") outcome = errorOutcome(apiErrors.serverTimeout());
        }
        await pause(latency);
        return log(outcome, fault);
    }

    /**
     * Whether the token may touch what the call names: a site's token (with two or more sites)
     * only its own workspace; any other token everything. Ids that name nothing are let through
     * for the handler to answer 404.
     */
    private reaches(token: string, params: ReadonlyMap<string, number>, bodyText: string): boolean {
        if (this.seededSites.length < 2) return true;
        const site = this.seededSites.find((candidate) => candidate.token === token);
        if (!site) return true;
        const named = [params.get("folderId"), params.get("sheetId"), ...namedInBody(bodyText)].filter((id): id is number => id !== undefined);
        return named.every((id) => {
            const root = this.workspaceOf(id);
            return root === undefined || root === site.workspaceId;
        });
    }

    /** The workspace a folder or sheet lies in; `undefined` when the id names neither. */
    private workspaceOf(id: number): number | undefined {
        let containerId = this.workspace.sheets.get(id)?.containerId ?? (this.workspace.containers.has(id) ? id : undefined);
        while (containerId !== undefined) {
            const container = this.workspace.containers.get(containerId);
            if (!container) return undefined;
            if (container.kind === "workspace") return container.id;
            containerId = container.parentId ?? undefined;
        }
        return undefined;
    }

    /** Hands the changes of the write just made to the webhooks, stamped with its user, time and change agent. */
    private publishChanges(token: string, changeAgent: string | undefined): void {
        const changes = this.workspace.takeChanges();
        const timestamp = new Date(this.clock()).toISOString();
        const userId = userIdOf(token);
        const bySheet = new Map<number, WebhookEvent[]>();
        for (const { sheetId, change } of changes) {
            const events = bySheet.get(sheetId) ?? [];
            events.push({ ...change, userId, timestamp, ...(changeAgent ? { changeAgent } : {}) });
            bySheet.set(sheetId, events);
        }
        for (const [sheetId, events] of bySheet) this.webhooks.publish(sheetId, events);
        this.webhooks.checkScopes((sheetId) => this.workspace.sheets.has(sheetId));
    }

    private async run(handler: RouteHandler, params: Map<string, number>, request: ApiRequest, token: string): Promise<ApiOutcome> {
        try {
            const body = parseJson(request.bodyText);
            const result = await handler({
                workspace: this.workspace,
                config: this.currentConfig,
                id: (name) => {
                    const value = params.get(name);
                    if (value === undefined) throw new Error(`Route has no parameter ${name}`);
                    return value;
                },
                query: new URLSearchParams(request.query),
                body,
                token,
                webhooks: this.webhooks,
            });
            return { kind: "json", status: 200, body: result };
        } catch (error) {
            if (error instanceof ApiError) return errorOutcome(error);
            console.error("smartsheet-sim: handler failed", error);
            return errorOutcome(apiErrors.unexpected());
        }
    }
}

/** Where a copy goes (`destinationId`) and the sheet a webhook watches (`scopeObjectId`), if the body says. */
function namedInBody(bodyText: string): number[] {
    try {
        const body = JSON.parse(bodyText) as { destinationId?: unknown; scopeObjectId?: unknown } | null;
        return [body?.destinationId, body?.scopeObjectId].filter((id): id is number => typeof id === "number");
    } catch {
        return [];
    }
}

async function pause(ms: number): Promise<void> {
    if (ms > 0) await sleep(ms);
}

function parseJson(text: string): unknown {
    if (text.trim() === "") return undefined;
    try {
        return JSON.parse(text);
    } catch (error) {
        throw apiErrors.unparsable(error instanceof Error ? error.message : String(error));
    }
}

/** A fault that answers without doing anything, or undefined for the kinds that let the call run. */
function refusalFor(fault: FaultRule): ApiOutcome | undefined {
    switch (fault.kind) {
        case "rate429":
            return errorOutcome(apiErrors.rateLimited());
        case "error4002":
            return errorOutcome(apiErrors.serverTimeout());
        case "error4004":
            return errorOutcome(apiErrors.retryLater());
        case "error1004":
            return errorOutcome(apiErrors.notAuthorized());
        case "html502":
            return { kind: "html", status: 502, body: BAD_GATEWAY_HTML };
        default:
            return undefined;
    }
}

export function errorOutcome(error: ApiError): ApiOutcome {
    return {
        kind: "json",
        status: error.status,
        body: {
            errorCode: error.errorCode,
            message: error.message,
            refId: randomBytes(8).toString("base64url").toLowerCase().replace(/[^a-z0-9]/g, "").slice(0, 12),
            ...(error.detail === undefined ? {} : { detail: error.detail }),
        },
    };
}
