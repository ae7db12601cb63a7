const TOKEN_ALPHABET = "23456789BCDFGHJMPQRVWXcfghjmpqrvwx";

/**
 * Seeded source of Smartsheet-looking ids (16 digits, within JavaScript's safe integers) and
 * permalink tokens. The same seed yields the same sequence, so a reset reproduces every seed id.
 */
export class IdSource {
    private state: number;
    private readonly issued = new Set<number>();

    constructor(seed: number) {
        this.state = seed >>> 0;
    }

    nextId(): number {
        for (;;) {
            const high = this.next32() & 0x1fffff;
            const value = 1_000_000_000_000_000 + ((high * 2 ** 32 + this.next32()) % 8_000_000_000_000_000);
            if (!this.issued.has(value)) {
                this.issued.add(value);
                return value;
            }
        }
    }

    token(length: number): string {
        let text = "";
        for (let i = 0; i < length; i++) text += TOKEN_ALPHABET[this.next32() % TOKEN_ALPHABET.length];
        return text;
    }

    // mulberry32
    private next32(): number {
        this.state = (this.state + 0x6d2b79f5) >>> 0;
        let t = this.state;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return (t ^ (t >>> 14)) >>> 0;
    }
}
