/**
 * The outbox dispatcher that runs in every API process: claims due `workflow_dispatch` rows in
 * batches (`for update skip locked`, so no row is in two processes' hands at once), starts or joins
 * their workflows, deletes the rows Temporal took and pushes the others back with jitter. A row
 * dispatched twice (a crash between Temporal's answer and the delete) changes nothing: workflow ids,
 * the database's unique keys and "an item's outcome is written once" make every step repeatable.
 */
import { dispatchRetryDelayMs } from '../domain/dispatch';
import type { Orm } from '../db/orm';
import {
  claimDueDispatches,
  completeDispatches,
  postponeDispatches,
  type ClaimedDispatch,
  type DispatchFailure,
} from '../services/workflow-outbox';
import { inSpan, SpanKind } from '../telemetry/tracing';
import type { FulfilmentClient } from './client';

export interface DispatcherOptions {
  orm: Orm;
  fulfilment: Pick<FulfilmentClient, 'dispatch'>;
  /** Rows one loop claims at a time (their starts run side by side). */
  batchSize: number;
  /** Loops per process: while one waits on Temporal, another claims what was recorded meanwhile. */
  loops: number;
  /** How often an idle loop looks for rows other processes recorded or that came due again. */
  pollIntervalMs: number;
  /** Runs once before the first dispatch, retried until it succeeds (search attribute registration). */
  prepare?: () => Promise<void>;
  log: { warn(details: object, message: string): void };
  random?: () => number;
}

/** Longest pause of a loop whose whole batch was refused (Temporal down): it comes back quickly. */
const MAX_LOOP_PAUSE_MS = 5_000;

export class WorkflowDispatcher {
  private running: Promise<void>[] = [];
  private stopping = false;
  private sleepers: Array<{ wake: () => void; nudgeable: boolean }> = [];
  private prepared: Promise<void> | undefined;
  private nudged = false;

  constructor(private readonly options: DispatcherOptions) {}

  start(): void {
    if (this.running.length > 0) return;
    this.stopping = false;
    this.running = Array.from({ length: this.options.loops }, () => this.loop());
  }

  /** Something was just recorded: an idle loop looks now instead of at its next poll. */
  nudge(): void {
    const sleeper = this.sleepers.find((s) => s.nudgeable);
    if (sleeper) sleeper.wake();
    // Every loop is busy: the next one to finish looks again at once instead of sleeping.
    else this.nudged = true;
  }

  /** Lets the batches in hand finish (their rows are committed or given back), then stops. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const sleeper of [...this.sleepers]) sleeper.wake();
    await Promise.all(this.running);
    this.running = [];
  }

  /**
   * One batch: claim, dispatch side by side, commit what Temporal took and what it did not.
   * Returns how many rows were claimed and how many of them were refused.
   */
  private async dispatchBatch(): Promise<{ claimed: number; refused: number }> {
    const random = this.options.random ?? Math.random;
    return this.options.orm.em.fork().transactional(async (tx) => {
      const rows = await claimDueDispatches(tx, this.options.batchSize);
      const done: string[] = [];
      const failures: DispatchFailure[] = [];
      await Promise.all(rows.map(async (row: ClaimedDispatch) => {
        try {
          await inSpan(`dispatch ${row.kind}`, { traceParent: row.traceParent, kind: SpanKind.PRODUCER, attributes: { 'workflow.id': row.workflowId } },
            () => this.options.fulfilment.dispatch(row));
          done.push(row.id);
        } catch (error) {
          const attempts = row.attempts + 1;
          failures.push({
            id: row.id,
            error: (error as Error).message ?? String(error),
            retryInMs: dispatchRetryDelayMs(attempts, random()),
          });
        }
      }));
      await completeDispatches(tx, done);
      await postponeDispatches(tx, failures);
      if (failures.length > 0) {
        this.options.log.warn({ refused: failures.length, claimed: rows.length, error: failures[0].error }, 'workflow dispatch refused; rows will be retried');
      }
      return { claimed: rows.length, refused: failures.length };
    });
  }

  private async prepareOnce(): Promise<void> {
    this.prepared ??= (this.options.prepare?.() ?? Promise.resolve()).catch((error: unknown) => {
      this.prepared = undefined;
      throw error;
    });
    await this.prepared;
  }

  private async loop(): Promise<void> {
    let pauseMs = 0;
    while (!this.stopping) {
      let result = { claimed: 0, refused: 0 };
      try {
        await this.prepareOnce();
        result = await this.dispatchBatch();
      } catch (error) {
        // Temporal not ready for the preparation, or PostgreSQL out of reach: rows stay as they are.
        this.options.log.warn({ err: error }, 'workflow dispatcher: pass failed');
        result = { claimed: 1, refused: 1 };
      }
      if (result.claimed > 0 && result.refused === result.claimed) {
        pauseMs = Math.min(MAX_LOOP_PAUSE_MS, Math.max(250, pauseMs * 2));
        await this.idle(pauseMs, false);
        continue;
      }
      pauseMs = 0;
      // A full batch means more may be due at once; otherwise wait for a nudge or the next poll.
      if (result.claimed < this.options.batchSize) await this.idle(this.options.pollIntervalMs, true);
    }
  }

  private idle(ms: number, nudgeable: boolean): Promise<void> {
    if (this.stopping) return Promise.resolve();
    if (nudgeable && this.nudged) {
      this.nudged = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const sleeper = {
        nudgeable,
        wake: () => {
          clearTimeout(timer);
          this.sleepers = this.sleepers.filter((s) => s !== sleeper);
          resolve();
        },
      };
      const timer = setTimeout(sleeper.wake, ms);
      timer.unref();
      this.sleepers.push(sleeper);
    });
  }
}
