/**
 * What a terminal or a log viewer would act on instead of showing, or show as nothing: C0 and C1
 * control characters and DEL (a newline that starts a forged line, ESC and CSI that open escape
 * sequences), the line and paragraph separators, lone surrogates, and every invisible or
 * bidirectional formatting character (Unicode Cf and Default_Ignorable_Code_Point: U+202E,
 * U+2066, U+200B, U+FEFF, U+3164…).
 */
const HIDDEN = String.raw`[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]`;

/**
 * The invisible characters that are part of a visible emoji, and so stay: a zero-width joiner
 * between two pictographs (👩‍🔬, 👩🏽‍🔬, 🏳️‍⚧️), a variation selector right after an emoji (❤️, 1️⃣),
 * and a flag's tag sequence (🏴󠁧󠁢󠁳󠁣󠁴󠁿). A joiner, selector or tag anywhere else is escaped.
 */
const EMOJI_GLUE = String.raw`(?<=[\p{Extended_Pictographic}\p{Emoji_Modifier}]\uFE0F?)\u200D(?=\p{Extended_Pictographic})|(?<=\p{Emoji})[\uFE0E\uFE0F]|\u{1F3F4}[\u{E0030}-\u{E0039}\u{E0061}-\u{E007A}]{1,7}\u{E007F}`;

const SCAN = new RegExp(`(${EMOJI_GLUE})|${HIDDEN}`, "gu");

/**
 * Text from outside the app (a customer's intake row, a caller's request) made inert for a
 * terminal or a log: every hidden character becomes a visible escape such as `\u000a`, `\u202e`
 * or `\u{e0041}`; everything printable, accents, CJK and emoji included, stays as it is. The
 * result is one line that shows what was typed and does nothing else.
 */
export function inertText(text: string): string {
    return text.replace(SCAN, (match: string, glue: string | undefined) => glue ?? escaped(match));
}

/** A message as one log line, whatever it quotes: `inertText`, the one rule for both. */
export function logLine(message: string): string {
    return inertText(message);
}

/**
 * A JSON value as JSON text that is inert on a terminal and still parses to the same value: the
 * characters `JSON.stringify` leaves raw (bidi controls, C1 controls, invisible characters) are
 * written as JSON `\uXXXX` escapes. Its newlines are the indentation's own: a newline in a string
 * is already `\n`.
 */
export function inertJson(value: unknown, indent?: number): string {
    return (JSON.stringify(value, null, indent) ?? "null").replace(SCAN, (match: string, glue: string | undefined) =>
        glue !== undefined || match === "\n" ? match : jsonEscaped(match),
    );
}

/** A parsed JSON value with every string in it, keys too, made inert: for views built from its fields. */
export function inertValue(value: unknown): unknown {
    if (typeof value === "string") return inertText(value);
    if (Array.isArray(value)) return value.map(inertValue);
    if (value !== null && typeof value === "object") {
        return Object.fromEntries(Object.entries(value).map(([key, field]) => [inertText(key), inertValue(field)]));
    }
    return value;
}

/** Whether text holds anything `inertText` would have to escape: for refusing it at the door. */
export function hasHiddenCharacters(text: string): boolean {
    return inertText(text) !== text;
}

function escaped(character: string): string {
    const code = character.codePointAt(0)!;
    return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, "0")}`;
}

function jsonEscaped(character: string): string {
    let units = "";
    for (let index = 0; index < character.length; index += 1) units += `\\u${character.charCodeAt(index).toString(16).padStart(4, "0")}`;
    return units;
}
