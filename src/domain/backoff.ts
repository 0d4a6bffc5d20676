/**
 * The next pause of a doubling backoff: `firstMs` after none (`lastMs` 0), then twice the last, at
 * most `maxMs`.
 */
export function doubledPauseMs(lastMs: number, firstMs: number, maxMs: number): number {
  return Math.min(maxMs, Math.max(firstMs, lastMs * 2));
}
