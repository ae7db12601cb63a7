import { z } from "zod";

/**
 * Test switch: status reads (`GET /runtime/webhooks/durabletask/instances/{id}`) of the instances
 * whose id starts with one of these prefixes answer 500, as a storage error in the real
 * extension's status query would. Other instances read normally.
 */
export class StatusReadFaults {
    #prefixes: string[] = [];

    static readonly body = z.strictObject({ instanceIdPrefixes: z.array(z.string().min(1).max(256)).max(100) });

    set(prefixes: readonly string[]): string[] {
        this.#prefixes = [...new Set(prefixes)];
        return this.list();
    }

    list(): string[] {
        return [...this.#prefixes];
    }

    fails(instanceId: string): boolean {
        return this.#prefixes.some((prefix) => instanceId.startsWith(prefix));
    }
}
