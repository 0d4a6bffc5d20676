import type { EntityManager } from '@mikro-orm/postgresql';
import { countHit, deleteCounter, deleteEndedCounters, reserveNextSlot } from '../accounts/rate-limit-store';

export interface RateLimitVerdict {
  allowed: boolean;
  /** Hits in the current window, this one included. */
  count: number;
  resetAt: Date;
}

/**
 * Counts one hit against `key` in a fixed window and says whether it is within `limit`. One atomic
 * statement on the shared rate_limit_counter table, so every API process sees the same count.
 */
export async function hitRateLimit(
  em: EntityManager,
  key: string,
  limit: number,
  windowMs: number,
  now: Date,
): Promise<RateLimitVerdict> {
  const { count, reset_ms: resetMs } = await countHit(em, key, new Date(now.getTime() + windowMs), now);
  return { allowed: count <= limit, count, resetAt: new Date(Number(resetMs)) };
}

/**
 * Reserves the next free slot of `key`, slots spaced `spacingMs` apart, and returns how long to wait
 * for it (0 when it is now). One shared row whose `reset_at` is the slot after the last one
 * reserved, by the database's clock, so no second holds more than 1000/spacingMs whichever process
 * asks. (A fixed window, as hitRateLimit counts, lets up to twice the rate through across a
 * window's edge: a slow end of one window, a burst at the start of the next.)
 */
export async function reserveSlot(em: EntityManager, key: string, spacingMs: number): Promise<number> {
  return Math.max(0, Number(await reserveNextSlot(em, key, spacingMs)));
}

/** Forgets a key's hits (e.g. an account's failed sign-ins once it signs in). */
export async function clearRateLimit(em: EntityManager, key: string): Promise<void> {
  await deleteCounter(em, key);
}

/**
 * Deletes counters whose window ended before `now` (they would restart at 1 anyway), at most
 * `batch` at a time so that a large backlog never holds long locks. Returns how many went.
 */
export async function pruneRateLimits(em: EntityManager, now: Date, batch = 10_000): Promise<number> {
  return deleteEndedCounters(em, now, batch);
}
