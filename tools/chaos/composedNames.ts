/**
 * The auditor's own reading of the naming rules (it shares no code with the pipeline): a sheet is
 * `<code> <name> - <template sheet>`, the folder `<code> <name>`, each within 50 UTF-16 units;
 * only the product name shrinks — the same text in all seven sheet names, sized for the longest
 * template name — cut between graphemes (at a space when that keeps at least half the room),
 * trailing spaces and punctuation dropped, then "…".
 */
const LIMIT = 50;
const SEPARATOR = " - ";
const ELLIPSIS = "…";
const segmenter = new Intl.Segmenter("en", { granularity: "grapheme" });

export interface ExpectedNames {
    folder: string;
    /** Template sheet name → the product's sheet name. */
    sheets: Map<string, string>;
}

export function expectedNames(code: string, productName: string, templateSheets: readonly string[]): ExpectedNames {
    const trimmedCode = code.trim();
    const name = productName.normalize("NFC").replace(/\s+/gu, " ").trim();
    const longest = Math.max(0, ...templateSheets.map((sheet) => sheet.length));
    const sheetRoom = LIMIT - trimmedCode.length - SEPARATOR.length - longest - 1;
    const inSheets = shorten(name, sheetRoom);
    const inFolder = shorten(name, LIMIT - trimmedCode.length - 1);
    const join = (part: string) => (part ? `${trimmedCode} ${part}` : trimmedCode);
    return {
        folder: join(inFolder),
        sheets: new Map(templateSheets.map((sheet) => [sheet, `${join(inSheets)}${SEPARATOR}${sheet}`])),
    };
}

function shorten(text: string, room: number): string {
    if (text.length <= room) return text;
    if (room <= ELLIPSIS.length) return "";
    const budget = room - ELLIPSIS.length;
    const pieces = [...segmenter.segment(text)].map((piece) => piece.segment);
    let keptCount = 0;
    let length = 0;
    while (keptCount < pieces.length && length + pieces[keptCount]!.length <= budget) {
        length += pieces[keptCount]!.length;
        keptCount += 1;
    }
    let kept = pieces.slice(0, keptCount).join("");
    const cutBeforeSpace = pieces[keptCount] === " ";
    const space = kept.lastIndexOf(" ");
    if (!cutBeforeSpace && space >= room / 2) kept = kept.slice(0, space);
    kept = kept.replace(/[\s\p{P}]+$/u, "");
    return kept ? `${kept}${ELLIPSIS}` : "";
}
