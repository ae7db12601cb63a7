import { Random } from "./random";

/** A fault rule as the simulator's `POST /__sim/faults` takes it. */
export interface FaultRule {
    op: string;
    kind: "rate429" | "error4002" | "commitThenError4002" | "commitThenHang" | "delay" | "html502" | "error1004";
    times: number;
    skip: number;
    delayMs: number;
}

export interface ProductRequest {
    code: string;
    name: string;
    line: string;
    /** The request is valid and should be provisioned; otherwise the sweep must reject it. */
    valid: boolean;
    /** What the requester typed into the Status cell before any sweep saw the row. */
    typedStatus?: string;
    /**
     * Approved once the schedule is at rest, with the webhook on and no sweep fired: the fast path
     * alone must give it a job within one safety-net interval.
     */
    typedAtRest?: true;
}

/** What people do to an intake row or the template while a job runs. */
export type PersonAction =
    | { kind: "deleteIntakeRow"; product: number }
    | { kind: "editProductName"; product: number; name: string }
    | { kind: "untickApproved"; product: number }
    | { kind: "typeStatus"; product: number; text: string }
    | { kind: "editTemplate"; edit: TemplateEdit };

/**
 * `referenceShared` and `referenceOtherProduct`: a template sheet (Risk Register) gets its only
 * reference, to a sheet outside the template folder, and a formula using it — a shared sheet (the
 * Filing Index: allowed, the product ends done with it intact) or a sheet of a product already
 * made (as when a template was built from a product: a product copied after it must park, or end
 * with no formula reaching another product).
 */
export type TemplateEdit = "addReferenceAndFormula" | "insertRows" | "referenceShared" | "referenceOtherProduct";

/** What a template reference outside the template is called, and the sheet it holds it on. */
export const OUTSIDE_REFERENCE = { holder: "Risk Register", name: "Filed Codes", column: "Mitigation" } as const;

export type Action =
    | { kind: "sweep"; overlapping: boolean }
    /** `host` 1 is the second host, when the plan has one. */
    | { kind: "reaper"; host: 0 | 1 }
    | { kind: "faults"; rules: FaultRule[] }
    | { kind: "duplicateMessages"; product: number; copies: number }
    | { kind: "killHost"; downMs: number }
    | { kind: "restartAzurite"; downMs: number }
    | { kind: "unparkRacingReaper" }
    /** The product's intake row becomes one the app may not write (locked), to the end of the schedule. */
    | { kind: "lockIntakeRow"; product: number }
    /** The alert webhook accepts and never answers, or answers 503, for a while. */
    | { kind: "webhookFault"; mode: "hang" | "error5xx"; forMs: number }
    /** The first host's status reads of the product's orchestrations fail, to the end of the schedule. */
    | { kind: "failStatusReads"; product: number }
    /** Smartsheet's callbacks to the app dropped, sent twice, delayed or sent out of order (the simulator's webhook faults). */
    | { kind: "callbackFaults"; rules: CallbackFaultRule[] }
    /** Smartsheet disables the intake webhook behind the app's back, with a status the app may re-enable. */
    | { kind: "disableIntakeWebhook"; status: "DISABLED_CALLBACK_FAILED" | "DISABLED_VERIFICATION_FAILED" }
    /** Someone posts a callback to the receiver that Smartsheet did not send. */
    | { kind: "forgedCallback"; forgery: Forgery }
    | ConvergenceAction
    | PersonAction;

/** What a person changes of the template before (`changeTemplate`) or during (`editTemplateAgain`) a convergence. */
export type TemplateChange = "addColumn" | "columnFormula" | "addSummaryField";
/** What a customer changes of their product's copies: a cell's value, a column's formula, a column of their own. */
export type CustomerEdit = "cellValue" | "columnFormula" | "ownColumn";
export type ConvergenceDecision = "keep-product" | "take-template";

