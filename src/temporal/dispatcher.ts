/**
 * The outbox dispatcher that runs in every API process: leases due `workflow_dispatch` rows (`for
 * update skip locked`, committed at once: no row is in two processes' hands, and no transaction stays
 * open while the engine answers; an equal share per organisation, and the engine's places first to
 * the organisation with the fewest runs there, so one organisation's backlog delays only itself),
 * starts or joins each row's workflow on its own, and with the answers of a moment together, deletes
 * the rows Temporal took, pushes back with jitter those it could not be asked about or refused for
 * now, and turns into dead letters those it refused for good or too often. A loop claims again as
 * soon as it has room and something is due, not when the slowest start of a batch answers: a sale
 * that comes in while the engine is slow waits for a place in the engine, never for other
 * organisations' starts. A row dispatched twice (a process that died before its answer was written:
 * the lease runs out) changes nothing: workflow ids, the database's unique keys and "an item's
 * outcome is written once" make every step repeatable.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { doubledPauseMs } from '../domain/backoff';
import { dispatchRetryDelayMs, ENGINE_RETRY_MAX_MS } from '../domain/dispatch';
import type { Orm } from '../db/orm';
import { deadLetterDispatches } from '../services/dispatch-dead-letters';
import {
  claimDueDispatches,
  completeDispatches,
  postponeDispatches,
  type ClaimedDispatch,
  type DispatchClaim,
  type DispatchFailure,
  type EngineRunLimits,
} from '../services/workflow-outbox';
import { inSpan, SpanKind } from '../telemetry/tracing';
import { dispatchFailureKind, dispatchFailureText, type WorkflowStarter } from './client';

/** With the engine's places for fulfilment (EngineRunLimits): a place that frees goes to the organisation that started the fewest runs while its oldest row waited. */
export interface DispatcherOptions extends EngineRunLimits {
  orm: Orm;
  starter: Pick<WorkflowStarter, 'dispatch'>;
  /** Starts one loop has in flight at most (each claim takes no more than the room left). */
  batchSize: number;
  /** Refusals (not unreachability) after which a row becomes a dead letter. */
  maxRefusals: number;
  /** Loops per process, each with its own starts in flight. */
  loops: number;
  /** How often an idle loop looks for rows other processes recorded or that came due again. */
  pollIntervalMs: number;
  /** Least time between claims that each found only part of what they asked for (CLAIM_GAP_MS unless given). */
  claimGapMs?: number;
  /** Runs once before the first dispatch, retried until it succeeds (search attribute registration). */
  prepare?: () => Promise<void>;
  log: { warn(details: object, message: string): void; error(details: object, message: string): void };
  random?: () => number;
}

/**
 * How long a claimed row is the claimer's: after it, the row is due again for any process. Well
 * past the longest a start may take (the client's 5 s deadline and its retries), so a row is started
 * twice only when its process died holding it; short enough that such a row waits half a minute.
 */
export const CLAIM_LEASE_MS = 30_000;

/**
 * Least time between a process's claims while each finds only part of what it asked for. Every sale
 * and every run's end wakes the dispatcher; in a drain, places free one by one, and a claim for each
 * would cost a claim per run (a few milliseconds of PostgreSQL each); during a flood whose
 * organisation has all its places, every sale would cost a claim that finds nothing. Paced, a claim
 * takes what freed in the gap at once. A claim that was full goes on at once (more is due), and so
 * does a lone wake-up after a quiet spell. A sale of an organisation the last claim did not find
 * holding all its places cuts the gap short: it has a place, and waiting would only delay it (a
 * quiet tenant's sale beside a flood, or after its own previous sale's follow-up rows).
 */
const CLAIM_GAP_MS = 100;

/**
 * How long the engine's answers gather before they are written: one transaction (one commit) then
 * carries many of them instead of one per start. Nobody waits on the write: a row Temporal took is
 * already running, and until the write its lease keeps it from being claimed again.
 */
const ANSWER_GATHER_MS = 200;

/** Pauses between tries of a failed answer write: from a quarter of a second, doubling, to two seconds. */
const ANSWER_RETRY_FIRST_MS = 250;
const ANSWER_RETRY_MAX_MS = 2_000;
/** How long a stopping dispatcher keeps trying to write its answers before it leaves them to the lease. */
const ANSWER_RETRY_STOPPING_MS = 5_000;

/** The engine's answers not yet written to the outbox. */
interface Answers {
  taken: string[];
  later: DispatchFailure[];
  dead: Array<{ row: ClaimedDispatch; error: string }>;
  unreachable: number;
}

const noAnswers = (): Answers => ({ taken: [], later: [], dead: [], unreachable: 0 });
const joinAnswers = (a: Answers, b: Answers): Answers => ({
  taken: [...a.taken, ...b.taken], later: [...a.later, ...b.later], dead: [...a.dead, ...b.dead], unreachable: a.unreachable + b.unreachable,
});
const answerCount = (a: Answers): number => a.taken.length + a.later.length + a.dead.length;

