import { describe, expect, it } from "vitest";
import { JobRow, type JobRowInput } from "../../src/shared/jobs/JobRow";
import type { StoredJob } from "../../src/shared/jobs/JobStore";
import {
    planFollowUp,
    planSweep,
    readingOf,
    type IntakeRow,
    type OutstandingRead,
    type SweepAction,
    type SweepPlan,
    type SweepRead,
} from "../../src/shared/intake/sweepPlan";

const SHEET = 7001;
const PK = String(SHEET);
const NOW = new Date("2026-03-02T10:00:00.000Z");
const CURSOR_SINCE = new Date("2026-03-02T09:29:59.000Z");
/** When the sweep read the intake sheet, by Smartsheet's clock: a little before NOW, by ours. */
const READ_AT = "2026-03-02T09:59:58.000Z";
const BEFORE_CURSOR = "2026-03-02T08:00:00Z";
const AFTER_CURSOR = "2026-03-02T09:45:00Z";
const TEMPLATES = ["Project Plan", "Approvals", "Change Log", "Document Register"];
const COLUMNS = { productCode: 1, productName: 2, productLine: 3, approved: 4, status: 5, folder: 6 };
const keyOf = (rowId: number) => `${PK}-${rowId}`;

/** An approved, valid request of the Industrial line, modified after the cursor. */
function row(rowId: number, overrides: Partial<IntakeRow> = {}): IntakeRow {
    return { rowId, rowNumber: rowId, modifiedAt: AFTER_CURSOR, code: `IND-${rowId}`, name: `Pump ${rowId}`, line: "Industrial", approved: true, status: "", ...overrides };
}

/** The stored job of a row, in the state the test is about. */
function job(rowId: number, overrides: Partial<JobRowInput> = {}): StoredJob {
    const input: JobRowInput = {
        intakeSheetId: PK,
        intakeRowId: String(rowId),
        productCode: `IND-${rowId}`,
        productName: `Pump ${rowId}`,
        productLine: "Industrial",
        state: "queued",
        attempt: 1,
        recoveries: 0,
        createdAt: "2026-03-01T10:00:00.000Z",
        lastProgressAt: "2026-03-01T10:00:00.000Z",
        ...overrides,
    };
    return { row: JobRow.parse(input), etag: `etag-${rowId}` };
}

/** What a routine sweep read: `rows` and the jobs of those rows, nothing else outstanding. */
function readOf(overrides: Partial<SweepRead> = {}): SweepRead {
    const rows = overrides.rows ?? [];
    return {
        site: "default",
        kind: "routine",
        intakeSheetId: SHEET,
        cursor: { cursor: { sweptAt: "2026-03-02T09:30:00.000Z", verdictInputs: "v1" } },
        lines: new Map([
            ["Industrial", 901],
            ["Consumer", 902],
        ]),
        templates: TEMPLATES,
        blueprintVersion: "bp-1",
        blueprintSettled: true,
        verdictInputs: "v1",
        cursorSince: CURSOR_SINCE,
        since: CURSOR_SINCE,
        readAt: READ_AT,
        columns: COLUMNS,
        rows,
        rowsRead: rows.length,
        owedDone: [],
        retriesDue: [],
        jobs: new Map(),
        codeHolders: new Map(),
        invalid: [],
        ...overrides,
    };
}

const NOTHING_OUTSTANDING: OutstandingRead = { queued: [], invalid: [] };
const ofType = <T extends SweepAction["type"]>(plan: { actions: SweepAction[] } | SweepAction[], type: T) =>
    (Array.isArray(plan) ? plan : plan.actions).filter((action): action is Extract<SweepAction, { type: T }> => action.type === type);
const statusesOf = (plan: SweepPlan) => ofType(plan, "writeStatuses").flatMap((action) => action.statuses);
/** Follow-up with every row's job write landed. */
const followUp = (read: SweepRead, plan: SweepPlan, outstanding = NOTHING_OUTSTANDING, landed = new Set(plan.actions.flatMap((a) => ("jobKey" in a ? [a.jobKey] : [])))) =>
    planFollowUp(read, plan, landed, outstanding);

