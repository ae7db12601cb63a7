import { TaskFailedError, type OrchestrationContext } from "durable-functions";
import { describe, expect, it } from "vitest";
import { provisionProduct } from "../../src/orchestrators/provisionProduct";
import { EnterStageInput, ParkInput, StepBugError, type JobView, type ProvisionStatus, type StepOutcome } from "../../src/shared/provisioning/contracts";
import { TransientSmartsheetError } from "../../src/shared/smartsheet/errors";

/**
 * The orchestrator driven without a host: a fake context hands out plain task records, and a
 * script answers them as the activities, the unpark event and the timers would.
 */
type Scheduled =
    | { kind: "activity"; name: string; input: Record<string, unknown> }
    | { kind: "all"; tasks: Scheduled[] }
    | { kind: "event"; name: string }
    | { kind: "timer"; at: string };

/** A step that failed every one of its retries: Durable Functions throws its last error into the orchestration. */
class Failed {
    constructor(readonly error: Error) {}
}

/** The error the orchestration gets for an activity that threw `error` on its last retry, as Durable Functions builds it. */
function failedWith(error: Error): Failed {
    return new Failed(new TaskFailedError({ errorType: error.name, errorMessage: error.message, stackTrace: error.stack, isNonRetriable: false, isCausedBy: (type) => type === error.name }));
}

interface Script {
    /** The outcome of the n-th call (1-based) of a step; default: done with the job as it stands. */
    steps?: Record<string, (input: Record<string, unknown>, call: number) => StepOutcome | Failed | undefined>;
    /** Unpark events in the order people raise them. */
    events?: unknown[];
    job?: Partial<JobView>;
}

const TEMPLATES = ["Approvals", "Change Log", "Specifications"];

function view(patch: Partial<JobView> = {}): JobView {
    return { state: "running", stage: "copy", productCode: "IND-1042", templates: TEMPLATES, copied: [], recoveries: 0, ...patch };
}

function run(script: Script = {}) {
    const job = view(script.job);
    const calls = new Map<string, number>();
    const trace: string[] = [];
    const statuses: ProvisionStatus[] = [];
    const timers: string[] = [];
    const events = [...(script.events ?? [])];
    const answer = (task: Scheduled): unknown => {
        switch (task.kind) {
            case "activity": {
                const call = (calls.get(task.name) ?? 0) + 1;
                calls.set(task.name, call);
                trace.push(task.name === "copyTemplateSheet" ? `copy ${String(task.input.template)}` : task.name);
                expect(task.input).toMatchObject({ jobKey: { pk: "111", rk: "222" }, instanceId: "provision-111-222-a1" });
                const scripted = script.steps?.[task.name]?.(task.input, call);
                if (scripted) return scripted;
                if (task.name === "copyTemplateSheet") job.copied = [...new Set([...job.copied, String(task.input.template)])];
                return { outcome: "done", job: { ...job } };
            }
            case "all": {
                const answers = task.tasks.map(answer);
                return answers.find((one) => one instanceof Failed) ?? answers;
            }
            case "event": {
                trace.push(`wait for ${task.name}`);
                if (events.length === 0) throw new Error("the orchestration waits for an unpark nobody raises");
                return events.shift();
            }
            case "timer":
                trace.push(`timer until ${task.at}`);
                timers.push(task.at);
                return undefined;
        }
    };
    const context = {
        log: () => undefined,
        df: {
            instanceId: "provision-111-222-a1",
            isReplaying: false,
            getInput: () => ({ jobKey: { pk: "111", rk: "222" }, attempt: 1 }),
            setCustomStatus: (status: ProvisionStatus) => statuses.push(status),
            callActivityWithRetry: (name: string, _retry: unknown, input: Record<string, unknown>): Scheduled => ({ kind: "activity", name, input }),
            Task: { all: (tasks: Scheduled[]): Scheduled => ({ kind: "all", tasks }) },
            waitForExternalEvent: (name: string): Scheduled => ({ kind: "event", name }),
            createTimer: (at: Date): Scheduled => ({ kind: "timer", at: at.toISOString() }),
        },
    } as unknown as OrchestrationContext;

    const orchestration = provisionProduct({ firstRetryMs: 1000, maxAttempts: 3, maxRetryMs: 5000 })(context) as Generator<Scheduled, unknown, unknown>;
    let next = orchestration.next();
    for (let turns = 0; !next.done; turns++) {
        if (turns > 200) throw new Error("the orchestration does not end");
        const answered = answer(next.value);
        next = answered instanceof Failed ? orchestration.throw(answered.error) : orchestration.next(answered);
    }
    return { output: next.value, trace, statuses, timers, last: statuses.at(-1) };
}