/** The people's side of a convergence: the template changed, the apply, a second change mid-way, customers' edits, a decision. */
export type ConvergenceAction =
    | { kind: "changeTemplate"; changes: TemplateChange[] }
    /** `POST /api/converge`, once or twice at the same moment; a person sends it again until it is answered. */
    | { kind: "convergeApply"; concurrent: boolean }
    | { kind: "editTemplateAgain"; change: TemplateChange }
    /** `takesTemplateTitle`: the customer's own column takes the title the template's change adds (a conflict no decision but keep-product settles). */
    | { kind: "customerEditsProduct"; product: number; edit: CustomerEdit; takesTemplateTitle?: boolean }
    /** A person unparks a product parked on its convergence, with a decision (take-template refused: keep-product). */
    | { kind: "unparkDecision"; decision: ConvergenceDecision; jobKey?: string };

/**
 * Template convergence after the products are done: `before` in order (customers' edits, then the
 * template change), then `steps` from the apply on (the apply at 0, faults, crashes, a second
 * template change and customers' edits mid-way), and, as products park on conflicts, `decision`.
 */
export interface ConvergencePlan {
    before: ConvergenceAction[];
    steps: Step[];
    decision?: ConvergenceDecision;
}

/** A fault rule as the simulator's `POST /__sim/webhookFaults` takes it. */
export interface CallbackFaultRule {
    kind: "drop" | "duplicate" | "delay" | "reorder";
    times: number;
    skip: number;
    delayMs: number;
}

/** `badSignature`: the app's own webhook id, signed with another secret; `unknownWebhook`: an id that is not the app's. */
export type Forgery = "badSignature" | "unknownWebhook";

export interface Step {
    atMs: number;
    action: Action;
}

export interface Plan {
    seed: number;
    products: ProductRequest[];
    /** The local host's test switch: every activity runs twice. */
    duplicateActivities: "off" | "sequential" | "concurrent";
    copySettleSeconds: number;
    /** A second host on the same task hub, Azurite and simulator, its clock this far off. */
    peer?: { clockOffsetMs: number };
    /** `tight`: a rate limit per token the schedule reaches, so the shared budget is what keeps it under. */
    budget: "roomy" | "tight";
    /** Smartsheet's webhooks on (the app's fast path), delivering after this debounce; the sweeps stay the net under them. */
    webhooks?: { debounceMs: number };
    steps: Step[];
    /** The products, done, are brought to a changed template while things break. */
    convergence?: ConvergencePlan;
}

/** The app's client-side call timeout in the harness; delays past it make late writes. */
export const CALL_TIMEOUT_SECONDS = 1;
/** How long an unanswered write may still land (the app's LATE_WRITE_HORIZON_SECONDS). */
export const LATE_WRITE_HORIZON_SECONDS = 4;
/** The harness's MAX_CLOCK_SKEW_SECONDS, in ms: the skew between hosts the app must absorb. */
export const MAX_CLOCK_SKEW_MS = 500;
/** The plan's actions happen within this window after the first sweep. */
const ACTIVE_WINDOW_MS = 6_000;
/**
 * The routine sweep's interval (production's half hour) in the harness's compressed time: an
 * approval typed with the webhook on must have its job within it, though no sweep is fired.
 */
export const SAFETY_NET_INTERVAL_MS = 10_000;

const LINES = ["Industrial", "Consumer"] as const;
const NAMES = [
    "Hydraulic Pump Assembly",
    "Smart Kettle",
    "Precision Torque Wrench Calibration Kit with Extended Warranty and Carry Case",
    "Café Crème Frother",
    "Field Lab 👩‍🔬 Sensor Pack for Harsh Environments and Deep Mines",
    "漢字 Water Filter",
    "Travel Mug",
    "Ultra-Quiet Brushless Ventilation Fan — Series 7 (Marine Grade)",
];

/** Operations the app calls, weighted by how much can go wrong there. */
const FAULT_OPS: ReadonlyArray<readonly [string, number]> = [
    ["copySheet", 6],
    ["createFolder", 3],
    ["addRows", 3],
    ["getFolderChildren", 2],
    ["getSheet", 2],
    ["updateRows", 2],
    ["createCrossSheetReference", 2],
    ["updateColumn", 1],
    ["updateSummaryFields", 1],
    ["addSummaryFields", 1],
    ["deleteSheet", 1],
    ["deleteFolder", 1],
    ["deleteRows", 1],
    ["listCrossSheetReferences", 1],
    ["getSummary", 1],
];

