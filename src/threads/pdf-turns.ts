import { availableParallelism } from 'node:os';
import { BusyError } from '../domain/errors';

/**
 * PDF work of this process (stamping a buyer's copy, drawing dispute evidence) runs one task a core:
 * each holds a parsed or laid-out document in a thread of its own, and more threads than cores only
 * share the same CPU and add their heaps. The rest wait their turn, first come first served.
 */
export const PDF_TASKS_AT_ONCE = Math.max(1, availableParallelism());

let running = 0;
const waiting: Array<() => void> = [];

/**
 * Runs `work` in its turn. `maxWaiting`: a task that would find more than this many waiting before
 * it is refused at once with `busy` (503 with Retry-After), rather than wait past its requester's
 * patience while holding its input in memory; unset, it always waits.
 */
export async function inPdfTurn<T>(work: () => Promise<T>, limits: { maxWaiting?: number; busy?: string } = {}): Promise<T> {
  if (running < PDF_TASKS_AT_ONCE) running += 1;
  else if (limits.maxWaiting !== undefined && waiting.length >= limits.maxWaiting) throw new BusyError(limits.busy ?? 'too much PDF work at once; try again shortly', 2);
  else await new Promise<void>((resolve) => waiting.push(resolve));
  try {
    return await work();
  } finally {
    // A turn is handed over with its place still counted, so nobody takes it in between.
    const next = waiting.shift();
    if (next) next();
    else running -= 1;
  }
}
