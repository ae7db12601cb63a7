import { odata, RestError, type TableClient, type TransactionAction } from "@azure/data-tables";
import { z } from "zod";
import type { AfterFailure } from "../alerts/delivery";
import type { DeclaresFailureKind } from "../failures";
import { ACTIVE_STATES, currentInstanceId, formatJobKey, JobRow, JobState, type JobKey, type JobRowInput } from "./JobRow";
import { storageErrorStatus } from "../storage";

/** A job row as read, with the ETag a conditional write must name. */
export interface StoredJob {
    row: JobRow;
    etag: string;
}

/** Someone else wrote the row since it was read (HTTP 412): re-read and decide again. */
export class JobConcurrencyError extends Error implements DeclaresFailureKind {
    readonly failureKind = "transient" as const;

    constructor(readonly key: JobKey) {
        super(`Job ${formatJobKey(key)} changed since it was read (ETag mismatch); re-read it and try again.`);
        this.name = "JobConcurrencyError";
    }
}

/** The row is not in a state this write may start from; nothing was written. Not a failure: the job has moved on. */
export class JobStateConflictError extends Error implements DeclaresFailureKind {
    readonly failureKind = "superseded" as const;

    constructor(
        readonly key: JobKey,
        readonly actual: JobState,
        readonly allowed: readonly JobState[],
    ) {
        super(`Job ${formatJobKey(key)} is ${actual}; this write is only allowed from ${allowed.join(" or ")}.`);
        this.name = "JobStateConflictError";
    }
}

/** Answers a create whose job is there already (the intake sweep keeps it). */
export class JobExistsError extends Error implements DeclaresFailureKind {
    readonly failureKind = "permanent" as const;

    constructor(readonly key: JobKey) {
        super(`Job ${formatJobKey(key)} already exists.`);
        this.name = "JobExistsError";
    }
}

/** Another job of the intake sheet holds the product code (its code index row says which): nothing was written. */
export class ProductCodeTakenError extends Error implements DeclaresFailureKind {
    readonly failureKind = "permanent" as const;

    constructor(
        readonly key: JobKey,
        readonly productCode: string,
        readonly holderRowKey: string,
    ) {
        super(`Job ${formatJobKey(key)} cannot take Product Code ${productCode}: job ${formatJobKey({ pk: key.pk, rk: holderRowKey })} holds it.`);
        this.name = "ProductCodeTakenError";
    }
}

/** The job's row is gone (a person deleted it): nothing to go on with. */
export class JobNotFoundError extends Error implements DeclaresFailureKind {
    readonly failureKind = "permanent" as const;

    constructor(readonly key: JobKey) {
        super(`Job ${formatJobKey(key)} does not exist.`);
        this.name = "JobNotFoundError";
    }
}

/** A row that failed validation: it is reported, never silently repaired or dropped. */
export class InvalidJobRowError extends Error implements DeclaresFailureKind {
    readonly failureKind = "permanent" as const;

    constructor(
        readonly key: JobKey,
        readonly problems: string,
    ) {
        super(`Job ${formatJobKey(key)} has an invalid row in the table: ${problems}. Correct it in the Jobs table.`);
        this.name = "InvalidJobRowError";
    }
}

/** A job whose row or index entry does not parse: listings skip it and name it, so one bad entity stops nothing. */
export interface InvalidJob {
    jobKey: string;
    reason: string;
}

/** What a listing found: the jobs it could read, and those it could not. */
export interface Listing<T> {
    found: T[];
    invalid: InvalidJob[];
}

/** One page of a listing, and the table's token for the next one (absent: this was the last). */
interface JobPage extends Listing<StoredJob> {
    continuation?: string;
}

interface WriteOptions {
    /** States the row must be in for the write to happen (checked against the ETag-guarded read). */
    from: readonly JobState[];
}

