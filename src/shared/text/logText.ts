/** C0 and C1 control characters, DEL, and the line and paragraph separators. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
/** Invisible and bidirectional formatting characters (Unicode category Cf). */
const FORMAT = /\p{Cf}/gu;

/**
 * A message as one log line, whatever it quotes: control characters (a newline that would start
 * a forged line, an escape sequence for a terminal) and invisible or bidirectional formatting
 * characters become visible escapes such as `\u000a`.
 */
export function logLine(message: string): string {
    return message.replace(CONTROL, escape).replace(FORMAT, escape);
}

function escape(character: string): string {
    return `\\u${character.codePointAt(0)!.toString(16).padStart(4, "0")}`;
}

/** Whether text holds anything `logLine` would have to escape: for refusing it at the door. */
export function hasHiddenCharacters(text: string): boolean {
    return new RegExp(CONTROL.source).test(text) || new RegExp(FORMAT.source, "u").test(text);
}
