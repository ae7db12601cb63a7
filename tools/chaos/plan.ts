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
    | PersonAction;

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
    return {
        seed,
        products,
        duplicateActivities,
        copySettleSeconds,
        ...(peer ? { peer } : {}),
        budget,
        ...(webhooks ? { webhooks } : {}),
        steps: steps.sort((a, b) => a.atMs - b.atMs),
    };
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

function drawFaultRules(random: Random): FaultRule[] {
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
            op: random.weighted(FAULT_OPS),
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