export interface CodeOptions {
    /**
     * The job takes its product code in the same transaction (the sweep's writes): a `code-<code>`
     * row, created only if no job holds the code, else `ProductCodeTakenError` and nothing written.
     */
    reserveCode?: boolean;
}

/**
 * Active-index entry: one per queued, running or parked job, in the job's own partition, written
 * with the job row. A copy of what the reaper and the reconciler sift by, so that they read a
 * job's row only when it needs them. The row stays the truth: they re-check it before writing.
 */
export const IndexEntry = z.object({
    jobRowKey: z.string(),
    state: JobState,
    lastProgressAt: z.string(),
    /** The instance of the job's current attempt. */
    instanceId: z.string(),
    /** The orchestration waits on a durable timer until then, on purpose: no progress is due before. */
    quietUntil: z.string().optional(),
});
export type IndexEntry = z.infer<typeof IndexEntry>;

const INDEX_PREFIX = "active-";
const INDEX_END = "active."; // the next character after "-": bounds the RowKey range
const INT32_MAX = 2 ** 31 - 1;
/** Code index rows `code-<productCode>`: one per code a job holds, created in the job's own transaction. */
const CODE_PREFIX = "code-";
/** Written once every job of the partition that held a code before the index existed has its code row. */
const CODES_INDEXED = "codes-indexed";
/**
 * Things ops is told once, across runs and instances, one entity each: ops was told (`toldAt`),
 * the alert was given up (`givenUpAt`), a run is telling (`claimedAt`, `by`), or failed tries wait
 * (`tries`, `retryAt`). By partition: an intake sheet found with jobs but no site (keyed by the
 * sheet); a site's webhook Smartsheet disabled for good or refuses (keyed by site, webhook and status).
 */
export const NOTICES = { orphanedIntakeSheet: "orphaned-intake-sheet", webhook: "webhook-notice" } as const;
type NoticePartition = (typeof NOTICES)[keyof typeof NOTICES];

interface NoticeEntity {
    etag: string;
    by?: string;
    claimedAt?: unknown;
    toldAt?: unknown;
    givenUpAt?: unknown;
    retryAt?: unknown;
    tries?: number;
}

/**
 * The Jobs table. One row per product request (PartitionKey = intake sheet id, RowKey = intake
 * row id) plus, in the same partition, an index row `active-<rowId>` for every job that is
 * queued, running or parked, written in the same transaction as the job row. The reaper and
 * the reconciler read only the index, so their cost does not grow with finished jobs. A job that
 * the sweep queues holds its product code with a row `code-<code>` in the partition too, created
 * in the same transaction as the job's first non-rejected write: two sweeps cannot both give one
 * code to two rows.
 */
export class JobStore {
    /** Entities returned by the table so far (reads are what cost time and money). */
    entitiesRead = 0;
    /** Partitions known to have every code holder in the code index (it never stops being true). */
    private readonly codesIndexed = new Set<string>();

    constructor(
        private readonly table: TableClient,
        private readonly parent?: JobStore,
    ) {}

    /** A store over the same table that counts the entities read through it (they count here too). */
    withOwnCount(): JobStore {
        return new JobStore(this.table, this);
    }

    private counted(): void {
        this.entitiesRead += 1;
        this.parent?.counted();
    }

    async ensureTable(): Promise<void> {
        await this.table.createTable();
    }

    async get(key: JobKey): Promise<StoredJob | undefined> {
        try {
            const entity = await this.table.getEntity<Record<string, unknown>>(key.pk, key.rk);
            this.counted();
            return { row: decode(key, entity), etag: entity.etag };
        } catch (error) {
            if (error instanceof RestError && error.statusCode === 404) return undefined;
            throw error;
        }
    }

    async require(key: JobKey): Promise<StoredJob> {
        const stored = await this.get(key);
        if (!stored) throw new JobNotFoundError(key);
        return stored;
    }