describe("the sweep's plan", () => {
    describe("new approvals", () => {
        it("queues a new approved request: a queued job row, Queued on the row, then its message, all only if the job write lands", () => {
            const plan = planSweep(readOf({ rows: [row(11)] }), NOW);

            expect(plan.actions.map((action) => action.type)).toEqual(["queueJob", "writeStatuses", "sendMessage"]);
            const [queue] = ofType(plan, "queueJob");
            expect(queue).toMatchObject({ jobKey: keyOf(11), line: { level: "info", text: `job ${keyOf(11)} new → queued (IND-11 Pump 11)` } });
            expect("create" in queue!.write && queue!.write.create).toMatchObject({
                intakeSheetId: PK,
                intakeRowId: "11",
                state: "queued",
                attempt: 1,
                instanceId: `provision-${PK}-11-a1`,
                productCode: "IND-11",
                lineFolderId: 901,
                intakeStatus: "Queued",
                blueprintVersion: "bp-1",
                templates: TEMPLATES,
                intakeStatusColumnId: 5,
                intakeFolderColumnId: 6,
                createdAt: NOW.toISOString(),
                lastProgressAt: NOW.toISOString(),
            });
            expect(ofType(plan, "writeStatuses")).toEqual([{ type: "writeStatuses", intakeSheetId: SHEET, statusColumnId: 5, statuses: [{ rowId: 11, status: "Queued", ifLanded: keyOf(11) }] }]);
            expect(ofType(plan, "sendMessage")).toEqual([{ type: "sendMessage", key: { pk: PK, rk: "11" }, ifLanded: keyOf(11) }]);
            expect(plan).toMatchObject({ approvedRows: 1, queuing: [keyOf(11)] });
        });

        it("queues rows in row-number order, whatever order the read returned them in", () => {
            const plan = planSweep(readOf({ rows: [row(30, { rowNumber: 3 }), row(10, { rowNumber: 1 }), row(20, { rowNumber: 2 })] }), NOW);
            expect(plan.queuing).toEqual([keyOf(10), keyOf(20), keyOf(30)]);
        });

        it("writes no Queued over a row that already says Queued, though the job is still written and its message sent", () => {
            const plan = planSweep(readOf({ rows: [row(11, { status: "Queued" })] }), NOW);
            expect(plan.actions.map((action) => action.type)).toEqual(["queueJob", "sendMessage"]);
        });

        it("a Status typed by hand into a new approved row does not stand for a job: the row is queued", () => {
            const plan = planSweep(readOf({ rows: [row(11, { status: "Done" })] }), NOW);
            expect(plan.queuing).toEqual([keyOf(11)]);
            expect(statusesOf(plan)).toEqual([{ rowId: 11, status: "Queued", ifLanded: keyOf(11) }]);
        });

        it("ignores a row that is not approved and says nothing", () => {
            const plan = planSweep(readOf({ rows: [row(11, { approved: false })] }), NOW);
            expect(plan.actions).toEqual([]);
            expect(plan.approvedRows).toBe(0);
        });
    });

    describe("invalid requests", () => {
        it.each([
            ["a missing code", { code: "" }, "Product Code is missing"],
            ["a code with a space", { code: "IND 1" }, "Product Code may hold only letters, digits, '.', '_' and '-'"],
            ["a name with no letters or digits", { name: "???" }, "Product Name has no letters or digits"],
            ["a line with no folder", { line: "Kitchen" }, 'Product Line "Kitchen" has no folder under Products (known: Industrial, Consumer)'],
        ])("rejects %s with the reason, as a rejected job and on the row", (_what, cells, reason) => {
            const plan = planSweep(readOf({ rows: [row(11, cells)] }), NOW);

            const [reject] = ofType(plan, "rejectRequest");
            expect(reject).toMatchObject({ jobKey: keyOf(11), reason, line: { level: "warn", text: expect.stringMatching(new RegExp(`^job ${keyOf(11)} new → rejected \\(`)) } });
            expect(reject!.write && "create" in reject!.write && reject!.write.create).toMatchObject({ state: "rejected", rejectReason: reason, attempt: 1 });
            expect(statusesOf(plan)).toEqual([{ rowId: 11, status: expect.stringMatching(/^Rejected — /), ifLanded: keyOf(11) }]);
            expect(ofType(plan, "sendMessage")).toEqual([]);
            expect(plan.queuing).toEqual([]);
        });

        it("lists every problem of a row in one reason", () => {
            const plan = planSweep(readOf({ rows: [row(11, { code: "", name: "", line: "" })] }), NOW);
            expect(ofType(plan, "rejectRequest")[0]!.reason).toBe(
                "Product Code is missing; Product Name is missing; Product Name has no letters or digits; Product Line is missing",
            );
        });

        it("rejects a code that leaves no room in a sheet name for the longest template sheet name", () => {
            const templates = [...TEMPLATES, "Supplier Qualification Records Archive"];
            const plan = planSweep(readOf({ rows: [row(11, { code: "IND-0000000000011" })], templates }), NOW);
            expect(ofType(plan, "rejectRequest")[0]!.reason).toMatch(/needs \d+ characters for the longest template sheet name; Smartsheet allows 50/);
            expect(plan.queuing).toEqual([]);
        });

        it("records '(none)' as the code of a rejected row that has none", () => {
            const plan = planSweep(readOf({ rows: [row(11, { code: "" })] }), NOW);
            const write = ofType(plan, "rejectRequest")[0]!.write!;
            expect("create" in write && write.create.productCode).toBe("(none)");
        });
    });

    describe("rows that already have a job", () => {
        it.each(["queued", "running"] as const)("leaves a %s job's row to its steps: no job write, no status", (state) => {
            const plan = planSweep(readOf({ rows: [row(11, { status: "Typed by hand" })], jobs: new Map([[11, job(11, { state, instanceId: `provision-${PK}-11-a1` })]]) }), NOW);
            expect(plan.actions).toEqual([]);
            expect(plan.worked).toEqual([]);
        });

        it("regression #18.11 late In progress over Stalled: a parked job's row showing anything but its Stalled gets the Stalled back, without a job write", () => {
            const parked = job(11, { state: "parked", stage: "copy", parkReason: "template folder gone", parkedAt: "2026-03-02T09:00:00.000Z" });
            const plan = planSweep(readOf({ rows: [row(11, { status: "In progress" })], jobs: new Map([[11, parked]]) }), NOW);
            expect(plan.actions.map((action) => action.type)).toEqual(["writeStatuses"]);
            expect(statusesOf(plan)).toEqual([{ rowId: 11, status: "Stalled — template folder gone" }]);
            const unticked = planSweep(readOf({ rows: [row(11, { approved: false, status: "In progress" })], jobs: new Map([[11, parked]]) }), NOW);
            expect(statusesOf(unticked)).toEqual([{ rowId: 11, status: "Stalled — template folder gone" }]);
            const showing = planSweep(readOf({ rows: [row(11, { status: "Stalled — template folder gone" })], jobs: new Map([[11, parked]]) }), NOW);
            expect(showing.actions).toEqual([]);
        });

        it("regression chaos seed 2901063949 sweep stopped before its Queued: a queued job whose row shows nothing gets Queued; a running job's blank cell stays its steps'", () => {
            const queued = planSweep(readOf({ rows: [row(11, { status: "" })], jobs: new Map([[11, job(11, { state: "queued" })]]) }), NOW);
            expect(statusesOf(queued)).toEqual([{ rowId: 11, status: "Queued" }]);
            const running = planSweep(readOf({ rows: [row(11, { status: "" })], jobs: new Map([[11, job(11, { state: "running", stage: "copy" })]]) }), NOW);
            expect(statusesOf(running)).toEqual([]);
            const typed = planSweep(readOf({ rows: [row(11, { status: "please hurry" })], jobs: new Map([[11, job(11, { state: "queued" })]]) }), NOW);
            expect(statusesOf(typed)).toEqual([]);
        });

        it("repairs a done job's Done typed over, without a job write", () => {
            const plan = planSweep(readOf({ rows: [row(11, { status: "Cancelled?" })], jobs: new Map([[11, job(11, { state: "done", stage: "register" })]]) }), NOW);
            expect(plan.actions.map((action) => action.type)).toEqual(["writeStatuses"]);
            expect(statusesOf(plan)).toEqual([{ rowId: 11, status: "Done" }]);
        });

        it("writes nothing for a done job whose row says Done", () => {
            const plan = planSweep(readOf({ rows: [row(11, { status: "Done" })], jobs: new Map([[11, job(11, { state: "done", stage: "register" })]]) }), NOW);
            expect(plan.actions).toEqual([]);
        });

        it("leaves a rejected job alone while its row says the same rejection", () => {
            const rejected = job(11, { state: "rejected", rejectReason: 'Product Line "Kitchen" has no folder under Products (known: Industrial, Consumer)' });
            const plan = planSweep(
                readOf({ rows: [row(11, { line: "Kitchen", status: `Rejected — ${rejected.row.rejectReason}` })], jobs: new Map([[11, rejected]]) }),
                NOW,
            );
            expect(plan.actions).toEqual([]);
        });

        it("writes a rejection typed over back onto the row, with no job write when the reason is the same", () => {
            const reason = 'Product Line "Kitchen" has no folder under Products (known: Industrial, Consumer)';
            const plan = planSweep(readOf({ rows: [row(11, { line: "Kitchen", status: "fixed it" })], jobs: new Map([[11, job(11, { state: "rejected", rejectReason: reason })]]) }), NOW);
            const [reject] = ofType(plan, "rejectRequest");
            expect(reject).toMatchObject({ reason });
            expect(reject!.write).toBeUndefined();
            expect(statusesOf(plan)).toEqual([{ rowId: 11, status: `Rejected — ${reason}`, ifLanded: keyOf(11) }]);
        });

        it("replaces a rejected job's reason when the row is wrong in a new way, conditional on the job as read", () => {
            const stored = job(11, { state: "rejected", rejectReason: "Product Name is missing" });
            const plan = planSweep(readOf({ rows: [row(11, { line: "Kitchen", status: "Rejected — Product Name is missing" })], jobs: new Map([[11, stored]]) }), NOW);
            const write = ofType(plan, "rejectRequest")[0]!.write!;
            expect("replace" in write && write.replace).toBe(stored);
            expect("replace" in write && write.with).toMatchObject({ state: "rejected", rejectReason: expect.stringContaining('"Kitchen"'), intakeStatus: expect.stringMatching(/^Rejected — /) });
        });

        it("queues a rejected job whose row was corrected, as its next attempt, conditional on the job as read", () => {
            const stored = job(11, { state: "rejected", rejectReason: "Product Name is missing", attempt: 1 });
            const plan = planSweep(readOf({ rows: [row(11, { status: "Rejected — Product Name is missing" })], jobs: new Map([[11, stored]]) }), NOW);
            const [queue] = ofType(plan, "queueJob");
            expect(queue!.line.text).toBe(`job ${keyOf(11)} rejected → queued (the intake row was corrected)`);
            expect("replace" in queue!.write && queue!.write.replace).toBe(stored);
            expect("replace" in queue!.write && queue!.write.with).toMatchObject({ state: "queued", attempt: 2, instanceId: `provision-${PK}-11-a2`, intakeStatus: "Queued" });
            expect(statusesOf(plan)).toEqual([{ rowId: 11, status: "Queued", ifLanded: keyOf(11) }]);
        });

        it("does not judge a row whose job does not parse (it has one): the job is only reported", () => {
            const invalid = [{ jobKey: keyOf(11), reason: "its row is invalid: attempt: expected number" }];
            const read = readOf({ rows: [row(11)], jobs: new Map([[11, undefined]]), invalid });
            const plan = planSweep(read, NOW);
            expect(plan.actions).toEqual([]);
            expect(ofType(followUp(read, plan), "reportInvalidJobs")).toEqual([{ type: "reportInvalidJobs", invalid, run: "intake sweep of site default" }]);
        });
    });

    describe("withdrawn and deleted rows", () => {
        it("repairs the final status of a row unticked after its job finished: Done, or the rejection with its reason", () => {
            const rows = [row(11, { approved: false, status: "Withdrawn" }), row(12, { approved: false, status: "Withdrawn" }), row(13, { approved: false, status: "Withdrawn" })];
            const jobs = new Map([
                [11, job(11, { state: "done", stage: "register" })],
                [12, job(12, { state: "rejected", rejectReason: "Product Name is missing" })],
                [13, job(13, { state: "rejected" })],
            ]);
            const plan = planSweep(readOf({ rows, jobs }), NOW);
            expect(statusesOf(plan)).toEqual([
                { rowId: 11, status: "Done" },
                { rowId: 12, status: "Rejected — Product Name is missing" },
                { rowId: 13, status: "Rejected — invalid request" },
            ]);
            expect(plan.approvedRows).toBe(0);
        });

        it("unticking cancels nothing: a running job's unticked row is left to its steps, and a row never queued gets no job", () => {
            const rows = [row(11, { approved: false, status: "Queued" }), row(12, { approved: false, status: "please hold" })];
            const plan = planSweep(readOf({ rows, jobs: new Map([[11, job(11, { state: "running", stage: "copy" })]]) }), NOW);
            expect(plan.actions).toEqual([]);
        });

        it("a code held by a job whose row was unticked or deleted is taken: a new row with it is rejected", () => {
            const plan = planSweep(readOf({ rows: [row(12, { code: "IND-11" })], codeHolders: new Map([["IND-11", 11]]) }), NOW);
            expect(ofType(plan, "rejectRequest")[0]!.reason).toBe("Product Code IND-11 is already provisioned by another intake row");
        });

        it("a code the table says this very row holds is no duplicate", () => {
            const stored = job(11, { state: "rejected", rejectReason: "Product Name is missing" });
            const plan = planSweep(readOf({ rows: [row(11)], jobs: new Map([[11, stored]]), codeHolders: new Map([["IND-11", 11]]) }), NOW);
            expect(plan.queuing).toEqual([keyOf(11)]);
        });

        it("notes a done job whose intake row is gone, so no Done stays owed", () => {
            const gone = job(11, { state: "done", stage: "register", intakeStatus: "Stalled — x" });
            const plan = planSweep(readOf({ owedDone: [gone] }), NOW);
            expect(plan.actions).toEqual([
                {
                    type: "noteIntakeRowGone",
                    key: { pk: PK, rk: "11" },
                    goneAt: NOW.toISOString(),
                    line: { level: "info", text: `job ${keyOf(11)} is done, but its intake row 11 is gone: no Done left to write` },
                },
            ]);
        });

        it("writes a Done its job could not write, and notes it on the job; a row already saying Done only gets the note", () => {
            const owed = [job(11, { state: "done", stage: "register", intakeStatus: "Stalled — locked" }), job(12, { state: "done", stage: "register", intakeStatus: "Queued" })];
            const plan = planSweep(readOf({ rows: [row(11, { approved: false, status: "Stalled — locked" }), row(12, { approved: false, status: "Done" })], owedDone: owed }), NOW);
            expect(plan.actions).toEqual([
                { type: "writeStatuses", intakeSheetId: SHEET, statusColumnId: 5, statuses: [{ rowId: 11, status: "Done" }] },
                { type: "noteDoneWritten", key: { pk: PK, rk: "11" }, line: { level: "info", text: `job ${keyOf(11)}: Done written onto its intake row, which the job itself could not write` } },
                { type: "noteDoneWritten", key: { pk: PK, rk: "12" } },
            ]);
        });
    });

    describe("duplicate product codes", () => {
        it("among new rows the first by row number wins a code; the later one is rejected", () => {
            const plan = planSweep(readOf({ rows: [row(20, { code: "IND-1", rowNumber: 2 }), row(10, { code: "IND-1", rowNumber: 1 })] }), NOW);
            expect(plan.queuing).toEqual([keyOf(10)]);
            expect(ofType(plan, "rejectRequest")).toEqual([expect.objectContaining({ jobKey: keyOf(20), reason: "Product Code IND-1 is already provisioned by another intake row" })]);
        });

        it("an invalid first row does not take the code: the next valid row with it is queued", () => {
            const plan = planSweep(readOf({ rows: [row(10, { code: "IND-1", line: "Kitchen" }), row(20, { code: "IND-1" })] }), NOW);
            expect(plan.queuing).toEqual([keyOf(20)]);
            expect(ofType(plan, "rejectRequest").map((action) => action.jobKey)).toEqual([keyOf(10)]);
        });

        it("a code is compared after trimming: ' IND-1' and 'IND-1' are one code", () => {
            const plan = planSweep(readOf({ rows: [row(10, { code: "IND-1" }), row(20, { code: " IND-1" })] }), NOW);
            expect(plan.queuing).toEqual([keyOf(10)]);
        });
    });

    describe("statuses", () => {
        it("writes every status in one batch, final statuses first, before any message", () => {
            const rows = [row(11, { status: "x" }), row(12), row(13, { line: "Kitchen" })];
            const plan = planSweep(readOf({ rows, jobs: new Map([[11, job(11, { state: "done", stage: "register" })]]) }), NOW);
            expect(plan.actions.map((action) => action.type)).toEqual(["queueJob", "rejectRequest", "writeStatuses", "sendMessage"]);
            expect(statusesOf(plan).map((write) => [write.rowId, write.status])).toEqual([
                [11, "Done"],
                [12, "Queued"],
                [13, expect.stringMatching(/^Rejected — /)],
            ]);
        });

        it("nothing to do: no status write, and the follow-up only moves the cursor", () => {
            const read = readOf({ rows: [row(11, { status: "Done" })], jobs: new Map([[11, job(11, { state: "done", stage: "register" })]]) });
            const plan = planSweep(read, NOW);
            expect(plan.actions).toEqual([]);
            expect(followUp(read, plan)).toEqual([{ type: "advanceCursor", intakeSheetId: SHEET, cursor: { sweptAt: READ_AT, verdictInputs: "v1" } }]);
        });
    });

    describe("outstanding work", () => {
        it("sends again the message of a queued job with no orchestration, and only that one", () => {
            const read = readOf();
            const outstanding: OutstandingRead = {
                queued: [
                    { key: { pk: PK, rk: "31" }, hasOrchestration: false },
                    { key: { pk: PK, rk: "32" }, hasOrchestration: true },
                ],
                invalid: [],
            };
            const actions = followUp(read, planSweep(read, NOW), outstanding);
            expect(ofType(actions, "requeue")).toEqual([
                { type: "requeue", key: { pk: PK, rk: "31" }, jobKey: keyOf(31), line: { level: "info", text: `job ${keyOf(31)} queued with no orchestration: message sent again` } },
            ]);
        });

        it("does not send again a job this sweep queued and sent", () => {
            const read = readOf({ rows: [row(11)] });
            const plan = planSweep(read, NOW);
            const actions = followUp(read, plan, { queued: [{ key: { pk: PK, rk: "11" } }], invalid: [] });
            expect(ofType(actions, "requeue")).toEqual([]);
        });

        it("reports each job that could not be read once, those of the read first, then the listing's new ones", () => {
            const read = readOf({ invalid: [{ jobKey: keyOf(1), reason: "a" }] });
            const actions = followUp(read, planSweep(read, NOW), {
                queued: [],
                invalid: [
                    { jobKey: keyOf(1), reason: "a again" },
                    { jobKey: keyOf(2), reason: "b" },
                ],
            });
            expect(ofType(actions, "reportInvalidJobs")[0]!.invalid).toEqual([
                { jobKey: keyOf(1), reason: "a" },
                { jobKey: keyOf(2), reason: "b" },
            ]);
        });

        it("moves the cursor to the sweep's read of the sheet by Smartsheet's clock, with the verdict inputs it judged by, last", () => {
            const read = readOf({ rows: [row(11)] });
            const actions = followUp(read, planSweep(read, NOW), { queued: [{ key: { pk: PK, rk: "31" }, hasOrchestration: false }], invalid: [{ jobKey: keyOf(2), reason: "b" }] });
            expect(actions.map((action) => action.type)).toEqual(["requeue", "reportInvalidJobs", "advanceCursor"]);
            expect(actions.at(-1)).toEqual({ type: "advanceCursor", intakeSheetId: SHEET, cursor: { sweptAt: READ_AT, verdictInputs: "v1" } });
        });

        it("leaves the cursor where it was when the read gave no time by Smartsheet's clock: no instance's own clock stamps it", () => {
            const read = readOf({ rows: [row(11)], readAt: undefined });
            expect(ofType(followUp(read, planSweep(read, NOW)), "advanceCursor")).toEqual([]);
        });
    });

    describe("missed by the cursor", () => {
        const fullRead = (overrides: Partial<SweepRead>) => readOf({ kind: "full", since: undefined, ...overrides });

        it("a full sweep reports each row it worked on that a routine sweep would not have read", () => {
            const rows = [row(11, { modifiedAt: BEFORE_CURSOR }), row(12, { modifiedAt: AFTER_CURSOR }), row(13, { modifiedAt: BEFORE_CURSOR, status: "x" })];
            const read = fullRead({ rows, jobs: new Map([[13, job(13, { state: "done", stage: "register" })]]) });
            const actions = followUp(read, planSweep(read, NOW));
            // Worked on in this order: the Done repaired, then the rows judged.
            expect(ofType(actions, "reportMissedByCursor").map((action) => action.jobKey)).toEqual([keyOf(13), keyOf(11)]);
            expect(ofType(actions, "reportMissedByCursor")[1]!.line).toEqual({
                level: "warn",
                text:
                    `job ${keyOf(11)}: intake row 11 needed work that the cursor missed (row last modified ${BEFORE_CURSOR}, ` +
                    `routine sweeps read rows modified since ${CURSOR_SINCE.toISOString()}); the full sweep did it now`,
            });
        });

        it("counts a row modified in the cursor's own second as read by the routine sweep (Smartsheet keeps whole seconds)", () => {
            const read = fullRead({ rows: [row(11, { modifiedAt: "2026-03-02T09:29:59.900Z" })] });
            expect(ofType(followUp(read, planSweep(read, NOW)), "reportMissedByCursor")).toEqual([]);
        });

        it("does not report a row whose job write did not land (an overlapping sweep did the work)", () => {
            const read = fullRead({ rows: [row(11, { modifiedAt: BEFORE_CURSOR })] });
            const plan = planSweep(read, NOW);
            expect(ofType(planFollowUp(read, plan, new Set(), NOTHING_OUTSTANDING), "reportMissedByCursor")).toEqual([]);
        });

        it("does not report a Done owed by a job: no row change could have told the cursor", () => {
            const owed = job(11, { state: "done", stage: "register", intakeStatus: "Stalled — locked" });
            const read = fullRead({ rows: [row(11, { modifiedAt: BEFORE_CURSOR, status: "Stalled — locked" })], owedDone: [owed], jobs: new Map([[11, owed]]) });
            expect(ofType(followUp(read, planSweep(read, NOW)), "reportMissedByCursor")).toEqual([]);
        });

        it("reports nothing on a routine sweep, nor on a full sweep with no usable cursor", () => {
            const rows = [row(11, { modifiedAt: BEFORE_CURSOR })];
            for (const read of [readOf({ rows }), fullRead({ rows, cursorSince: undefined })]) {
                expect(ofType(followUp(read, planSweep(read, NOW)), "reportMissedByCursor")).toEqual([]);
            }
        });
    });

    it("is deterministic: the same read and instant give the same plan", () => {
        const read = readOf({
            rows: [row(11), row(12, { code: "IND-11" }), row(13, { approved: false, status: "x" }), row(14, { line: "Kitchen" })],
            jobs: new Map([[13, job(13, { state: "done", stage: "register" })]]),
            owedDone: [job(99, { state: "done", stage: "register" })],
        });
        expect(planSweep(read, NOW)).toEqual(planSweep(read, new Date(NOW.getTime())));
        const plan = planSweep(read, NOW);
        expect(followUp(read, plan)).toEqual(followUp(read, plan));
    });

    it("says what the sweep read, for its count line", () => {
        expect(readingOf({ kind: "routine", since: CURSOR_SINCE, cursor: {} })).toBe(`rows modified since ${CURSOR_SINCE.toISOString()}`);
        expect(readingOf({ kind: "full", cursor: {} })).toBe("every row");
        expect(readingOf({ kind: "routine", cursor: {} })).toBe("every row: no cursor yet");
        expect(readingOf({ kind: "routine", cursor: { problem: "sweptAt: Invalid" } })).toBe("every row: the cursor does not parse");
        expect(readingOf({ kind: "routine", cursor: { cursor: { sweptAt: NOW.toISOString(), verdictInputs: "v0" } } })).toBe(
            "every row: the product lines or the templates changed, so a rejected row may pass now",
        );
        expect(readingOf({ kind: "routine", cursor: { cursor: { sweptAt: NOW.toISOString(), verdictInputs: "v1" } }, cursorAheadMs: 599_600 })).toBe(
            "every row: the cursor is ahead of the storage service's clock by 600 s",
        );
    });
});
