import { createClient } from "smartsheet";
import { create as createRequestor } from "smartsheet/dist/lib/utils/httpRequestor";
import { z } from "zod";
import {
    AmbiguousWriteError,
    NEVER_SENT_CAUSES,
    PermanentSmartsheetError,
    SmartsheetError,
    TransientSmartsheetError,
} from "./errors";
import {
    Column,
    ColumnsPage,
    CrossSheetReference,
    FolderChild,
    FolderChildrenPage,
    FolderRef,
    PartialRowsResult,
    Row,
    Sheet,
    SheetRef,
    SheetSummary,
    SummaryField,
    Webhook,
    WebhooksPage,
    WriteAck,
    writeResult,
} from "./model";
import { callContext, createPacedTransport, type CallContext } from "./pacedTransport";
import { RateLimiter, systemClock, type Clock } from "./RateLimiter";
import type { Telemetry } from "../telemetry/Telemetry";
import type {
    CallTally,
    ChildKind,
    ColumnUpdate,
    Created,
    CopySheetRequest,
    GetSheetOptions,
    NewColumn,
    NewCrossSheetReference,
    NewRow,
    NewSummaryField,
    NewWebhook,
    RowUpdate,
    RowsWritten,
    SheetRead,
    SmartsheetPort,
    SummaryFieldChange,
    SummaryFieldUpdate,
    WebhookChange,
} from "./SmartsheetPort";

export interface SdkSmartsheetOptions {
    accessToken: string;
    /** Must end in `/` (the SDK appends paths to it verbatim). */
    baseUrl: string;
    /** Pacing; Smartsheet allows 300 requests per minute per token. */
    requestsPerMinute?: number;
    /** Client-side timeout of each HTTP request. */
    callTimeoutMs?: number;
    /**
     * Back-off after a 429: `baseMs` doubling up to `maxMs`. No (re-)send of a call starts later
     * than `maxTotalMs` after the call began, pacing waits included: then it fails unsent.
     */
    rateLimitBackoff?: { baseMs: number; maxMs: number; maxTotalMs: number };
    /** Re-sends of idempotent calls (GET, PUT, DELETE) on 4001/4002/4004. */
    idempotentRetries?: { attempts: number; baseMs: number };
    /** Share one limiter between adapters that use the same token. */
    limiter?: RateLimiter;
    clock?: Clock;
    log?: (message: string) => void;
    /** Counts every request by operation and answer, under `tokenSetting` (the app setting's name, never the token). */
    telemetry?: Telemetry;
    tokenSetting?: string;
}

interface RetryOptions {
    calcRetryBackoff: (retryCount: number, error?: { errorCode?: number }) => number;
    maxRetryDurationMillis: number;
}

/** The part of the SDK client this adapter uses (the SDK types `sheets` as `any`). */
interface SdkClient {
    folders: {
        getFolderChildren(options: object): Promise<unknown>;
        createChildFolder(options: object): Promise<unknown>;
        deleteFolder(options: object): Promise<unknown>;
    };
    sheets: Record<
        | "copySheet"
        | "getSheet"
        | "deleteSheet"
        | "deleteRows"
        | "addRows"
        | "updateRow"
        | "getColumns"
        | "addColumn"
        | "updateColumn"
        | "updateSheet"
        | "deleteColumn"
        | "createCrossSheetReference"
        | "getSummary"
        | "addSummaryFields"
        | "updateSummaryFields"
        | "deleteSummaryFields",
        (options: object) => Promise<unknown>
    >;
    webhooks: Record<"listWebhooks" | "getWebhook" | "createWebhook" | "updateWebhook" | "deleteWebhook", (options: object) => Promise<unknown>>;
}

const DEFAULT_RATE_LIMIT_BACKOFF = { baseMs: 2_000, maxMs: 60_000, maxTotalMs: 120_000 };
const RETRYABLE_SERVER_CODES = new Set([4001, 4002, 4004]);
/**
 * Smartsheet's refusals of a create that mean what it makes is there already: 1129 "The resource
 * you tried to create already exists." (a cross-sheet reference's name), 1193 "Duplicate summary
 * field title.", 1056 "Column titles must be unique." (a column's title, in any case; a title
 * twice in one request is 1133, which addColumn's one column never has). Answered as
 * `{ created: false }` (see `Created`), here and nowhere else: only for the creates, so that
 * 1056 refusing a column's rename stays a failure.
 */
const ALREADY_EXISTS_CODES: ReadonlySet<number> = new Set([1129, 1193, 1056]);

