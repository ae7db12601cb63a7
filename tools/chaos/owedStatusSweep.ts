/** The host a sweep is fired on, and what its log says of the sweeps that ended. */
export interface SweepingHost {
    fire(name: "intakeSweep"): Promise<void>;
    /** Sweeps this host ran to the end, and sites that failed in them (a site's sweep fails as a whole: a refused call, say). */
    sweepsEnded(): { ended: number; siteFailures: number };
}

export interface OwedStatusSweep {
    /** Sweeps fired. */
    fired: number;
    /** Whether the last one ended with every site swept. */
    clean: boolean;
}

/**
 * Fires the intake sweep and waits until that sweep has ended (the host's `Executed` line), not
 * merely until Smartsheet is quiet: a sweep waiting on the shared budget makes no call for
 * seconds. A sweep whose site failed (its budget refused a call) is fired again, as the timer
 * would, up to `tries` times — after a pause that doubles from `pauseMs`, as the timer's next
 * run comes later: a budget that refuses a call now refuses it again a moment later.
 */
export async function sweepUntilClean(
    host: SweepingHost,
    options: { tries?: number; perSweepMs?: number; pollMs?: number; pauseMs?: number; sleep?: (ms: number) => Promise<void> } = {},
): Promise<OwedStatusSweep> {
    const { tries = 4, perSweepMs = 60_000, pollMs = 200, pauseMs = 1_000 } = options;
    const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
    let fired = 0;
    for (;;) {
        const before = host.sweepsEnded();
        await host.fire("intakeSweep");
        fired += 1;
        let waited = 0;
        let now = host.sweepsEnded();
        while (now.ended === before.ended && waited < perSweepMs) {
            await sleep(pollMs);
            waited += pollMs;
            now = host.sweepsEnded();
        }
        const clean = now.ended > before.ended && now.siteFailures === before.siteFailures;
        if (clean || fired >= tries) return { fired, clean };
        await sleep(pauseMs * 2 ** (fired - 1));
    }
}

/** Counts what a host's log line says of sweeps: one that ended, and a site that failed in one. */
export function sweepLineKind(line: string): "ended" | "siteFailed" | undefined {
    if (/Executed 'Functions\.intakeSweep' \(/.test(line)) return "ended";
    if (/intake sweep: site .* failed/.test(line)) return "siteFailed";
    return undefined;
}
