/**
 * Emails staff send to a buyer by hand (the dashboard's "send a fresh link", re-arm), per purchase:
 * neither a careless colleague nor a stolen session can flood one buyer's inbox from the service's
 * address (security review L5). Counted in PostgreSQL, so every API process shares the count.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { TooManyRequestsError } from '../domain/errors';
import { hitRateLimit } from './rate-limits';

export const STAFF_MAIL_LIMIT = { perPurchase: 3, windowMs: 60 * 60_000 } as const;

/** Counts one staff email for the purchase; past the limit a 429 with the seconds until the window ends. */
export async function countStaffMail(em: EntityManager, purchaseId: string, now: Date): Promise<void> {
  const verdict = await hitRateLimit(em, `staff-mail:purchase:${purchaseId}`, STAFF_MAIL_LIMIT.perPurchase, STAFF_MAIL_LIMIT.windowMs, now);
  if (verdict.allowed) return;
  const waitSeconds = Math.max(1, Math.ceil((verdict.resetAt.getTime() - now.getTime()) / 1000));
  throw new TooManyRequestsError(
    `${STAFF_MAIL_LIMIT.perPurchase} emails went to this buyer by hand within the hour: try again in ${Math.ceil(waitSeconds / 60)} min`,
    waitSeconds,
  );
}
