import type { FastifyBaseLogger } from 'fastify';
import type { Orm } from '../db/orm';
import { pruneEvents } from '../events/outbound-events';
import { pruneIdleCoverage } from '../downloads/download-store';
import { pruneRateLimits } from './rate-limits';
import { pruneSessions } from './user-sessions';

/**
 * Deletes rows that have served their purpose, in every API process every HOUSEKEEPING_INTERVAL
 * (the deletes are idempotent, so processes need not agree on who does it): rate-limit counters
 * whose window has passed, download coverage nobody added to for 30 days (cleared, its bytes sent
 * kept), dashboard sessions idle past their timeout or older than their cap, and outbound events
 * (with their deliveries) and attempts older than EVENT_RETENTION. Signed nonces are kept for good
 * (see `claimSignedNonce`).
 */
export class Housekeeping {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: {
    orm: Orm; clock: () => Date; intervalMs: number; eventRetentionMs: number;
    sessions: { idleMs: number; maxAgeMs: number };
    log: Pick<FastifyBaseLogger, 'warn'>;
  }) {}

  /** One round; returns how many rows of each kind went. */
  async runOnce(): Promise<{ rateLimitCounters: number; idleCoverage: number; sessions: number; events: number }> {
    const em = this.deps.orm.em.fork();
    const now = this.deps.clock();
    return {
      rateLimitCounters: await pruneRateLimits(em, now),
      idleCoverage: await pruneIdleCoverage(em, now),
      sessions: await pruneSessions(em, now, this.deps.sessions.idleMs, this.deps.sessions.maxAgeMs),
      events: await pruneEvents(em, now, this.deps.eventRetentionMs),
    };
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.running = this.runOnce().catch((error: unknown) => this.deps.log.warn({ err: error }, 'housekeeping round failed; next round retries'));
    }, this.deps.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
