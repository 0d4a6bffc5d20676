import type { EntityManager } from '@mikro-orm/postgresql';

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
  const rows = await em.execute<Array<{ count: number; reset_ms: string }>>(
    `insert into rate_limit_counter (key, count, reset_at) values (?, 1, ?)
     on conflict (key) do update set
       count = case when rate_limit_counter.reset_at <= ? then 1 else rate_limit_counter.count + 1 end,
       reset_at = case when rate_limit_counter.reset_at <= ? then excluded.reset_at else rate_limit_counter.reset_at end
     returning count, (extract(epoch from reset_at) * 1000)::bigint as reset_ms`,
    [key, new Date(now.getTime() + windowMs), now, now],
  );
  const { count, reset_ms: resetMs } = rows[0];
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
  const [slot] = await em.execute<Array<{ wait_ms: string }>>(
    `insert into rate_limit_counter as r (key, count, reset_at) values (?, 1, clock_timestamp() + ? * interval '1 millisecond')
     on conflict (key) do update set count = 1, reset_at = greatest(r.reset_at, clock_timestamp()) + ? * interval '1 millisecond'
     returning (extract(epoch from r.reset_at - clock_timestamp()) * 1000 - ?)::float8 as wait_ms`,
    [key, spacingMs, spacingMs, spacingMs],
  );
  return Math.max(0, Number(slot.wait_ms));
}

/** Forgets a key's hits (e.g. an account's failed sign-ins once it signs in). */
export async function clearRateLimit(em: EntityManager, key: string): Promise<void> {
  await em.execute('delete from rate_limit_counter where key = ?', [key]);
}

/**
 * Deletes counters whose window ended before `now` (they would restart at 1 anyway), at most
 * `batch` at a time so that a large backlog never holds long locks. Returns how many went.
 */
export async function pruneRateLimits(em: EntityManager, now: Date, batch = 10_000): Promise<number> {
  const result = await em.execute<{ affectedRows: number }>(
    `delete from rate_limit_counter where key in (select key from rate_limit_counter where reset_at <= ? limit ?)`,
    [now, batch],
    'run',
  );
  return result.affectedRows;
}
