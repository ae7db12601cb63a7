import { createHash } from "node:crypto";
import type { DeclaresFailureKind } from "../failures";

/** Smartsheet refuses longer sheet names (400/1041); folder names are held to the same limit. */
export const MAX_NAME_LENGTH = 50;

const SEPARATOR = " - ";
const ELLIPSIS = "…";

/** The product's part of a name cannot shrink far enough to fit: the input must change. */
export class NameDoesNotFitError extends Error implements DeclaresFailureKind {
    readonly failureKind = "permanent" as const;

    constructor(message: string) {
        super(message);
        this.name = "NameDoesNotFitError";
    }
}

/**
 * Names of everything Sheetwright creates for one product. Pure and deterministic: a recovery
 * run composes exactly the names the first run did, which is what adoption by name relies on.
 */
interface ProductNames {
    folder: string;
    /** Template sheet name → the product's sheet name. */
    sheets: Record<string, string>;
}

/**
 * Composes `<code> <product name> - <template sheet name>` for every template sheet and
 * `<code> <product name>` for the folder, each within `MAX_NAME_LENGTH` UTF-16 code units (the
 * unit Smartsheet counts). Only the product name is shortened — to the same text in all sheet
 * names of the product, so they stay distinct — on grapheme boundaries (never inside a
 * surrogate pair or before a combining mark), with an ellipsis.
 */
export function composeProductNames(productCode: string, productName: string, templateSheetNames: readonly string[]): ProductNames {
    const code = cleanText(productCode);
    if (!code) throw new NameDoesNotFitError("The product code is empty.");
    const suffixes = templateSheetNames.map(cleanText);
    const duplicates = suffixes.filter((suffix, index) => suffixes.indexOf(suffix) !== index);
    if (duplicates.length > 0) {
        throw new NameDoesNotFitError(`Template sheet names must be distinct; repeated: ${[...new Set(duplicates)].join(", ")}.`);
    }
    const longestSuffix = suffixes.reduce((longest, suffix) => Math.max(longest, suffix.length), 0);
    const fixedLength = code.length + SEPARATOR.length + longestSuffix;
    if (fixedLength > MAX_NAME_LENGTH) {
        throw new NameDoesNotFitError(
            `"${code}${SEPARATOR}<sheet>" needs ${fixedLength} characters for the longest template sheet name; ` +
                `Smartsheet allows ${MAX_NAME_LENGTH}. Use a shorter product code or template sheet name.`,
        );
    }
    const cleanName = cleanText(productName);
    // Room for " <name>" between the code and the separator of the longest sheet name.
    const name = fitText(cleanName, MAX_NAME_LENGTH - fixedLength - 1);
    const prefix = name ? `${code} ${name}` : code;
    const sheets: Record<string, string> = {};
    templateSheetNames.forEach((template, index) => (sheets[template] = `${prefix}${SEPARATOR}${suffixes[index]}`));
    // The folder has no suffix to make room for: it keeps as much of the name as fits.
    const folderName = fitText(cleanName, MAX_NAME_LENGTH - code.length - 1);
    return { folder: folderName ? `${code} ${folderName}` : code, sheets };
}

/**
 * Name of the cross-sheet reference that replaces a template's reference in a product's copy:
 * distinct from the copied original (which keeps its name), stable across runs.
 */
export function referenceName(productCode: string, templateReferenceName: string): string {
    const full = `${cleanText(productCode)} ${cleanText(templateReferenceName)}`;
    if (full.length <= MAX_NAME_LENGTH) return full;
    const digest = createHash("sha256").update(full).digest("hex").slice(0, 6);
    return `${fitText(full, MAX_NAME_LENGTH - 7)}~${digest}`;
}

/**
 * NFC, no control characters or lone surrogates, no invisible or bidirectional formatting
 * characters (Unicode Cf: U+202E, U+200B, U+2066…) except the zero-width joiner inside an emoji
 * sequence (👩‍🔬), whitespace runs folded to one space.
 */
export function cleanText(text: string): string {
    return text
        .normalize("NFC")
        .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "")
        .replace(/(?<!\p{Extended_Pictographic}\uFE0F?)\u200D|\u200D(?!\p{Extended_Pictographic})|(?!\u200D)\p{Cf}/gu, "")
        .replace(/[\p{Cc}\p{Zl}\p{Zp}]/gu, " ")
        .replace(/\s+/gu, " ")
        .trim()
        .replace(/(^|\s)\p{M}+/gu, "$1");
}

const graphemes = new Intl.Segmenter("en", { granularity: "grapheme" });

/**
 * `text` if it fits in `room` UTF-16 units; else its longest prefix of whole graphemes that fits
 * with an ellipsis, cut at a word boundary when that keeps at least half the room.
 */
export function fitText(text: string, room: number): string {
    if (text.length <= room) return text;
    if (room <= ELLIPSIS.length) return "";
    let kept = "";
    let next = "";
    for (const { segment } of graphemes.segment(text)) {
        if (kept.length + segment.length > room - ELLIPSIS.length) {
            next = segment;
            break;
        }
        kept += segment;
    }
    const lastSpace = kept.lastIndexOf(" ");
    if (next !== " " && lastSpace >= room / 2) kept = kept.slice(0, lastSpace);
    kept = kept.replace(/[\s\p{P}]+$/u, "");
    return kept ? kept + ELLIPSIS : "";
}