/** What ends a dispatcher's sleep early: any new row or freed place, only a sale that has a place, or nothing. */
type WakesOn = 'anything' | 'sale-with-a-place' | 'nothing';

/**
 * One loop's starts in flight, and whether it pauses before its next claim: the engine's last answer
 * to it was "out of reach", or its last pass failed (PostgreSQL, or the preparation).
 */
interface LoopState {
  inFlight: Set<Promise<void>>;
  pauseNext: boolean;
  pauseMs: number;
}

export class WorkflowDispatcher {
  private running: Promise<void>[] = [];
  private stopping = false;
  private sleepers: Array<{ wake: () => void; wakesOn: WakesOn }> = [];
  private prepared: Promise<void> | undefined;
  private nudged = false;
  private answers = noAnswers();
  private writing: Promise<void> | undefined;
  private lastClaimAt = 0;
  private paced = false;
  /** The organisations the last claim found holding all their places: their new sales wait for one to free. */
  private heldBack = new Set<string>();
  /** A sale with a place came since the last claim began: the next claim does not wait out the gap. */
  private saleWithAPlace = false;
  private claimsDone: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: DispatcherOptions) {}

  start(): void {
    if (this.running.length > 0) return;
    this.stopping = false;
    this.running = Array.from({ length: this.options.loops }, () => this.loop());
  }

  /** A place in the engine freed (or something may be due): an idle loop looks now instead of at its next poll. */
  nudge(): void {
    this.wakeOne('anything');
  }

  /**
   * Rows of organisation `orgId` (null: of none, or not known) were just recorded. Unless the last
   * claim found that organisation holding all its places, they are claimed at once, gap or not;
   * otherwise they wait, like every row, for a freed place's nudge.
   */
  recorded(orgId: string | null): void {
    if (orgId !== null && this.heldBack.has(orgId)) {
      this.nudge();
      return;
    }
    this.saleWithAPlace = true;
    this.wakeOne('sale-with-a-place');
  }

  private wakeOne(reason: Exclude<WakesOn, 'nothing'>): void {
    const sleeper = this.sleepers.find((s) => s.wakesOn === 'anything' || s.wakesOn === reason);
    if (sleeper) sleeper.wake();
    // No loop waits for work (each is claiming, pausing or full): the next to wait looks again at once instead.
    else this.nudged = true;
  }

  /** Lets the starts in flight answer and their answers be written, then stops. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const sleeper of [...this.sleepers]) sleeper.wake();
    await Promise.all(this.running);
    this.running = [];
    await this.writing;
  }

  /** Starts (or joins) one row's workflow and files the engine's answer for writing; never throws. */
  private async dispatchOne(row: ClaimedDispatch, state: LoopState): Promise<void> {
    try {
      await inSpan(`dispatch ${row.kind}`, { traceParent: row.traceParent, kind: SpanKind.PRODUCER, attributes: { 'workflow.id': row.workflowId } },
        () => this.options.starter.dispatch(row));
      state.pauseNext = false;
      state.pauseMs = 0;
      this.answers.taken.push(row.id);
    } catch (error) {
      const message = dispatchFailureText(error);
      const kind = dispatchFailureKind(error);
      if (kind === 'unreachable') {
        state.pauseNext = true;
        this.answers.unreachable += 1;
      }
      if (kind === 'permanent' || (kind === 'refused' && row.refusals + 1 >= this.options.maxRefusals)) {
        this.answers.dead.push({ row, error: message });
      } else {
        const random = this.options.random ?? Math.random;
        this.answers.later.push({ id: row.id, error: message, retryInMs: dispatchRetryDelayMs(row.attempts + 1, random(), kind), refused: kind === 'refused' });
      }
    }
    this.writing ??= this.writeAnswers();
  }

  /**
   * Writes the answers gathered so far, and again while more came meanwhile (so under load one
   * write carries many). A write that fails (PostgreSQL busy or away) is tried again with what came
   * since, until the rows' lease would have brought them back anyway (or, stopping, for a few
   * seconds): until its answer is written a run that ended still holds its organisation's place in
   * the engine. Given up, nothing is lost: the rows come due again when their lease runs out, and a
   * second start of a run the engine took only joins it.
   */
  private async writeAnswers(): Promise<void> {
    if (!this.stopping) await this.idle(ANSWER_GATHER_MS, 'nothing');
    let failingSince: number | undefined;
    let retryMs = 0;
    while (answerCount(this.answers) > 0) {
      const answers = this.answers;
      this.answers = noAnswers();
      try {
        // One statement per kind of answer, each committed on its own (a transaction around them
        // cost two more round trips per write): none needs another, and what fails comes due again.
        const em = this.options.orm.em.fork();
        await completeDispatches(em, answers.taken);
        await postponeDispatches(em, answers.later);
        if (answers.dead.length > 0) await em.transactional((tx) => deadLetterDispatches(tx, answers.dead));
      } catch (error) {
        if (failingSince === undefined) {
          failingSince = Date.now();
          this.options.log.warn({ err: error, rows: answerCount(answers) }, 'workflow dispatcher: could not record the engine\'s answers yet; trying again');
        } else if (Date.now() - failingSince >= (this.stopping ? ANSWER_RETRY_STOPPING_MS : CLAIM_LEASE_MS)) {
          this.options.log.warn({ err: error, rows: answerCount(answers) },
            'workflow dispatcher: could not record the engine\'s answers; the rows come due again when their lease ends');
          // Answers that came meanwhile get tries of their own.
          failingSince = undefined;
          retryMs = 0;
          continue;
        }
        this.answers = joinAnswers(answers, this.answers);
        retryMs = doubledPauseMs(retryMs, ANSWER_RETRY_FIRST_MS, ANSWER_RETRY_MAX_MS);
        await sleep(retryMs);
        continue;
      }
      failingSince = undefined;
      retryMs = 0;
      const answered = answerCount(answers);
      if (answers.later.length > 0) {
        this.options.log.warn(
          { postponed: answers.later.length, unreachable: answers.unreachable, answered, error: answers.later[0].error },
          'workflow dispatch not taken; rows will be retried',
        );
      }
      if (answers.dead.length > 0) {
        this.options.log.error(
          { deadLetters: answers.dead.length, answered, workflowId: answers.dead[0].row.workflowId, error: answers.dead[0].error },
          'workflow dispatch refused for good; rows kept as dead letters',
        );
      }
    }
    this.writing = undefined;
  }

  private async prepareOnce(): Promise<void> {
    this.prepared ??= (this.options.prepare?.() ?? Promise.resolve()).catch((error: unknown) => {
      this.prepared = undefined;
      throw error;
    });
    await this.prepared;
  }

  private async loop(): Promise<void> {
    const state: LoopState = { inFlight: new Set(), pauseNext: false, pauseMs: 0 };
    const claimGapMs = this.options.claimGapMs ?? CLAIM_GAP_MS;
    while (!this.stopping) {
      if (state.inFlight.size >= this.options.batchSize) {
        await Promise.race(state.inFlight);
        continue;
      }
      // Only an engine out of reach (or PostgreSQL, or the preparation) pauses the loop: rows the
      // engine refused are already pushed back or dead letters, and the rows behind them (other
      // organisations') must not wait for them. The pause is taken once per such answer.
      if (state.pauseNext) {
        state.pauseNext = false;
        state.pauseMs = doubledPauseMs(state.pauseMs, 250, ENGINE_RETRY_MAX_MS);
        await this.idle(state.pauseMs, 'nothing');
      }
      const gapLeft = this.lastClaimAt + claimGapMs - Date.now();
      if (this.paced && gapLeft > 0 && !this.saleWithAPlace) await this.idle(gapLeft, 'sale-with-a-place');
      if (this.stopping) break;
      let rows: ClaimedDispatch[];
      const room = this.options.batchSize - state.inFlight.size;
      try {
        await this.prepareOnce();
        this.saleWithAPlace = false;
        const claim = await this.claimInTurn(room);
        rows = claim.rows;
        this.heldBack = new Set(claim.heldOrganisations);
      } catch (error) {
        // Temporal not ready for the preparation, or PostgreSQL out of reach: rows stay as they are.
        this.options.log.warn({ err: error }, 'workflow dispatcher: pass failed');
        state.pauseNext = true;
        continue;
      }
      for (const row of rows) {
        const start: Promise<void> = this.dispatchOne(row, state).finally(() => state.inFlight.delete(start));
        state.inFlight.add(start);
      }
      // A claim takes only a share of each organisation's due rows: after any, more may be due (at
      // once after a full claim, after the gap otherwise); after none, wait for a nudge (a sale, a
      // freed place) or the next poll.
      const now = Date.now();
      this.paced = rows.length > 0 ? rows.length < room : now - this.lastClaimAt < claimGapMs;
      this.lastClaimAt = now;
      if (rows.length === 0) await this.idle(this.options.pollIntervalMs, 'anything');
    }
    await Promise.all(state.inFlight);
  }

  /**
   * Runs the process's claims one at a time: a claim counts the engine's free places before it takes
   * any, so two loops claiming at the same moment each took the same free places (40 runs in the
   * engine against a budget of 20 were seen), and a flood's runs then started and ended in larger
   * waves. Claims of other processes (roles apart) may still overlap.
   */
  private claimInTurn(room: number): Promise<DispatchClaim> {
    const claim = this.claimsDone.then(() => claimDueDispatches(this.options.orm.em.fork(), room, this.options, CLAIM_LEASE_MS));
    this.claimsDone = claim.catch(() => undefined);
    return claim;
  }

  private idle(ms: number, wakesOn: WakesOn): Promise<void> {
    if (this.stopping) return Promise.resolve();
    if (wakesOn === 'anything' && this.nudged) {
      this.nudged = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const sleeper = {
        wakesOn,
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