export interface PlanOptions {
    products: number;
    /** False: no schedule converges (the plans drawn before convergence joined). */
    convergence?: boolean;
}

/** Draws the whole schedule from its seed, before anything runs: the plan is the replay. */
export function planSchedule(seed: number, options: PlanOptions): Plan {
    const random = new Random(seed);
    const products = drawProducts(random, options.products, seed);
    const valid = products.flatMap((product, index) => (product.valid ? [index] : []));
    const at = () => random.int(0, ACTIVE_WINDOW_MS);
    const steps: Step[] = [{ atMs: 0, action: { kind: "sweep", overlapping: false } }];
    const add = (action: Action, atMs = at()) => steps.push({ atMs, action });

    for (let i = random.int(0, 2); i > 0; i -= 1) add({ kind: "sweep", overlapping: random.chance(0.5) });
    // Drawn before the steps that may name it; a skew beyond the allowance in one peer of four (the app must warn).
    const peer = random.chance(0.3) ? { clockOffsetMs: drawClockOffset(random) } : undefined;
    const host = (): 0 | 1 => (peer && random.chance(0.5) ? 1 : 0);
    for (let i = random.int(0, 3); i > 0; i -= 1) add({ kind: "reaper", host: host() });
    const faultEpisodes = Array.from({ length: random.int(0, 3) }, () => ({ atMs: at(), rules: drawFaultRules(random) }));
    for (const episode of faultEpisodes) add({ kind: "faults", rules: episode.rules }, episode.atMs);
    if (random.chance(0.4)) add({ kind: "duplicateMessages", product: random.pick(valid), copies: random.int(1, 3) });
    if (random.chance(0.35)) add({ kind: "killHost", downMs: random.int(200, 1500) });
    if (random.chance(0.1)) add({ kind: "restartAzurite", downMs: random.int(300, 1000) });
    const parking = faultEpisodes.find((episode) => episode.rules.some((rule) => rule.kind === "error1004"));
    if (parking && random.chance(0.7)) add({ kind: "unparkRacingReaper" }, parking.atMs + random.int(1_000, 4_000));

    if (random.chance(0.15)) add({ kind: "deleteIntakeRow", product: random.pick(valid) });
    if (random.chance(0.2)) add({ kind: "editProductName", product: random.pick(valid), name: random.pick(NAMES) });
    if (random.chance(0.15)) add({ kind: "untickApproved", product: random.pick(valid) });
    if (random.chance(0.2)) add({ kind: "typeStatus", product: random.pick(valid), text: random.pick(TYPED_STATUSES) });
    if (random.chance(0.2)) add({ kind: "editTemplate", edit: random.pick(["addReferenceAndFormula", "insertRows", "referenceShared", "referenceOtherProduct"] as const) });
    if (random.chance(0.15)) add({ kind: "lockIntakeRow", product: random.pick(valid) });
    if (random.chance(0.2)) add({ kind: "webhookFault", mode: random.pick(["hang", "error5xx"] as const), forMs: random.int(1_000, 5_000) });
    if (random.chance(0.15)) add({ kind: "failStatusReads", product: random.pick(valid) });

    const duplicateActivities = random.weighted([["off", 5], ["sequential", 2], ["concurrent", 3]] as const);
    const copySettleSeconds = random.int(0, 1);
    const budget = random.chance(peer ? 0.5 : 0.15) ? "tight" : "roomy";
    // Drawn last, so a seed's other draws are what they were before webhooks joined the plan.
    const webhooks = random.chance(0.5) ? { debounceMs: random.int(200, 800) } : undefined;
    if (webhooks) {
        // The callback of the seeded approvals starts the schedule; the timer's sweeps stay, drawn above.
        steps.shift();
        if (random.chance(0.6)) add({ kind: "callbackFaults", rules: drawCallbackFaultRules(random) });
        if (random.chance(0.3)) add({ kind: "disableIntakeWebhook", status: random.pick(["DISABLED_CALLBACK_FAILED", "DISABLED_VERIFICATION_FAILED"] as const) });
        if (random.chance(0.4)) add({ kind: "forgedCallback", forgery: random.pick(["badSignature", "unknownWebhook"] as const) });
        products.push(probeRequest(options.products, seed));
    }
    // Drawn after everything else, so a seed's other draws are what they were before convergence joined the plan.
    const convergence = options.convergence !== false && random.chance(CONVERGENCE_SHARE) ? drawConvergence(random, valid) : undefined;
    return {
        seed,
        products,
        duplicateActivities,
        copySettleSeconds,
        ...(peer ? { peer } : {}),
        budget,
        ...(webhooks ? { webhooks } : {}),
        steps: steps.sort((a, b) => a.atMs - b.atMs),
        ...(convergence ? { convergence } : {}),
    };
}

