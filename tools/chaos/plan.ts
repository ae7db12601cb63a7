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
}

/** What people do to an intake row or the template while a job runs. */
export type PersonAction =
    | { kind: "deleteIntakeRow"; product: number }
    | { kind: "editProductName"; product: number; name: string }
    | { kind: "untickApproved"; product: number }
    | { kind: "typeStatus"; product: number; text: string }
    | { kind: "editTemplate"; edit: "addReferenceAndFormula" | "insertRows" };

export type Action =
    | { kind: "sweep"; overlapping: boolean }
    | { kind: "reaper" }
    | { kind: "faults"; rules: FaultRule[] }
    | { kind: "duplicateMessages"; product: number; copies: number }
    | { kind: "killHost"; downMs: number }
    | { kind: "restartAzurite"; downMs: number }
    | { kind: "unparkRacingReaper" }
    | PersonAction;

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
    steps: Step[];
}

/** The app's client-side call timeout in the harness; delays past it make late writes. */
export const CALL_TIMEOUT_SECONDS = 1;
/** How long an unanswered write may still land (the app's LATE_WRITE_HORIZON_SECONDS). */
export const LATE_WRITE_HORIZON_SECONDS = 4;

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

export interface PlanOptions {
    products: number;
}

/** Draws the whole schedule from its seed, before anything runs: the plan is the replay. */
export function planSchedule(seed: number, options: PlanOptions): Plan {
    const random = new Random(seed);
    const products = drawProducts(random, options.products, seed);
    const steps: Step[] = [{ atMs: 0, action: { kind: "sweep", overlapping: false } }];
    return {
        seed,
        products,
        duplicateActivities: "off",
        copySettleSeconds: random.int(0, 1),
        steps,
    };
}

function drawProducts(random: Random, count: number, seed: number): ProductRequest[] {
    const products: ProductRequest[] = [];
    for (let index = 0; index < count; index += 1) {
        const line = random.pick(LINES);
        const code = `${line === "Industrial" ? "IND" : "CON"}-${(seed % 9000) + 1000}-${index + 1}`;
        products.push({ code, name: random.pick(NAMES), line, valid: true });
    }
    return products;
}

/** One line of what a plan does, for the report. */
export function summarisePlan(plan: Plan): string {
    const counts = new Map<string, number>();
    for (const { action } of plan.steps) counts.set(action.kind, (counts.get(action.kind) ?? 0) + 1);
    const parts = [...counts].map(([kind, count]) => (count > 1 ? `${kind}×${count}` : kind));
    if (plan.duplicateActivities !== "off") parts.push(`activities×2 ${plan.duplicateActivities}`);
    const invalid = plan.products.filter((product) => !product.valid).length;
    return `${plan.products.length} products${invalid ? ` (${invalid} invalid)` : ""}: ${parts.join(", ")}`;
}