    /** Writes a new job row; a row that already exists is a `JobExistsError` and is left as is. */
    async create(input: JobRowInput, options: CodeOptions = {}): Promise<StoredJob> {
        const row = JobRow.parse(input);
        const key = { pk: row.intakeSheetId, rk: row.intakeRowId };
        const actions: TransactionAction[] = [["create", encode(row)]];
        if (ACTIVE_STATES.includes(row.state)) actions.push(["create", indexEntity(row)]);
        const reserving = options.reserveCode === true && holdsCode(row);
        if (reserving) actions.push(["create", codeEntity(row)]);
        try {
            const result = await this.table.submitTransaction(actions);
            return { row, etag: etagOf(result.subResponses, key.rk) };
        } catch (error) {
            if (storageErrorStatus(error) !== 409) throw error;
            if (!reserving || (await this.get(key).catch(() => "unreadable"))) throw new JobExistsError(key);
            throw await this.codeConflict(key, row.productCode, error);
        }
    }

    /**
     * Replaces `current` with `next` if nobody wrote the row since `current` was read and
     * `current` is in one of the allowed states. Keys cannot change.
     */
    async replace(current: StoredJob, next: JobRowInput, options: WriteOptions & CodeOptions): Promise<StoredJob> {
        const key = { pk: current.row.intakeSheetId, rk: current.row.intakeRowId };
        if (!options.from.includes(current.row.state)) {
            throw new JobStateConflictError(key, current.row.state, options.from);
        }
        const row = JobRow.parse({ ...next, intakeSheetId: key.pk, intakeRowId: key.rk });
        const wasActive = ACTIVE_STATES.includes(current.row.state);
        const isActive = ACTIVE_STATES.includes(row.state);
        const jobAction: TransactionAction = ["update", encode(row), "Replace", { etag: current.etag }];
        const indexAction: TransactionAction | undefined = isActive
            ? ["upsert", indexEntity(row), "Replace"]
            : wasActive
              ? ["delete", { partitionKey: key.pk, rowKey: INDEX_PREFIX + key.rk }]
              : undefined;
        // A rejected job given a code takes it in the same transaction (no other write changes a held code).
        const codeAction: TransactionAction | undefined =
            options.reserveCode === true && !holdsCode(current.row) && holdsCode(row) ? ["create", codeEntity(row)] : undefined;
        try {
            const result = await this.table.submitTransaction([jobAction, ...(indexAction ? [indexAction] : []), ...(codeAction ? [codeAction] : [])]);
            return { row, etag: etagOf(result.subResponses, key.rk) };
        } catch (error) {
            const status = storageErrorStatus(error);
            if (status === 412) throw new JobConcurrencyError(key);
            if (status === 409 && codeAction) throw await this.codeConflict(key, row.productCode, error);
            if (status === 404 && indexAction?.[0] === "delete") {
                // The index entry was already gone: write the job row alone.
                const result = await this.table.submitTransaction([jobAction]).catch((retryError: unknown) => {
                    throw storageErrorStatus(retryError) === 412 ? new JobConcurrencyError(key) : retryError;
                });
                return { row, etag: etagOf(result.subResponses, key.rk) };
            }
            throw error;
        }
    }

    /**
     * Read, change, conditionally write; on a concurrent write, read again and re-apply.
     * `change` gets the latest row and returns the next one, or `undefined` to write nothing.
     */
    async update(
        key: JobKey,
        change: (row: JobRow) => JobRowInput | undefined,
        options: WriteOptions & { attempts?: number },
    ): Promise<StoredJob> {
        const attempts = options.attempts ?? 20;
        for (let attempt = 1; ; attempt++) {
            const current = await this.require(key);
            if (!options.from.includes(current.row.state)) {
                throw new JobStateConflictError(key, current.row.state, options.from);
            }
            const next = change(structuredClone(current.row));
            if (next === undefined || sameRow(current.row, JobRow.parse(next))) return current;
            try {
                return await this.replace(current, next, options);
            } catch (error) {
                if (!(error instanceof JobConcurrencyError) || attempt >= attempts) throw error;
                await new Promise((resolve) => setTimeout(resolve, Math.min(200, 5 * attempt) * Math.random()));
            }
        }
    }