/** The share of schedules that converge their products to a changed template. */
export const CONVERGENCE_SHARE = 0.45;
/** The convergence's faults and crashes happen within this window after the apply. */
const CONVERGENCE_WINDOW_MS = 2_500;
/** What the convergence calls, weighted as FAULT_OPS. */
const CONVERGENCE_FAULT_OPS: ReadonlyArray<readonly [string, number]> = [
    ["addColumn", 4],
    ["updateColumn", 3],
    ["addSummaryFields", 3],
    ["getColumns", 2],
    ["getSheet", 2],
    ["getSummary", 1],
    ["createCrossSheetReference", 1],
    ["getFolderChildren", 1],
];

function drawConvergence(random: Random, valid: readonly number[]): ConvergencePlan {
    const all: TemplateChange[] = ["addColumn", "columnFormula", "addSummaryField"];
    const changes = all.filter(() => random.chance(0.6));
    if (changes.length === 0) changes.push(random.pick(all));
    const before: ConvergenceAction[] = [];
    // Customers' edits before the apply: a formula the template changes too is a conflict (the product parks), a title it adds as well.
    for (let i = random.int(0, 2); i > 0; i -= 1) {
        const edit = random.weighted<CustomerEdit>([["cellValue", 2], ["columnFormula", changes.includes("columnFormula") ? 4 : 1], ["ownColumn", 2]]);
        const takesTemplateTitle = edit === "ownColumn" && changes.includes("addColumn") && random.chance(0.4);
        before.push({ kind: "customerEditsProduct", product: random.pick(valid), edit, ...(takesTemplateTitle ? { takesTemplateTitle } : {}) });
    }
    before.push({ kind: "changeTemplate", changes });
    const steps: Step[] = [{ atMs: 0, action: { kind: "convergeApply", concurrent: random.chance(0.3) } }];
    const at = () => random.int(200, CONVERGENCE_WINDOW_MS);
    if (random.chance(0.3)) steps.push({ atMs: at(), action: { kind: "convergeApply", concurrent: false } });
    for (let i = random.int(0, 2); i > 0; i -= 1) steps.push({ atMs: at(), action: { kind: "faults", rules: drawFaultRules(random, CONVERGENCE_FAULT_OPS) } });
    if (random.chance(0.35)) steps.push({ atMs: at(), action: { kind: "killHost", downMs: random.int(200, 1500) } });
    if (random.chance(0.1)) steps.push({ atMs: at(), action: { kind: "restartAzurite", downMs: random.int(300, 1000) } });
    if (random.chance(0.2)) steps.push({ atMs: at(), action: { kind: "duplicateMessages", product: random.pick(valid), copies: random.int(1, 2) } });
    if (random.chance(0.4)) steps.push({ atMs: at(), action: { kind: "editTemplateAgain", change: random.pick(all) } });
    if (random.chance(0.4)) {
        // Mid-way, a formula only where the template changes none: a customer's edit racing the app's write of the same column is a race no one can win.
        const edits: CustomerEdit[] = changes.includes("columnFormula") ? ["cellValue", "ownColumn"] : ["cellValue", "columnFormula", "ownColumn"];
        steps.push({ atMs: at(), action: { kind: "customerEditsProduct", product: random.pick(valid), edit: random.pick(edits) } });
    }
    // A second change comes after every apply (each person applies the template they changed, and no more).
    const lastApply = Math.max(...steps.filter((step) => step.action.kind === "convergeApply").map((step) => step.atMs));
    for (const step of steps) if (step.action.kind === "editTemplateAgain") step.atMs = Math.max(step.atMs, lastApply + 100);
    const decision = random.weighted<ConvergenceDecision | "none">([["keep-product", 2], ["take-template", 2], ["none", 1]]);
    return { before, steps: steps.sort((a, b) => a.atMs - b.atMs), ...(decision === "none" ? {} : { decision }) };
}

