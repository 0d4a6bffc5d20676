/**
 * The outbox dispatcher that runs in every API process: claims due `workflow_dispatch` rows in
 * batches (`for update skip locked`, so no row is in two processes' hands at once; an equal share
 * per organisation, and the engine's places first to the organisation with the fewest runs there,
 * so one organisation's backlog delays only itself), starts or joins their workflows,
 * deletes the rows Temporal took, pushes back with jitter those it could not be asked about or
 * refused for now, and turns into dead letters those it refused for good or too often. A row
 * dispatched twice (a crash between Temporal's answer and the delete) changes nothing: workflow ids,
 * the database's unique keys and "an item's outcome is written once" make every step repeatable.
 */
import { dispatchRetryDelayMs } from '../domain/dispatch';
import type { Orm } from '../db/orm';
import { deadLetterDispatches } from '../services/dispatch-dead-letters';
import {
  claimDueDispatches,
  completeDispatches,
  postponeDispatches,
  type ClaimedDispatch,
  type DispatchFailure,
  type EngineRunLimits,
} from '../services/workflow-outbox';
import { inSpan, SpanKind } from '../telemetry/tracing';
import { dispatchFailureKind, dispatchFailureText, type WorkflowStarter } from './client';

/** With the engine's places for fulfilment (EngineRunLimits): a place that frees goes to the organisation that started the fewest runs while its oldest row waited. */
export interface DispatcherOptions extends EngineRunLimits {
  orm: Orm;
  starter: Pick<WorkflowStarter, 'dispatch'>;
  /** Rows one loop claims at a time (their starts run side by side). */
  batchSize: number;
  /** Refusals (not unreachability) after which a row becomes a dead letter. */
  maxRefusals: number;
  /** Loops per process: while one waits on Temporal, another claims what was recorded meanwhile. */
  loops: number;
  /** How often an idle loop looks for rows other processes recorded or that came due again. */
  pollIntervalMs: number;
  /** Runs once before the first dispatch, retried until it succeeds (search attribute registration). */
  prepare?: () => Promise<void>;
  log: { warn(details: object, message: string): void; error(details: object, message: string): void };
  random?: () => number;
}

/** Longest pause of a loop that found Temporal out of reach: it comes back quickly. */
const MAX_LOOP_PAUSE_MS = 5_000;

interface BatchResult {
  claimed: number;
  taken: number;
  unreachable: number;
}

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
   * One batch: claim, dispatch side by side, commit what Temporal took, what it could not be asked
   * about or refused for now, and what it refused for good. Returns how many rows were claimed,
   * how many were taken, and how many found the engine out of reach.
   */
  private async dispatchBatch(): Promise<BatchResult> {
    const random = this.options.random ?? Math.random;
    return this.options.orm.em.fork().transactional(async (tx) => {
      const rows = await claimDueDispatches(tx, this.options.batchSize, this.options);
      const done: string[] = [];
      const failures: DispatchFailure[] = [];
      const dead: Array<{ row: ClaimedDispatch; error: string }> = [];
      let unreachable = 0;
      await Promise.all(rows.map(async (row: ClaimedDispatch) => {
        try {
          await inSpan(`dispatch ${row.kind}`, { traceParent: row.traceParent, kind: SpanKind.PRODUCER, attributes: { 'workflow.id': row.workflowId } },
            () => this.options.starter.dispatch(row));
          done.push(row.id);
        } catch (error) {
          const message = dispatchFailureText(error);
          const kind = dispatchFailureKind(error);
          if (kind === 'unreachable') unreachable += 1;
          if (kind === 'permanent' || (kind === 'refused' && row.refusals + 1 >= this.options.maxRefusals)) {
            dead.push({ row, error: message });
            return;
          }
          failures.push({ id: row.id, error: message, retryInMs: dispatchRetryDelayMs(row.attempts + 1, random()), refused: kind === 'refused' });
        }
      }));
      await completeDispatches(tx, done);
      await postponeDispatches(tx, failures);
      await deadLetterDispatches(tx, dead);
      if (failures.length > 0) {
        this.options.log.warn({ postponed: failures.length, unreachable, claimed: rows.length, error: failures[0].error }, 'workflow dispatch not taken; rows will be retried');
      }
      if (dead.length > 0) {
        this.options.log.error(
          { deadLetters: dead.length, claimed: rows.length, workflowId: dead[0].row.workflowId, error: dead[0].error },
          'workflow dispatch refused for good; rows kept as dead letters',
        );
      }
      return { claimed: rows.length, taken: done.length, unreachable };
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
      let result: BatchResult;
      try {
        await this.prepareOnce();
        result = await this.dispatchBatch();
      } catch (error) {
        // Temporal not ready for the preparation, or PostgreSQL out of reach: rows stay as they are.
        this.options.log.warn({ err: error }, 'workflow dispatcher: pass failed');
        result = { claimed: 0, taken: 0, unreachable: 1 };
      }
      // Only an engine out of reach pauses the loop: rows it refused are already pushed back or dead
      // letters, and the rows behind them (other organisations') must not wait for them.
      if (result.unreachable > 0 && result.taken === 0) {
        pauseMs = Math.min(MAX_LOOP_PAUSE_MS, Math.max(250, pauseMs * 2));
        await this.idle(pauseMs, false);
        continue;
      }
      pauseMs = 0;
      // A batch holds only a share of each organisation's due rows: after any claim more may be due
      // at once; after none, wait for a nudge or the next poll.
      if (result.claimed === 0) await this.idle(this.options.pollIntervalMs, true);
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