    /**
     * Active jobs of one intake sheet, from the index only. `staleBefore` keeps those whose
     * last progress is older than that instant.
     */
    async listActive(pk: string, filter: { states?: readonly JobState[]; staleBefore?: Date } = {}): Promise<Listing<StoredJob>> {
        const index = await this.listActiveIndex(pk, filter);
        const listing: Listing<StoredJob> = { found: [], invalid: index.invalid };
        for (const entry of index.found) {
            const key = { pk, rk: entry.jobRowKey };
            const stored = await readOrReport(() => this.get(key), key, listing.invalid);
            if (stored) listing.found.push(stored);
        }
        return listing;
    }

    /** The active index of one intake sheet (no job rows read), optionally narrowed like `listActive`. */
    async listActiveIndex(pk: string, filter: { states?: readonly JobState[]; staleBefore?: Date } = {}): Promise<Listing<IndexEntry>> {
        const listing: Listing<IndexEntry> = { found: [], invalid: [] };
        let query = odata`PartitionKey eq ${pk} and RowKey ge ${INDEX_PREFIX} and RowKey lt ${INDEX_END}`;
        if (filter.staleBefore) query += " and " + odata`lastProgressAt lt ${filter.staleBefore.toISOString()}`;
        if (filter.states) query += ` and (${filter.states.map((state) => odata`state eq ${state}`).join(" or ")})`;
        for await (const entity of this.table.listEntities({ queryOptions: { filter: query } })) {
            this.counted();
            addIndexEntry(listing, pk, entity);
        }
        return listing;
    }

    /**
     * The active index of every intake sheet but `known` (the configured sites'), by intake sheet:
     * the open and parked jobs of sites taken out of SITES. One query per gap between the known
     * partitions, so the table never looks through the known sites' finished jobs.
     */
    async listActiveIndexOutside(known: readonly string[]): Promise<Map<string, Listing<IndexEntry>>> {
        const bounds = [...new Set(known)].sort();
        const byPartition = new Map<string, Listing<IndexEntry>>();
        for (let gap = 0; gap <= bounds.length; gap++) {
            let query = odata`RowKey ge ${INDEX_PREFIX} and RowKey lt ${INDEX_END}`;
            if (gap > 0) query += " and " + odata`PartitionKey gt ${bounds[gap - 1]!}`;
            if (gap < bounds.length) query += " and " + odata`PartitionKey lt ${bounds[gap]!}`;
            for await (const entity of this.table.listEntities({ queryOptions: { filter: query } })) {
                this.counted();
                const pk = String(entity.partitionKey);
                let listing = byPartition.get(pk);
                if (!listing) byPartition.set(pk, (listing = { found: [], invalid: [] }));
                addIndexEntry(listing, pk, entity);
            }
        }
        return byPartition;
    }

    /**
     * Claims telling ops of notice `key` (e.g. that intake sheet `key` has jobs but no site), a
     * conditional write: true when this run is to tell, false when ops was told already, the alert
     * was given up, its next try is not due before `now`, or another run's claim is younger than
     * `expiredBefore` (ms). Once told (or given up), never again for that key.
     */
    async claimNotice(partition: NoticePartition, key: string, by: string, now: Date, expiredBefore: number): Promise<boolean> {
        const pk = key;
        let current: NoticeEntity | undefined;
        try {
            current = await this.table.getEntity<NoticeEntity>(partition, pk);
        } catch (error) {
            if (storageErrorStatus(error) !== 404) throw error;
        }
        if (current?.toldAt || current?.givenUpAt) return false;
        if (typeof current?.retryAt === "string" && Date.parse(current.retryAt) > now.getTime()) return false;
        if (typeof current?.claimedAt === "string" && Date.parse(current.claimedAt) > expiredBefore) return false;
        const claim = { partitionKey: partition, rowKey: pk, kind: "notice", claimedAt: now.toISOString(), by, tries: current?.tries ?? 0 };
        try {
            if (current) await this.table.updateEntity(claim, "Replace", { etag: current.etag });
            else await this.table.createEntity(claim);
            return true;
        } catch (error) {
            if (storageErrorStatus(error) === 409 || storageErrorStatus(error) === 412) return false;
            throw error;
        }
    }