function drawCallbackFaultRules(random: Random): CallbackFaultRule[] {
    return Array.from({ length: random.int(1, 2) }, () => {
        const kind = random.pick(["drop", "duplicate", "delay", "reorder"] as const);
        return { kind, times: random.int(1, 2), skip: random.int(0, 2), delayMs: kind === "delay" ? random.int(500, 3_000) : 0 };
    });
}

/** A valid request, approved at rest to check the fast path alone; its code is the schedule's next. */
function probeRequest(count: number, seed: number): ProductRequest {
    return { code: productCode("Industrial", seed, count + 1), name: "Travel Mug", line: "Industrial", valid: true, typedAtRest: true };
}

/** Within the allowance mostly; beyond it (3–8 times) in one of four, where the app must warn with the figure. */
function drawClockOffset(random: Random): number {
    const sign = random.chance(0.5) ? 1 : -1;
    return sign * (random.chance(0.25) ? random.int(3 * MAX_CLOCK_SKEW_MS, 8 * MAX_CLOCK_SKEW_MS) : random.int(0, MAX_CLOCK_SKEW_MS));
}

/** Customer text a terminal or a log must never receive raw: window title, clear screen, bidi override, zero width, a forged line. */
export const HOSTILE_FRAGMENTS = [
    "\u001b]0;pwned\u0007",
    "\u001b[2J\u001b[H",
    "\u202Egnp.exe",
    "Zero\u200BWidth",
    "\nFORGED-LINE done IND-0000 forged",
    "\r\u001b[31mRED\u001b[0m",
] as const;
/** A line of output that starts with this came from a newline in customer text. */
export const FORGED_LINE_MARKER = "FORGED-LINE";

const TYPED_STATUSES = ["Done", "Cancelled", "In progress — copy 7/7", "Stalled — waiting for legal", "please hurry"];

function drawFaultRules(random: Random, ops: ReadonlyArray<readonly [string, number]> = FAULT_OPS): FaultRule[] {
    return Array.from({ length: random.int(1, 2) }, () => {
        const kind = random.weighted<FaultRule["kind"]>([
            ["rate429", 2],
            ["error4002", 2],
            ["commitThenError4002", 3],
            ["commitThenHang", 3],
            ["delay", 3],
            ["html502", 2],
            ["error1004", 1],
        ]);
        return {
            op: random.weighted(ops),
            kind,
            // A 429 burst outlasts a claim: the SDK backs off 2, 4, 8 s.
            times: kind === "rate429" ? random.int(2, 3) : random.int(1, 2),
            skip: random.int(0, 6),
            delayMs: kind === "delay" ? random.int(CALL_TIMEOUT_SECONDS * 1000 + 200, (LATE_WRITE_HORIZON_SECONDS - 0.5) * 1000) : 0,
        };
    });
}

/** A schedule's product codes: the line's prefix, four digits of the seed, the request's number (1-based). */
function productCode(line: (typeof LINES)[number], seed: number, number: number): string {
    return `${line === "Industrial" ? "IND" : "CON"}-${(seed % 9000) + 1000}-${number}`;
}

