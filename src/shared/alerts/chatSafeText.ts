import { cleanText } from "../naming/productNames";

/**
 * Customer text as inert data for a chat tool: no mention (`@channel`, `<@U123>`, `<!here>`), no
 * link or markup (`<url|text>`, `*bold*`, `[x](y)`, `# heading`), no invisible characters. Markup
 * characters become their full-width twins, which read the same and mean nothing.
 */
export function chatSafeText(text: string): string {
    return cleanText(text).replace(/[@<>&*_~`|[\]#]/g, (character) => String.fromCodePoint(character.codePointAt(0)! + 0xfee0));
}
