import type { FolderChild } from "../smartsheet/model";

/**
 * Folder listings shared by the looks of the steps running in one process. After a host dies in
 * the copy stage, every copy's re-run looks in the same product folder at about the same time: a
 * look takes a listing of that folder started no earlier than it can use (`notBefore`), in flight
 * or done, instead of listing the folder again.
 */
export class SharedListings {
    private readonly latest = new Map<string, { startedAt: number; children: Promise<FolderChild[]> }>();

    constructor(
        private readonly now: () => number,
        /** Listings older than this are forgotten (a look past the first moments of a re-run lists for itself anyway). */
        private readonly keepMs = 60_000,
    ) {}

    /**
     * The latest listing of `folderId` if it started at or after `since` (ms), in flight or done;
     * nothing new is listed. What it shows was there, though something may have landed since.
     */
    since(folderId: number, kinds: string, since: number): Promise<FolderChild[]> | undefined {
        const known = this.latest.get(`${folderId}:${kinds}`);
        return known && known.startedAt >= since && this.now() - known.startedAt <= this.keepMs ? known.children : undefined;
    }

    /** A listing of `folderId` started at or after `notBefore` (ms), or a new one made by `list`. */
    list(folderId: number, kinds: string, notBefore: number, list: () => Promise<FolderChild[]>): Promise<FolderChild[]> {
        const now = this.now();
        for (const [key, entry] of this.latest) if (now - entry.startedAt > this.keepMs) this.latest.delete(key);
        const key = `${folderId}:${kinds}`;
        const known = this.latest.get(key);
        if (known && known.startedAt >= notBefore) return known.children;
        const entry = { startedAt: now, children: list() };
        this.latest.set(key, entry);
        entry.children.catch(() => {
            if (this.latest.get(key) === entry) this.latest.delete(key);
        });
        return entry.children;
    }
}
