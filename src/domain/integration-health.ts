/**
 * Integration health (decisions §15): why the front door refused a platform's delivery, named so a
 * seller can act on it. The HTTP answers to the platform stay as they were; only the seller sees these.
 */

/** A signature check's refusals, as each adapter's `verify` names them. */
export const SIGNATURE_REFUSALS = ['signature mismatch', 'signature header missing', 'timestamp outside tolerance'] as const;
export type SignatureRefusal = (typeof SIGNATURE_REFUSALS)[number];

/** What an adapter's `verify` answers: the delivery is the platform's, or why it cannot be taken as such. */
export type SignatureCheck = 'verified' | SignatureRefusal;

export const REFUSAL_REASONS = [
  ...SIGNATURE_REFUSALS,
  'signed value replayed',
  'integration not configured',
  'body too large',
  'body unreadable',
] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

/** The counts cover the current hour and the 23 before it (hourly buckets: between 23 and 24 hours). */
export const HEALTH_WINDOW_HOURS = 24;