/**
 * The one Smartsheet adapter, over the official SDK. It paces requests, absorbs 429s, never
 * re-sends a non-idempotent POST (the SDK would, on 4001–4004), times every request out,
 * classifies failures and counts calls by operation.
 */
export class SdkSmartsheet implements SmartsheetPort {
    private readonly sdk: SdkClient;
    private readonly limiter: RateLimiter;
    private readonly tallies: CallTally[];
    private readonly tally: CallTally = emptyTally();
    private readonly clock: Clock;
    private readonly rateLimitBackoff: { baseMs: number; maxMs: number; maxTotalMs: number };
    private readonly background: boolean;

    constructor(
        private readonly options: SdkSmartsheetOptions,
        shared?: { sdk: SdkClient; limiter: RateLimiter; parentTallies: CallTally[]; background?: boolean },
    ) {
        this.background = shared?.background ?? false;
        this.limiter =
            shared?.limiter ??
            options.limiter ??
            new RateLimiter(options.requestsPerMinute ?? 300, 60_000, options.clock ?? systemClock);
        this.sdk = shared?.sdk ?? buildSdk(options, this.limiter);
        this.tallies = [this.tally, ...(shared?.parentTallies ?? [])];
        this.clock = options.clock ?? systemClock;
        this.rateLimitBackoff = options.rateLimitBackoff ?? DEFAULT_RATE_LIMIT_BACKOFF;
    }

    /** An adapter sharing this one's client and pacing, counting its own calls (and ours), logging to `log`. */
    withOwnTally(log?: (message: string) => void): SdkSmartsheet {
        const options = log ? { ...this.options, log } : this.options;
        return new SdkSmartsheet(options, { sdk: this.sdk, limiter: this.limiter, parentTallies: this.tallies, background: this.background });
    }

    /** This adapter for background work (a convergence): its calls go behind the foreground's, within their share of the limit. */
    inBackground(): SdkSmartsheet {
        return new SdkSmartsheet(this.options, { sdk: this.sdk, limiter: this.limiter, parentTallies: this.tallies, background: true });
    }

    calls(): CallTally {
        return { total: this.tally.total, byOperation: { ...this.tally.byOperation }, rateLimited: this.tally.rateLimited };
    }

    async listFolderChildren(folderId: number, kinds: ChildKind[] = ["sheets", "folders"]): Promise<FolderChild[]> {
        const children: FolderChild[] = [];
        let lastKey: string | undefined;
        do {
            const page = await this.call("getFolderChildren", true, FolderChildrenPage, (retry) =>
                this.sdk.folders.getFolderChildren({
                    folderId,
                    queryParameters: { childrenResourceTypes: kinds.join(","), maxItems: 1000, lastKey },
                    ...retry,
                }),
            );
            children.push(...page.data);
            lastKey = page.lastKey;
        } while (lastKey);
        return children;
    }

    async createFolder(parentFolderId: number, name: string) {
        const answer = await this.call("createFolder", false, writeResult(FolderRef), (retry) =>
            this.sdk.folders.createChildFolder({ folderId: parentFolderId, body: { name }, ...retry }),
        );
        return answer.result;
    }

    async copySheet(sheetId: number, request: CopySheetRequest) {
        const answer = await this.call("copySheet", false, writeResult(SheetRef), (retry) =>
            this.sdk.sheets.copySheet({
                sheetId,
                body: { destinationType: "folder", destinationId: request.destinationFolderId, newName: request.newName },
                queryParameters: request.include.length > 0 ? { include: request.include.join(",") } : undefined,
                ...retry,
            }),
        );
        return answer.result;
    }

    async getSheet(sheetId: number, options: GetSheetOptions = {}): Promise<SheetRead> {
        const query = {
            include: options.include?.join(","),
            columnIds: options.columnIds?.join(","),
            rowIds: options.rowIds?.join(","),
            rowsModifiedSince: options.rowsModifiedSince?.toISOString(),
        };
        const answered = (page?: number) =>
            this.callAnswered("getSheet", true, Sheet, (retry) =>
                this.sdk.sheets.getSheet({
                    sheetId,
                    queryParameters: page === undefined ? query : { ...query, page, pageSize: options.pageSize },
                    ...retry,
                }),
            );
        const read = async (page?: number) => (await answered(page)).value;
        const withTime = ({ value, answeredAt }: { value: Sheet; answeredAt?: string }): SheetRead => ({ ...value, ...(answeredAt ? { answeredAt } : {}) });
        if (!options.pageSize) return withTime(await answered());

        const first = withTime(await answered(1));
        const rows = [...first.rows];
        const seen = new Set(rows.map((row) => row.id));
        // totalRowCount counts the whole sheet, so a filtered read ends at its first short page.
        let last = first.rows.length;
        for (let page = 2; last === options.pageSize && rows.length < (first.totalRowCount ?? 0); page++) {
            const pageRows = (await read(page)).rows;
            // A page past the end repeats the last page.
            const fresh = pageRows.filter((row) => !seen.has(row.id));
            if (fresh.length === 0) break;
            for (const row of fresh) seen.add(row.id);
            rows.push(...fresh);
            last = pageRows.length;
        }
        return { ...first, rows };
    }

