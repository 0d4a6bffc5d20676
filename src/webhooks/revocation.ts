/** What the adapters share about refund and dispute events (decisions §9). */
import type { RevocationScope } from './adapter';

/**
 * The scope of money given back without naming lines (a partial refund by amount): nothing is
 * revoked, and the delivery log says why. A fresh object each time, so no caller can change another's.
 */
export function partialRefund(): RevocationScope {
  return { kind: 'none', reason: 'partial refund, access kept' };
}
