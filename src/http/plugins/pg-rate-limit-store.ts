import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import { countHits } from '../../accounts/rate-limit-store';
import type { Orm } from '../../db/orm';

interface PendingHit {
  key: string;
  resetAt: Date;
  callback: (error: Error | null, result?: { current: number; ttl: number }) => void;
}

/**
 * Counts hits in PostgreSQL a batch at a time: one statement in flight per process, the hits that
 * come meanwhile go together in the next. A route that counts every call (the license API counts
 * each twice) then costs the database a share of a statement per call instead of a round trip and
 * a commit of its own per counter.
 */
class HitBatcher {
  private queue: PendingHit[] = [];
  private flushing = false;

  constructor(private readonly orm: Orm, private readonly clock: () => Date) {}

  add(hit: PendingHit): void {
    this.queue.push(hit);
    if (!this.flushing) {
      this.flushing = true;
      setImmediate(() => void this.flush());
    }
  }

  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      await this.count(batch);
    }
    this.flushing = false;
  }

  private async count(batch: PendingHit[]): Promise<void> {
    const now = this.clock();
    let counters: Map<string, { count: number; reset_ms: string }>;
    try {
      counters = await countHits(this.orm.em.fork(), batch, now);
    } catch (error) {
      for (const hit of batch) hit.callback(error as Error);
      return;
    }
    // The hits of one key in a batch are counted in arrival order: the last one sees the total.
    const inBatch = new Map<string, number>();
    for (const hit of batch) inBatch.set(hit.key, (inBatch.get(hit.key) ?? 0) + 1);
    const seen = new Map<string, number>();
    for (const hit of batch) {
      const counter = counters.get(hit.key);
      if (!counter) {
        hit.callback(new Error('rate limit counter missing from its batch'));
        continue;
      }
      const order = (seen.get(hit.key) ?? 0) + 1;
      seen.set(hit.key, order);
      hit.callback(null, { current: counter.count - inBatch.get(hit.key)! + order, ttl: Math.max(0, Number(counter.reset_ms) - now.getTime()) });
    }
  }
}

/**
 * A store for @fastify/rate-limit kept in PostgreSQL (rate_limit_counter, one fixed window per key),
 * so every API process counts against the same limits. Keys are namespaced by the callers.
 */
/** One batcher per database (per process, in practice), whichever routes count: their hits share batches. */
const batchers = new WeakMap<Orm, HitBatcher>();

export function pgRateLimitStore(orm: Orm, clock: () => Date): FastifyRateLimitStoreCtor {
  const batcher = batchers.get(orm) ?? new HitBatcher(orm, clock);
  batchers.set(orm, batcher);
  return class PgRateLimitStore implements FastifyRateLimitStore {
    incr(key: string, callback: PendingHit['callback'], timeWindow: number): void {
      batcher.add({ key, resetAt: new Date(clock().getTime() + timeWindow), callback });
    }

    /** The counters live in one table whatever the route: keys tell them apart. */
    child(): FastifyRateLimitStore {
      return this;
    }
  };
}