    async createCrossSheetReference(sheetId: number, reference: NewCrossSheetReference): Promise<Created<CrossSheetReference>> {
        return created(
            this.call("createCrossSheetReference", false, writeResult(CrossSheetReference), (retry) =>
                this.sdk.sheets.createCrossSheetReference({ sheetId, body: reference, ...retry }),
            ),
        );
    }

    async getSummaryFields(sheetId: number) {
        const summary = await this.call("getSummary", true, SheetSummary, (retry) =>
            this.sdk.sheets.getSummary({ sheetId, ...retry }),
        );
        return summary.fields;
    }

    async addSummaryFields(sheetId: number, fields: NewSummaryField[]): Promise<Created<SummaryField[]>> {
        return created(
            this.call("addSummaryFields", false, writeResult(z.array(SummaryField)), (retry) =>
                this.sdk.sheets.addSummaryFields({ sheetId, body: fields, ...retry }),
            ),
        );
    }

    async updateSummaryFields(sheetId: number, fields: ReadonlyArray<SummaryFieldUpdate | SummaryFieldChange>) {
        const answer = await this.call("updateSummaryFields", true, writeResult(z.array(SummaryField)), (retry) =>
            this.sdk.sheets.updateSummaryFields({ sheetId, body: fields, ...retry }),
        );
        return answer.result;
    }

    async deleteSummaryFields(sheetId: number, fieldIds: number[]): Promise<void> {
        // Smartsheet refuses a delete without ids (1009).
        if (fieldIds.length === 0) return;
        await this.call("deleteSummaryFields", true, WriteAck, (retry) =>
            this.sdk.sheets.deleteSummaryFields({
                sheetId,
                queryParameters: { ids: fieldIds.join(","), ignoreSummaryFieldsNotFound: true },
                ...retry,
            }),
        );
    }

    async updateRows(sheetId: number, rows: RowUpdate[]) {
        const answer = await this.call("updateRows", true, writeResult(z.array(Row)), (retry) =>
            this.sdk.sheets.updateRow({ sheetId, body: rows, ...retry }),
        );
        return answer.result;
    }

    async updateRowsEach(sheetId: number, rows: RowUpdate[]): Promise<RowsWritten> {
        const answer = await this.call("updateRows", true, PartialRowsResult, (retry) =>
            this.sdk.sheets.updateRow({ sheetId, body: rows, queryParameters: { allowPartialSuccess: true }, ...retry }),
        );
        const refused = (answer.failedItems ?? []).map((item) => ({
            rowId: item.rowId ?? rows[item.index]?.id ?? 0,
            ...(item.error.errorCode === undefined ? {} : { errorCode: item.error.errorCode }),
            message: item.error.message,
        }));
        return { updated: answer.result, refused };
    }

    async addRows(sheetId: number, rows: NewRow[]) {
        const answer = await this.call("addRows", false, writeResult(z.array(Row)), (retry) =>
            this.sdk.sheets.addRows({ sheetId, body: rows, ...retry }),
        );
        return answer.result;
    }

    async getColumns(sheetId: number): Promise<Column[]> {
        // includeAll: every column in one answer, however many (pages are 100 by default).
        const page = await this.call("getColumns", true, ColumnsPage, (retry) =>
            this.sdk.sheets.getColumns({ sheetId, queryParameters: { includeAll: true }, ...retry }),
        );
        return [...page.data].sort((a, b) => a.index - b.index);
    }

    async addColumn(sheetId: number, column: NewColumn): Promise<Created<Column>> {
        // Smartsheet adds an array of columns at one index; one column answers as an array of one.
        const answer = await created(
            this.call("addColumn", false, writeResult(z.array(Column).length(1)), (retry) =>
                this.sdk.sheets.addColumn({ sheetId, body: [column], ...retry }),
            ),
        );
        return answer.created ? { created: true, value: answer.value[0]! } : answer;
    }

