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