    /**
     * The answer to a claimed notice: told (never again), or a failed try, which
     * `afterTry(tries)` turns into the time of the next try or the notice given up (never again
     * either). Returns what was recorded for a failed try; nothing when another run's claim replaced ours.
     */
    async recordNotice(partition: NoticePartition, key: string, by: string, told: Date | undefined, afterTry?: (tries: number) => AfterFailure): Promise<AfterFailure | undefined> {
        const pk = key;
        const current = await this.table.getEntity<NoticeEntity>(partition, pk);
        if (current.by !== by) return undefined;
        const tries = (current.tries ?? 0) + 1;
        const next = told ? undefined : afterTry?.(tries);
        const entity = {
            partitionKey: partition,
            rowKey: pk,
            kind: "notice",
            tries,
            ...(told ? { toldAt: told.toISOString() } : {}),
            ...(next && "retryAt" in next ? { retryAt: next.retryAt } : {}),
            ...(next && "givenUp" in next ? { givenUpAt: next.givenUp.at, failure: JSON.stringify(next.givenUp) } : {}),
        };
        try {
            await this.table.updateEntity(entity, "Replace", { etag: current.etag });
            return next;
        } catch (error) {
            if (storageErrorStatus(error) !== 412) throw error;
            return undefined;
        }
    }

    /**
     * The row key of a job of one intake sheet that holds `productCode` (any state but rejected),
     * found in the table itself (its intake row may be gone from the sheet): a point read of the
     * code index. The first look at a partition indexes the codes of jobs written before the
     * index existed (one query, once).
     */
    async holderOfCode(pk: string, productCode: string): Promise<string | undefined> {
        const indexed = await this.codeIndexEntry(pk, productCode);
        if (indexed !== undefined || this.codesIndexed.has(pk)) return indexed;
        if (!(await this.entityExists(pk, CODES_INDEXED))) await this.indexCodesOfOlderJobs(pk);
        this.codesIndexed.add(pk);
        return this.codeIndexEntry(pk, productCode);
    }

    private async codeIndexEntry(pk: string, productCode: string): Promise<string | undefined> {
        try {
            const entity = await this.table.getEntity<Record<string, unknown>>(pk, CODE_PREFIX + productCode);
            this.counted();
            return String(entity.jobRowKey);
        } catch (error) {
            if (error instanceof RestError && error.statusCode === 404) return undefined;
            throw error;
        }
    }

    private async entityExists(pk: string, rowKey: string): Promise<boolean> {
        try {
            await this.table.getEntity(pk, rowKey);
            this.counted();
            return true;
        } catch (error) {
            if (error instanceof RestError && error.statusCode === 404) return false;
            throw error;
        }
    }

    /** Code rows for the jobs that held a code before the index existed (the first holder met wins), then the mark that says so. */
    private async indexCodesOfOlderJobs(pk: string): Promise<void> {
        const filter = odata`PartitionKey eq ${pk} and kind eq ${"job"} and state ne ${"rejected"}`;
        for await (const entity of this.table.listEntities<Record<string, unknown>>({ queryOptions: { filter, select: ["RowKey", "productCode"] } })) {
            this.counted();
            if (typeof entity.productCode !== "string" || entity.productCode === "") continue;
            await this.createIgnoringConflict({ partitionKey: pk, rowKey: CODE_PREFIX + entity.productCode, kind: "code", jobRowKey: String(entity.rowKey) });
        }
        await this.createIgnoringConflict({ partitionKey: pk, rowKey: CODES_INDEXED, kind: "mark" });
    }