    async renameSheet(sheetId: number, name: string) {
        const answer = await this.call("updateSheet", true, writeResult(SheetRef), (retry) =>
            this.sdk.sheets.updateSheet({ sheetId, body: { name }, ...retry }),
        );
        return answer.result;
    }

    async updateColumn(sheetId: number, columnId: number, update: ColumnUpdate) {
        const answer = await this.call("updateColumn", true, writeResult(Column), (retry) =>
            this.sdk.sheets.updateColumn({ sheetId, columnId, body: update, ...retry }),
        );
        return answer.result;
    }

    async deleteColumn(sheetId: number, columnId: number): Promise<void> {
        await goneAlready(
            this.call("deleteColumn", true, WriteAck, (retry) => this.sdk.sheets.deleteColumn({ sheetId, columnId, ...retry })),
        );
    }

    async deleteSheet(sheetId: number): Promise<void> {
        await goneAlready(this.call("deleteSheet", true, WriteAck, (retry) => this.sdk.sheets.deleteSheet({ sheetId, ...retry })));
    }

    async deleteFolder(folderId: number): Promise<void> {
        await goneAlready(this.call("deleteFolder", true, WriteAck, (retry) => this.sdk.folders.deleteFolder({ folderId, ...retry })));
    }

    async deleteRows(sheetId: number, rowIds: number[]): Promise<void> {
        await this.call("deleteRows", true, WriteAck, (retry) =>
            this.sdk.sheets.deleteRows({ sheetId, queryParameters: { ids: rowIds.join(","), ignoreRowsNotFound: true }, ...retry }),
        );
    }

    async listWebhooks(): Promise<Webhook[]> {
        const hooks: Webhook[] = [];
        for (let page = 1; ; page++) {
            const answer = await this.call("listWebhooks", true, WebhooksPage, (retry) =>
                this.sdk.webhooks.listWebhooks({ queryParameters: { page, pageSize: 100 }, ...retry }),
            );
            hooks.push(...answer.data);
            if (answer.data.length === 0 || page >= (answer.totalPages ?? 1)) return hooks;
        }
    }

    async getWebhook(webhookId: number): Promise<Webhook> {
        return this.call("getWebhook", true, Webhook, (retry) => this.sdk.webhooks.getWebhook({ webhookId, ...retry }));
    }

    async createWebhook(webhook: NewWebhook): Promise<Webhook> {
        const answer = await this.call("createWebhook", false, writeResult(Webhook), (retry) =>
            this.sdk.webhooks.createWebhook({ body: { ...webhook, scope: "sheet", events: ["*.*"], version: 1 }, ...retry }),
        );
        return answer.result;
    }

    async updateWebhook(webhookId: number, change: WebhookChange): Promise<Webhook> {
        const answer = await this.call("updateWebhook", true, writeResult(Webhook), (retry) =>
            this.sdk.webhooks.updateWebhook({ webhookId, body: change, ...retry }),
        );
        return answer.result;
    }

    async deleteWebhook(webhookId: number): Promise<void> {
        await goneAlready(this.call("deleteWebhook", true, WriteAck, (retry) => this.sdk.webhooks.deleteWebhook({ webhookId, ...retry })));
    }

    private async call<T>(
        operation: string,
        idempotent: boolean,
        schema: z.ZodType<T>,
        invoke: (retry: RetryOptions) => Promise<unknown>,
    ): Promise<T> {
        return (await this.callAnswered(operation, idempotent, schema, invoke)).value;
    }

    /** `call`, with Smartsheet's clock when it answered (its `Date` header), when it sent one. */
    private async callAnswered<T>(
        operation: string,
        idempotent: boolean,
        schema: z.ZodType<T>,
        invoke: (retry: RetryOptions) => Promise<unknown>,
    ): Promise<{ value: T; answeredAt?: string }> {
        const context: CallContext = { operation, tallies: this.tallies, sendBy: this.clock.now() + this.rateLimitBackoff.maxTotalMs, background: this.background };
        let answer: unknown;
        try {
            answer = await callContext.run(context, () => invoke(this.retryOptions(operation, idempotent)));
        } catch (error) {
            throw classify(operation, idempotent, error, context);
        }
        const parsed = schema.safeParse(answer);
        if (parsed.success) return { value: parsed.data, ...(context.answeredAt ? { answeredAt: context.answeredAt } : {}) };
        const message = `Smartsheet answered ${operation} with an unexpected shape: ${z.prettifyError(parsed.error)}`;
        // A write that returned something unreadable still happened.
        throw idempotent
            ? new PermanentSmartsheetError(message, { operation })
            : new AmbiguousWriteError(message, { operation });
    }

