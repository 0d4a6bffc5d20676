/** Bounded concurrency and bounded waits for the benchmarks: every loop stops by itself. */

/** Runs `work(0..count-1)` with at most `inFlight` at once. */
export async function pool(count: number, inFlight: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(inFlight, count) }, async () => {
    while (next < count) {
      const i = next;
      next += 1;
      await work(i);
    }
  }));
}

/** Polls `check` every `everyMs` until it holds, or throws after `maxWaitMs`. */
export async function until(
  check: () => Promise<boolean> | boolean, what: string, { maxWaitMs = 30 * 60_000, everyMs = 100 }: { maxWaitMs?: number; everyMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + maxWaitMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

export const secondsSince = (from: bigint): number => Number(process.hrtime.bigint() - from) / 1e9;