function drawProducts(random: Random, count: number, seed: number): ProductRequest[] {
    const products: ProductRequest[] = [];
    for (let index = 0; index < count; index += 1) {
        const line = random.pick(LINES);
        const code = productCode(line, seed, index + 1);
        const typedStatus = random.chance(0.05) ? random.pick(TYPED_STATUSES) : undefined;
        const request: ProductRequest = { code, name: random.pick(NAMES), line, valid: true, ...(typedStatus ? { typedStatus } : {}) };
        // The first request stays valid, so the people's actions always have a product to act on.
        products.push(random.chance(0.15) ? hostile(random, request, index > 0) : request);
    }
    if (count > 1 && random.chance(0.2)) {
        // The last request is one the sweep must reject: a line with no folder, or a code taken.
        const last = products[count - 1]!;
        const { typedStatus: _, ...request } = last;
        products[count - 1] = random.chance(0.5) ? { ...request, line: "Aerospace", valid: false } : { ...request, code: products[0]!.code, valid: false };
    }
    return products;
}

/**
 * Customer text with control, bidi and invisible characters: in the name the request stays valid
 * (letters remain); in the code or the line it must be rejected, and the reason quotes it.
 */
function hostile(random: Random, request: ProductRequest, mayBeInvalid: boolean): ProductRequest {
    const fragment = random.pick(HOSTILE_FRAGMENTS);
    const where = mayBeInvalid ? random.weighted([["name", 3], ["code", 1], ["line", 1]] as const) : "name";
    if (where === "name") return { ...request, name: `${request.name}${fragment}` };
    if (where === "code") return { ...request, code: `${request.code}${fragment}`, valid: false };
    return { ...request, line: `${request.line}${fragment}`, valid: false };
}

/** One line of what a plan does, for the report. */
export function summarisePlan(plan: Plan): string {
    const counts = new Map<string, number>();
    for (const { action } of plan.steps) counts.set(action.kind, (counts.get(action.kind) ?? 0) + 1);
    const parts = [...counts].map(([kind, count]) => (count > 1 ? `${kind}×${count}` : kind));
    if (plan.duplicateActivities !== "off") parts.push(`activities×2 ${plan.duplicateActivities}`);
    if (plan.peer) parts.push(`second host ${plan.peer.clockOffsetMs >= 0 ? "+" : ""}${plan.peer.clockOffsetMs} ms`);
    if (plan.budget === "tight") parts.push("tight rate limit");
    if (plan.webhooks) parts.push(`webhooks (debounce ${plan.webhooks.debounceMs} ms, one approval at rest)`);
    if (plan.convergence) parts.push(`converges [${summariseConvergence(plan.convergence)}]`);
    const invalid = plan.products.filter((product) => !product.valid).length;
    const typed = plan.products.filter((product) => product.typedStatus).length;
    const hostileText = plan.products.filter((product) => [product.code, product.name, product.line].some(hasHostileText)).length;
    const notes = [invalid ? `${invalid} invalid` : "", typed ? `${typed} with a typed status` : "", hostileText ? `${hostileText} with hostile text` : ""]
        .filter(Boolean)
        .join(", ");
    return `${plan.products.length} products${notes ? ` (${notes})` : ""}: ${parts.join(", ")}`;
}

export function hasHostileText(text: string): boolean {
    return HOSTILE_FRAGMENTS.some((fragment) => text.includes(fragment));
}

function summariseConvergence(convergence: ConvergencePlan): string {
    const counts = new Map<string, number>();
    for (const action of [...convergence.before, ...convergence.steps.map((step) => step.action)]) {
        const label =
            action.kind === "changeTemplate"
                ? `changeTemplate(${action.changes.join("+")})`
                : action.kind === "customerEditsProduct"
                  ? `customerEditsProduct(${action.edit})`
                  : action.kind === "editTemplateAgain"
                    ? `editTemplateAgain(${action.change})`
                    : action.kind === "convergeApply" && action.concurrent
                      ? "convergeApply×2 concurrent"
                      : action.kind;
        counts.set(label, (counts.get(label) ?? 0) + 1);
    }
    const parts = [...counts].map(([label, count]) => (count > 1 ? `${label}×${count}` : label));
    if (convergence.decision) parts.push(`unparkDecision(${convergence.decision})`);
    return parts.join(", ");
}