    private retryOptions(operation: string, idempotent: boolean): RetryOptions {
        const rateLimit = this.rateLimitBackoff;
        const resend = this.options.idempotentRetries ?? { attempts: 3, baseMs: 1_000 };
        return {
            maxRetryDurationMillis: rateLimit.maxTotalMs,
            calcRetryBackoff: (retryCount, error) => {
                if (error?.errorCode === 4003) {
                    // Rejected before processing: safe to re-send any call, POSTs included.
                    const delay = Math.min(rateLimit.maxMs, rateLimit.baseMs * 2 ** retryCount);
                    this.limiter.pauseFor(delay);
                    this.options.log?.(`Smartsheet ${operation}: rate limited (429); retrying in ${delay} ms`);
                    return delay;
                }
                if (idempotent && RETRYABLE_SERVER_CODES.has(error?.errorCode ?? 0) && retryCount < resend.attempts) {
                    return resend.baseMs * 2 ** retryCount;
                }
                return -1;
            },
        };
    }
}

function buildSdk(options: SdkSmartsheetOptions, limiter: RateLimiter): SdkClient {
    if (!options.baseUrl.endsWith("/")) {
        throw new TypeError(`The Smartsheet base URL must end in "/" (got "${options.baseUrl}").`);
    }
    const requestor = createRequestor({
        request: createPacedTransport(limiter, options.callTimeoutMs ?? 60_000, { telemetry: options.telemetry, tokenSetting: options.tokenSetting }),
        // Per-call retry options replace these; this default re-sends nothing.
        calcRetryBackoff: () => -1,
    });
    return createClient({ accessToken: options.accessToken, baseUrl: options.baseUrl, requestor }) as unknown as SdkClient;
}

/** A create's answer: made, or refused because it is there already (`ALREADY_EXISTS_CODES`); any other failure is thrown. */
async function created<T>(create: Promise<{ result: T }>): Promise<Created<T>> {
    try {
        return { created: true, value: (await create).result };
    } catch (error) {
        if (error instanceof PermanentSmartsheetError && error.errorCode !== undefined && ALREADY_EXISTS_CODES.has(error.errorCode)) return { created: false };
        throw error;
    }
}

/**
 * A delete answered 404: what it deletes is gone already (the same delete by a twin run of the
 * step, or one whose answer was lost) — done, here and nowhere else, as deleteRows ignores rows
 * that are gone.
 */
async function goneAlready(remove: Promise<unknown>): Promise<void> {
    try {
        await remove;
    } catch (error) {
        if (error instanceof PermanentSmartsheetError && error.statusCode === 404) return;
        throw error;
    }
}

function emptyTally(): CallTally {
    return { total: 0, byOperation: {}, rateLimited: 0 };
}

/** Turns what the SDK rejected with into a transient, permanent or ambiguous-write error. */
function classify(operation: string, idempotent: boolean, error: unknown, context: CallContext): SmartsheetError {
    if (error instanceof SmartsheetError) return error;
    const network = context.networkError;
    if (network) {
        const message = `Smartsheet ${operation} got no answer: ${network.code} (${network.message})`;
        if (NEVER_SENT_CAUSES.has(network.code) || idempotent) {
            return new TransientSmartsheetError(message, { operation, cause: network.code });
        }
        return new AmbiguousWriteError(`${message}; the write may have happened: list before creating again`, {
            operation,
            cause: network.code,
        });
    }

    const answer = (error ?? {}) as { statusCode?: number; errorCode?: number; message?: unknown; refId?: string };
    const statusCode = typeof answer.statusCode === "number" ? answer.statusCode : undefined;
    const errorCode = typeof answer.errorCode === "number" ? answer.errorCode : undefined;
    const text = typeof answer.message === "string" ? answer.message.replace(/\s+/g, " ").slice(0, 300) : "";
    const details = { operation, statusCode, errorCode, refId: answer.refId };
    const summary =
        `Smartsheet ${operation} failed with ${statusCode ?? "no status"}` +
        (errorCode !== undefined ? `/${errorCode}` : "") +
        (text ? `: ${text}` : "") +
        (answer.refId ? ` (refId ${answer.refId})` : "");

    if (statusCode === 429 || errorCode === 4003) {
        return new TransientSmartsheetError(`${summary}; rate-limit retries exhausted`, details);
    }
    if (statusCode === undefined || statusCode >= 500 || statusCode === 408) {
        return idempotent
            ? new TransientSmartsheetError(summary, details)
            : new AmbiguousWriteError(`${summary}; the write may have happened: list before creating again`, details);
    }
    return new PermanentSmartsheetError(summary, details);
}