    private async createIgnoringConflict(entity: { partitionKey: string; rowKey: string } & Record<string, unknown>): Promise<void> {
        try {
            await this.table.createEntity(entity);
        } catch (error) {
            if (storageErrorStatus(error) !== 409) throw error;
        }
    }

    /** The error for a job write refused with 409 because of its code row: who holds the code. */
    private async codeConflict(key: JobKey, productCode: string, cause: unknown): Promise<Error> {
        const holder = await this.codeIndexEntry(key.pk, productCode);
        return holder !== undefined && holder !== key.rk ? new ProductCodeTakenError(key, productCode, holder) : (cause as Error);
    }

    /**
     * Done jobs of one intake sheet whose last status written to the intake row is not `status`:
     * their final status never reached the customer. Reads only those (the table filters).
     */
    async listDoneWithIntakeStatusOtherThan(pk: string, status: string): Promise<Listing<StoredJob>> {
        return this.listWhere(pk, odata`PartitionKey eq ${pk} and kind eq ${"job"} and state eq ${"done"} and intakeStatus ne ${status}`);
    }

    /** Jobs of one intake sheet whose intake row refused the sweep's status and whose back-off ended by `now`. */
    async listIntakeStatusRetriesDue(pk: string, now: Date): Promise<Listing<StoredJob>> {
        return this.listWhere(pk, odata`PartitionKey eq ${pk} and kind eq ${"job"} and intakeStatusRetryAt le ${now.toISOString()}`);
    }

    /** Every job of one intake sheet in a state; for finished states this reads the partition (see `pageByState` to read it in pages). */
    async listByState(pk: string, state: JobState): Promise<Listing<StoredJob>> {
        if (ACTIVE_STATES.includes(state)) return this.listActive(pk, { states: [state] });
        return this.listWhere(pk, odata`PartitionKey eq ${pk} and kind eq ${"job"} and state eq ${state}`);
    }

    /**
     * One page of the jobs of one intake sheet in a finished state: at most `pageSize` (the
     * table's own limit is 1,000), and the table's continuation token while more may follow. A
     * page may hold fewer than `pageSize` jobs, even none, and still be followed by another.
     */
    async pageByState(pk: string, state: JobState, page: { pageSize: number; continuation?: string }): Promise<JobPage> {
        const filter = odata`PartitionKey eq ${pk} and kind eq ${"job"} and state eq ${state}`;
        const pages = this.table.listEntities<Record<string, unknown>>({ queryOptions: { filter } }).byPage({
            maxPageSize: page.pageSize,
            continuationToken: page.continuation,
        });
        const next = await pages.next();
        const listing: JobPage = { found: [], invalid: [] };
        if (next.done) return listing;
        for (const entity of next.value) await this.collect(pk, entity, listing);
        if (next.value.continuationToken) listing.continuation = next.value.continuationToken;
        return listing;
    }

    private async listWhere(pk: string, filter: string): Promise<Listing<StoredJob>> {
        const listing: Listing<StoredJob> = { found: [], invalid: [] };
        for await (const entity of this.table.listEntities<Record<string, unknown>>({ queryOptions: { filter } })) await this.collect(pk, entity, listing);
        return listing;
    }

    /** One listed entity into `listing`: its job, or why it does not parse. */
    private async collect(pk: string, entity: Record<string, unknown> & { rowKey?: string; etag: string }, listing: Listing<StoredJob>): Promise<void> {
        this.counted();
        const key = { pk, rk: String(entity.rowKey) };
        const stored = await readOrReport(() => ({ row: decode(key, entity), etag: entity.etag }), key, listing.invalid);
        if (stored) listing.found.push(stored);
    }
}

