/**
 * The harness's own rule for text it did not write (host log lines, customer names and codes in
 * plans, findings and notes): no control, bidi or invisible character reaches the terminal raw.
 * It shares no code with the app's rule, so a gap in one is not hidden by the other.
 */

/**
 * Characters no terminal or log line may receive from customer text: C0 and C1 controls (ESC,
 * BEL, CR, LF…; tab allowed), bidi controls, zero-width and other invisible format characters. A
 * zero width joiner between two pictographs (👩‍🔬) is part of an emoji, not hidden text.
 */
const RAW = String.raw`[\u0000-\u0008\u000A-\u001F\u007F-\u009F\u00AD\u061C\u180E\u200B\u200C\u200E\u200F\u2028\u2029\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]|(?<!\p{Extended_Pictographic}\uFE0F?)\u200D|\u200D(?!\p{Extended_Pictographic})`;

/** Whether a line holds a raw control, bidi or invisible character. */
export const RAW_CONTROL = new RegExp(RAW, "u");
const RAW_CONTROLS = new RegExp(RAW, "gu");

/** `text` with every such character written as a visible `\u{…}` escape; one line stays one line. */
export function inert(text: string): string {
    return text.replace(RAW_CONTROLS, (character) => `\\u{${character.codePointAt(0)!.toString(16).toUpperCase()}}`);
}
