/** Waits for the work in flight to settle, but no longer than `ms`: what a stopping worker does. */
export async function drain(work: Iterable<Promise<unknown>>, ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...work]), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
}
