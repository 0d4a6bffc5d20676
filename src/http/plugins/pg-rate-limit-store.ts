import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { Orm } from '../../db/orm';
import { hitRateLimit } from '../../services/rate-limits';

/**
 * A store for @fastify/rate-limit kept in PostgreSQL (rate_limit_counter, one fixed window per key),
 * so every API process counts against the same limits. Keys are namespaced by the callers.
 */
export function pgRateLimitStore(orm: Orm, clock: () => Date): FastifyRateLimitStoreCtor {
  return class PgRateLimitStore implements FastifyRateLimitStore {
    incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number, max: number): void {
      const now = clock();
      hitRateLimit(orm.em.fork(), key, max, timeWindow, now).then(
        (verdict) => callback(null, { current: verdict.count, ttl: Math.max(0, verdict.resetAt.getTime() - now.getTime()) }),
        (error: Error) => callback(error),
      );
    }

    /** The counters live in one table whatever the route: keys tell them apart. */
    child(): FastifyRateLimitStore {
      return this;
    }
  };
}