const done = (patch: Partial<JobView> = {}): StepOutcome => ({ outcome: "done", job: view(patch) });
const permanent = (reason: string): StepOutcome => ({ outcome: "permanent", reason });
const superseded: StepOutcome = { outcome: "superseded", reason: "attempt 2 owns the job" };
const HAPPY_PATH = [
    "beginAttempt",
    "enterStage",
    "ensureProductFolder",
    ...TEMPLATES.map((template) => `copy ${template}`),
    "verifyCopies",
    "enterStage",
    "remapReferences",
    "stampSummary",
    "enterStage",
    "registerDocumentRegister",
    "auditProduct",
    "completeJob",
];

describe("the provisionProduct orchestration, driven without a host", () => {
    it("runs copy, remap and register in order, copying every template at once, and ends done", () => {
        const { output, trace, last } = run();
        expect(trace).toEqual(HAPPY_PATH);
        expect(output).toEqual({ jobKey: "111-222", result: "done" });
        expect(last).toMatchObject({ state: "done", stage: "register", sheetsDone: 3, sheetsTotal: 3 });
    });

    it("schedules the copies of one round together, so they fan out", () => {
        const rounds: number[] = [];
        let pending = 0;
        const { trace } = run({
            steps: {
                copyTemplateSheet: () => {
                    pending += 1;
                    return undefined;
                },
                verifyCopies: () => {
                    rounds.push(pending);
                    pending = 0;
                    return undefined;
                },
            },
        });
        expect(rounds).toEqual([3]);
        expect(trace.filter((line) => line.startsWith("copy "))).toHaveLength(3);
    });

    it("copies again only what verification reports missing, round after round", () => {
        const { trace, output } = run({
            steps: {
                verifyCopies: (_input, call) =>
                    call === 1 ? { outcome: "done", job: view({ copied: ["Approvals", "Specifications"] }), missing: ["Change Log"] } : undefined,
            },
        });
        const copyStage = trace.slice(trace.indexOf("ensureProductFolder") + 1, trace.indexOf("remapReferences") - 1);
        expect(copyStage).toEqual(["copy Approvals", "copy Change Log", "copy Specifications", "verifyCopies", "copy Change Log", "verifyCopies"]);
        expect(output).toMatchObject({ result: "done" });
    });

    it("parks after three rounds in which copies keep disappearing", () => {
        const parks: unknown[] = [];
        const { trace } = run({
            steps: {
                verifyCopies: () => ({ outcome: "done", job: view({ copied: [] }), missing: ["Approvals"] }),
                parkJob: (input) => {
                    parks.push(input);
                    return superseded;
                },
            },
        });
        expect(trace.filter((line) => line === "verifyCopies")).toHaveLength(3);
        expect(parks).toEqual([expect.objectContaining({ stage: "copy", reason: expect.stringContaining("Copies keep disappearing") })]);
    });

    it("waits on a durable timer until late writes can no longer land, then audits again before the job is done", () => {
        const waitUntil = "2026-12-01T12:05:30.000Z";
        const { trace, timers } = run({ steps: { auditProduct: (_input, call) => (call === 1 ? { outcome: "done", job: view(), waitUntil } : undefined) } });
        expect(timers).toEqual([waitUntil]);
        expect(trace.slice(-4)).toEqual(["auditProduct", `timer until ${waitUntil}`, "auditProduct", "completeJob"]);
    });

    it("stops quietly when a recovery has taken the job over, at the start or in the middle of a stage", () => {
        const atStart = run({ steps: { beginAttempt: () => superseded } });
        expect(atStart.trace).toEqual(["beginAttempt"]);
        expect(atStart.output).toEqual({ jobKey: "111-222", result: "superseded" });
        expect(atStart.last?.state).toBe("superseded");

        const midway = run({ steps: { remapReferences: () => superseded } });
        expect(midway.trace.at(-1)).toBe("remapReferences");
        expect(midway.output).toEqual({ jobKey: "111-222", result: "superseded" });
    });

    it("parks on a permanent failure, ignores an unpark for an earlier parking, and runs the same stage again once unparked", () => {
        const parkedAt = "2026-12-01T12:00:00.000Z";
        const { trace, output, statuses } = run({
            steps: {
                registerDocumentRegister: (_input, call) => (call === 1 ? permanent("The Filing Index sheet has no \"Folder Id\" column; add it back.") : undefined),
                parkJob: () => done({ state: "parked", stage: "register", parkedAt }),
            },
            events: [{ parkedAt: "2026-11-30T09:00:00.000Z", by: "someone late" }, { parkedAt, by: "dana" }],
        });
        const afterPark = trace.slice(trace.indexOf("parkJob"));
        expect(afterPark).toEqual([
            "parkJob",
            "wait for unpark",
            "wait for unpark",
            "resumeJob",
            "enterStage",
            "registerDocumentRegister",
            "auditProduct",
            "completeJob",
        ]);
        expect(trace.filter((line) => line === "remapReferences")).toHaveLength(1);
        expect(statuses).toContainEqual(expect.objectContaining({ state: "parked", parkReason: expect.stringContaining("Folder Id") }));
        expect(output).toMatchObject({ result: "done" });
    });

    it("regression #18.11 late In progress over Stalled: a park whose earlier status write may still land confirms the Stall after it can no longer land, then waits for unpark", () => {
        const parkedAt = "2026-12-01T12:00:00.000Z";
        const lateUntil = "2026-12-01T12:03:00.000Z";
        const { trace, timers, output } = run({
            steps: {
                registerDocumentRegister: (_input, call) => (call === 1 ? permanent("The Filing Index sheet is gone.") : undefined),
                parkJob: () => ({ ...done({ state: "parked", stage: "register", parkedAt }), waitUntil: lateUntil }),
            },
            events: [{ parkedAt, by: "dana" }],
        });
        expect(trace.slice(trace.indexOf("parkJob"), trace.indexOf("resumeJob") + 1)).toEqual([
            "parkJob",
            `timer until ${lateUntil}`,
            "confirmStalled",
            "wait for unpark",
            "resumeJob",
        ]);
        expect(timers).toEqual([lateUntil]);
        expect(output).toMatchObject({ result: "done" });
    });

    it("passes the parked stage and reason to parkJob", () => {
        const parks: unknown[] = [];
        run({
            steps: {
                copyTemplateSheet: (input) => (input.template === "Change Log" ? permanent("403/1004 on the template") : undefined),
                parkJob: (input) => {
                    parks.push(input);
                    return superseded;
                },
            },
        });
        expect(parks).toEqual([expect.objectContaining({ stage: "copy", reason: "403/1004 on the template" })]);
    });

    it("an invariant error parks the job with its message after the step's own retries, not after the reaper's recoveries", () => {
        const parkedAt = "2026-12-01T12:00:00.000Z";
        const parks: unknown[] = [];
        const bug = new StepBugError("remapReferences", "Cannot read properties of undefined (reading 'sheetId')");
        const { trace, output, statuses } = run({
            steps: {
                // Durable Functions ran it the policy's attempts; the orchestration sees the last one fail.
                remapReferences: (_input, call) => (call === 1 ? failedWith(bug) : undefined),
                parkJob: (input) => {
                    parks.push(input);
                    return done({ state: "parked", stage: "remap", parkedAt });
                },
            },
            events: [{ parkedAt, by: "dana" }],
        });
        expect(parks).toEqual([
            expect.objectContaining({
                stage: "remap",
                reason: "Unexpected error in remapReferences (a bug; its retries are spent): Cannot read properties of undefined (reading 'sheetId')",
            }),
        ]);
        expect(statuses).toContainEqual(expect.objectContaining({ state: "parked", parkReason: expect.stringContaining("reading 'sheetId'") }));
        expect(trace.slice(trace.indexOf("parkJob"), trace.indexOf("parkJob") + 5)).toEqual(["parkJob", "wait for unpark", "resumeJob", "enterStage", "remapReferences"]);
        expect(output).toMatchObject({ result: "done" });
    });

    it("a bug in one copy, its retries spent, parks the job at the copy stage", () => {
        const parks: unknown[] = [];
        run({
            steps: {
                copyTemplateSheet: (input) => (input.template === "Change Log" ? failedWith(new StepBugError("copyTemplateSheet", "The product folder is not recorded yet")) : undefined),
                parkJob: (input) => {
                    parks.push(input);
                    return superseded;
                },
            },
        });
        expect(parks).toEqual([expect.objectContaining({ stage: "copy", reason: expect.stringMatching(/^Unexpected error in copyTemplateSheet \(a bug.*The product folder is not recorded yet$/) })]);
    });

    it("a transient failure that outlasts the step's retries fails the orchestration, as before: the reaper takes the job over", () => {
        const transient = new TransientSmartsheetError("Smartsheet copySheet failed with 503", { operation: "copySheet", statusCode: 503 });
        expect(() => run({ steps: { verifyCopies: () => failedWith(transient) } })).toThrow(/TransientSmartsheetError: Smartsheet copySheet failed with 503/);
        // A failure of the job's lifecycle steps is not parked from here either.
        expect(() => run({ steps: { beginAttempt: () => failedWith(new StepBugError("beginAttempt", "broken")) } })).toThrow(/broken/);
    });

    it("a job the reaper parked waits for unpark before running its stage", () => {
        const { trace, output } = run({
            job: { state: "parked", stage: "remap", parkReason: "No progress after 3 recoveries", parkedAt: "2026-12-01T11:00:00.000Z", copied: TEMPLATES },
            events: [{ parkedAt: "2026-12-01T11:00:00.000Z" }],
        });
        expect(trace.slice(0, 5)).toEqual(["beginAttempt", "wait for unpark", "resumeJob", "enterStage", "remapReferences"]);
        expect(trace).not.toContain("ensureProductFolder");
        expect(output).toMatchObject({ result: "done" });
    });

    it("ends when parking or resuming finds the job taken over", () => {
        const parking = run({ steps: { verifyCopies: () => permanent("gone"), parkJob: () => superseded } });
        expect(parking.output).toEqual({ jobKey: "111-222", result: "superseded" });

        const resuming = run({
            job: { state: "parked", parkedAt: "2026-12-01T11:00:00.000Z" },
            events: [{}],
            steps: { resumeJob: () => superseded },
        });
        expect(resuming.trace).toEqual(["beginAttempt", "wait for unpark", "resumeJob"]);
        expect(resuming.output).toEqual({ jobKey: "111-222", result: "superseded" });
    });

    it("a malformed unpark event counts as one for the current parking", () => {
        const { trace, output } = run({
            job: { state: "parked", parkedAt: "2026-12-01T11:00:00.000Z" },
            events: ["not an object"],
        });
        expect(trace.slice(0, 3)).toEqual(["beginAttempt", "wait for unpark", "resumeJob"]);
        expect(output).toMatchObject({ result: "done" });
    });

    it("refuses input that is not a job key", () => {
        const context = { df: { getInput: () => ({ jobKey: "111-222" }), instanceId: "x" } } as unknown as OrchestrationContext;
        const orchestration = provisionProduct({ firstRetryMs: 1000, maxAttempts: 3, maxRetryMs: 5000 })(context) as Generator;
        expect(() => orchestration.next()).toThrow();
    });
});

/**
 * Replays a history, as Durable Functions does after a deploy: every task the orchestrator yields
 * must be the next one recorded (same kind, name and input), and gets the recorded answer. A
 * history that runs out leaves the orchestration waiting there, as a live instance would.
 */
function replay(
    history: ReadonlyArray<{ yields: Scheduled; answer: unknown }>,
    sameAction: (current: Scheduled, recorded: Scheduled) => void = (current, recorded) => expect(current).toEqual(recorded),
) {
    const statuses: ProvisionStatus[] = [];
    const context = {
        log: () => undefined,
        df: {
            instanceId: "provision-111-222-a1",
            isReplaying: true,
            getInput: () => ({ jobKey: { pk: "111", rk: "222" }, attempt: 1 }),
            setCustomStatus: (status: ProvisionStatus) => statuses.push(status),
            callActivityWithRetry: (name: string, _retry: unknown, input: Record<string, unknown>): Scheduled => ({ kind: "activity", name, input }),
            Task: { all: (tasks: Scheduled[]): Scheduled => ({ kind: "all", tasks }) },
            waitForExternalEvent: (name: string): Scheduled => ({ kind: "event", name }),
            createTimer: (at: Date): Scheduled => ({ kind: "timer", at: at.toISOString() }),
        },
    } as unknown as OrchestrationContext;
    const orchestration = provisionProduct({ firstRetryMs: 1000, maxAttempts: 3, maxRetryMs: 5000 })(context) as Generator<Scheduled, unknown, unknown>;
    let next = orchestration.next();
    for (const recorded of history) {
        expect(next.done).toBe(false);
        sameAction(next.value as Scheduled, recorded.yields);
        next = orchestration.next(recorded.answer);
    }
    return { waitingOn: next.done ? undefined : next.value, last: statuses.at(-1) };
}

describe("the copies the custom status shows (the DfMon Job tab's numbers)", () => {
    const SEVEN = ["Approvals", "Change Log", "Cost Model", "Document Register", "Risk Register", "Schedule", "Specifications"];
    const step = { jobKey: { pk: "111", rk: "222" }, instanceId: "provision-111-222-a1" };
    const activity = (name: string, extra: Record<string, unknown> = {}): Scheduled => ({ kind: "activity", name, input: { ...step, ...extra } });
    const seven = (patch: Partial<JobView> = {}) => view({ templates: SEVEN, ...patch });
    const REFUSED = "Smartsheet copySheet failed with 400/1041: the name is longer than 50 characters";
    /** A round of seven copies in which Specifications' name is refused, as the code before #19 recorded it. */
    const historyParkedWithSixOfSeven = [
        { yields: activity("beginAttempt", { attempt: 1 }), answer: done({ templates: SEVEN }) },
        { yields: activity("enterStage", { stage: "copy" }), answer: done({ templates: SEVEN }) },
        { yields: activity("ensureProductFolder"), answer: done({ templates: SEVEN }) },
        {
            yields: { kind: "all", tasks: SEVEN.map((template) => activity("copyTemplateSheet", { template })) } as Scheduled,
            answer: SEVEN.map((template, index) =>
                template === "Specifications"
                    ? { outcome: "permanent", reason: REFUSED, job: seven({ copied: SEVEN.slice(0, 6) }) }
                    : { outcome: "done", job: seven({ copied: SEVEN.slice(0, index + 1) }) },
            ),
        },
        {
            yields: activity("parkJob", { reason: REFUSED, stage: "copy" }),
            answer: { outcome: "done", job: seven({ state: "parked", copied: SEVEN.slice(0, 6), parkReason: REFUSED, parkedAt: "2026-12-01T12:00:00.000Z" }) },
        },
    ];

    it("replays a history recorded before the fix without a new action, and shows 6 of 7 for the job parked with six copies", () => {
        const { waitingOn, last } = replay(historyParkedWithSixOfSeven);
        expect(waitingOn).toEqual({ kind: "event", name: "unpark" });
        expect(last).toMatchObject({ state: "parked", stage: "copy", sheetsDone: 6, sheetsTotal: 7, parkReason: REFUSED });
    });

    it("counts the copies of a round that one refused copy stopped, before the job parks", () => {
        const beforePark = replay(historyParkedWithSixOfSeven.slice(0, 4));
        expect(beforePark.waitingOn).toEqual(activity("parkJob", { reason: REFUSED, stage: "copy" }));
        expect(beforePark.last).toMatchObject({ state: "running", sheetsDone: 6, sheetsTotal: 7 });
    });

    it("shows the copies a recovery found already made as soon as the product folder is there, before it copies the rest", () => {
        const { waitingOn, last } = replay([
            { yields: activity("beginAttempt", { attempt: 1 }), answer: done({ templates: SEVEN }) },
            { yields: activity("enterStage", { stage: "copy" }), answer: done({ templates: SEVEN }) },
            { yields: activity("ensureProductFolder"), answer: done({ templates: SEVEN, copied: SEVEN.slice(0, 4) }) },
        ]);
        expect(waitingOn).toEqual({ kind: "all", tasks: SEVEN.slice(4).map((template) => activity("copyTemplateSheet", { template })) });
        expect(last).toMatchObject({ state: "running", sheetsDone: 4, sheetsTotal: 7 });
    });
});

/**
 * #20.2 named the second stage for what it does: `remap`, which was `rename` before. Orchestrations
 * in flight across that deploy replay histories the old code recorded: Durable Functions checks that
 * each replayed action is the activity the history names, in order — not its input — and hands the
 * old code's recorded answers (a job at stage `rename`) to the new code.
 */
describe("across the deploy that named the remap stage (it was rename)", () => {
    const step = { jobKey: { pk: "111", rk: "222" }, instanceId: "provision-111-222-a1" };
    const activity = (name: string, extra: Record<string, unknown> = {}): Scheduled => ({ kind: "activity", name, input: { ...step, ...extra } });
    /** A recorded answer as the old code's activities wrote it into the history. */
    const oldDone = (patch: Record<string, unknown> = {}) => ({ outcome: "done", job: { ...view({ copied: TEMPLATES }), ...patch } });
    /** As Durable Functions replays: the same kind of action and the same activity, in order; inputs are not compared. */
    const byName = (current: Scheduled, recorded: Scheduled) => {
        expect(current.kind).toBe(recorded.kind);
        if (current.kind === "activity" && recorded.kind === "activity") expect(current.name).toBe(recorded.name);
        else expect(current).toEqual(recorded);
    };
    const copyStage = [
        { yields: activity("beginAttempt", { attempt: 1 }), answer: oldDone({ copied: [] }) },
        { yields: activity("enterStage", { stage: "copy" }), answer: oldDone({ copied: [] }) },
        { yields: activity("ensureProductFolder"), answer: oldDone({ copied: [] }) },
        { yields: { kind: "all", tasks: TEMPLATES.map((template) => activity("copyTemplateSheet", { template })) } as Scheduled, answer: TEMPLATES.map(() => oldDone()) },
        { yields: activity("verifyCopies"), answer: oldDone() },
    ];
    const REASON = 'The copies do not match: "IND-1042 - Approvals" refers to column "Due" of "IND-1042 - Schedule", which the copy does not have.';
    const PARKED_AT = "2026-12-01T12:00:00.000Z";

    it("replays a history recorded by the old code in the rename stage and goes on to register", () => {
        const remapping = [
            ...copyStage,
            { yields: activity("enterStage", { stage: "rename" }), answer: oldDone({ stage: "rename" }) },
            { yields: activity("remapReferences"), answer: oldDone({ stage: "rename" }) },
        ];
        const midStage = replay(remapping, byName);
        expect(midStage.waitingOn).toEqual(activity("stampSummary"));
        expect(midStage.last).toMatchObject({ state: "running", stage: "remap", sheetsDone: 3 });

        const { waitingOn, last } = replay([...remapping, { yields: activity("stampSummary"), answer: oldDone({ stage: "rename" }) }], byName);
        expect(waitingOn).toEqual(activity("enterStage", { stage: "register" }));
        expect(last).toMatchObject({ state: "running", stage: "register", sheetsDone: 3 });
    });

    it("replays a job the old code parked in the rename stage, and once unparked runs the remap stage again", () => {
        const parkedHistory = [
            ...copyStage,
            { yields: activity("enterStage", { stage: "rename" }), answer: oldDone({ stage: "rename" }) },
            { yields: activity("remapReferences"), answer: { outcome: "permanent", reason: REASON } },
            { yields: activity("parkJob", { reason: REASON, stage: "rename" }), answer: oldDone({ state: "parked", stage: "rename", parkReason: REASON, parkedAt: PARKED_AT }) },
        ];
        const parked = replay(parkedHistory, byName);
        expect(parked.waitingOn).toEqual({ kind: "event", name: "unpark" });
        expect(parked.last).toMatchObject({ state: "parked", stage: "remap", parkReason: REASON });

        const resumed = replay(
            [
                ...parkedHistory,
                { yields: { kind: "event", name: "unpark" }, answer: { parkedAt: PARKED_AT } },
                { yields: activity("resumeJob"), answer: oldDone({ stage: "rename" }) },
            ],
            byName,
        );
        expect(resumed.waitingOn).toEqual(activity("enterStage", { stage: "remap" }));
        expect(resumed.last).toMatchObject({ state: "running", stage: "remap" });
    });

    it("a new attempt of a job whose row still says rename runs the remap stage, not the copy stage", () => {
        const { trace, output } = run({
            job: { state: "parked", stage: "rename" as JobView["stage"], parkReason: "No progress after 3 recoveries", parkedAt: PARKED_AT, copied: TEMPLATES },
            events: [{ parkedAt: PARKED_AT }],
        });
        expect(trace.slice(0, 5)).toEqual(["beginAttempt", "wait for unpark", "resumeJob", "enterStage", "remapReferences"]);
        expect(trace).not.toContain("ensureProductFolder");
        expect(output).toMatchObject({ result: "done" });
    });

    it("the activities the old code scheduled with stage rename still take their input, as the remap stage", () => {
        expect(EnterStageInput.parse({ ...step, stage: "rename" }).stage).toBe("remap");
        expect(ParkInput.parse({ ...step, reason: REASON, stage: "rename" }).stage).toBe("remap");
        expect(() => EnterStageInput.parse({ ...step, stage: "renamed" })).toThrow();
    });
});