/** An index entity into its listing, or, when it does not parse, its job named in `invalid`. */
function addIndexEntry(listing: Listing<IndexEntry>, pk: string, entity: Record<string, unknown>): void {
    const parsed = IndexEntry.safeParse(entity);
    if (parsed.success) listing.found.push(parsed.data);
    else {
        const key = { pk, rk: String(entity.rowKey).slice(INDEX_PREFIX.length) };
        listing.invalid.push({ jobKey: formatJobKey(key), reason: `its index entry ${String(entity.rowKey)} is invalid: ${describeIssues(parsed.error)}` });
    }
}

/** The job read, or `undefined` with the job named in `invalid` when its row does not parse. */
export async function readOrReport<T>(read: () => T | Promise<T>, key: JobKey, invalid: InvalidJob[]): Promise<T | undefined> {
    try {
        return await read();
    } catch (error) {
        if (!(error instanceof InvalidJobRowError)) throw error;
        invalid.push({ jobKey: formatJobKey(key), reason: `its row is invalid: ${error.problems}` });
        return undefined;
    }
}

/** One error line per job that could not be read, naming it and the problem (never the row). */
export function reportInvalidJobs(log: { error(line: string): void }, invalid: readonly InvalidJob[], run: string): void {
    for (const job of invalid) log.error(`job ${job.jobKey} skipped: ${job.reason}; the ${run} carries on with the other jobs. Correct it in the Jobs table.`);
}

/** `attempt: Invalid input: expected number, received string; …` — where and what, never the values. */
function describeIssues(error: z.ZodError): string {
    return error.issues.map((issue) => `${issue.path.join(".") || "(entity)"}: ${issue.message}`).join("; ");
}

function encode(row: JobRow): Record<string, unknown> & { partitionKey: string; rowKey: string } {
    const entity: Record<string, unknown> & { partitionKey: string; rowKey: string } = {
        partitionKey: row.intakeSheetId,
        rowKey: row.intakeRowId,
        kind: "job",
    };
    for (const [name, value] of Object.entries(row)) {
        if (value === undefined || name === "intakeSheetId" || name === "intakeRowId") continue;
        if (typeof value === "object") entity[name] = JSON.stringify(value);
        else if (typeof value === "number" && !(Number.isInteger(value) && Math.abs(value) <= INT32_MAX)) entity[name] = String(value);
        else entity[name] = value;
    }
    return entity;
}

function decode(key: JobKey, entity: Record<string, unknown>): JobRow {
    const fields: Record<string, unknown> = { intakeSheetId: key.pk, intakeRowId: key.rk };
    for (const [name, value] of Object.entries(entity)) {
        if (["partitionKey", "rowKey", "etag", "timestamp", "kind", "odata.metadata"].includes(name)) continue;
        fields[name] = value;
    }
    const parsed = JobRow.safeParse(fields);
    if (!parsed.success) throw new InvalidJobRowError(key, describeIssues(parsed.error));
    return parsed.data;
}

function indexEntity(row: JobRow) {
    return {
        partitionKey: row.intakeSheetId,
        rowKey: INDEX_PREFIX + row.intakeRowId,
        kind: "index",
        jobRowKey: row.intakeRowId,
        state: row.state,
        lastProgressAt: row.lastProgressAt,
        instanceId: currentInstanceId(row),
        quietUntil: row.quietUntil,
    };
}

/** A job holds its product code in every state but rejected. */
function holdsCode(row: JobRow): boolean {
    return row.state !== "rejected";
}

function codeEntity(row: JobRow) {
    return { partitionKey: row.intakeSheetId, rowKey: CODE_PREFIX + row.productCode, kind: "code", jobRowKey: row.intakeRowId };
}

function sameRow(a: JobRow, b: JobRow): boolean {
    return JSON.stringify(encode(a)) === JSON.stringify(encode(b));
}

/** The job row's action always comes first in a transaction, and so does its answer. */
function etagOf(subResponses: Array<{ etag?: string }>, rowKey: string): string {
    const etag = subResponses[0]?.etag;
    if (!etag) throw new Error(`The table did not return an ETag for job row ${rowKey}.`);
    return etag;
}

