/**
 * Missed-webhook reconciliation (decisions §15): plain values shared by the settings, the schedule,
 * the `reconcileIntegration` workflow and its activities (the workflows' sandbox imports this).
 */
import type { Platform } from './platforms';

/** What a run found: orders read, orders it recorded because no webhook had brought them, orders already known, failures. */
export interface ReconcileResult {
  pulled: number;
  recovered: number;
  alreadyKnown: number;
  errors: number;
}

export const NO_RESULT: ReconcileResult = { pulled: 0, recovered: 0, alreadyKnown: 0, errors: 0 };

export function addResults(a: ReconcileResult, b: ReconcileResult): ReconcileResult {
  return { pulled: a.pulled + b.pulled, recovered: a.recovered + b.recovered, alreadyKnown: a.alreadyKnown + b.alreadyKnown, errors: a.errors + b.errors };
}

/** The schedule of an organisation's integration: one per (organisation, platform), visible as such in the Temporal UI. */
export function reconcileScheduleId(orgId: string, platform: Platform): string {
  return `reconcile/${orgId}/${platform}`;
}

/**
 * Orders can be changed after the platform stamped them (a clock or replication lag on its side):
 * a run reads from this long before the newest change time it saw, and the business keys make the
 * overlap free.
 */
export const HIGH_WATER_OVERLAP_MS = 60 * 60 * 1000;

/** Where a run starts reading: the high-water mark less the overlap, or, for the first run, the lookback. */
export function readSince(highWaterMark: string | null, now: Date, lookbackMs: number): string {
  const from = highWaterMark === null ? now.getTime() - lookbackMs : Date.parse(highWaterMark) - HIGH_WATER_OVERLAP_MS;
  return new Date(from).toISOString();
}

/**
 * When an interval schedule next fires after `now`: Temporal's interval spec matches the times
 * epoch + n × every (+ a phase, which these schedules do not set).
 */
export function nextIntervalTime(everyMs: number, now: Date): Date {
  return new Date((Math.floor(now.getTime() / everyMs) + 1) * everyMs);
}

/** Pages a run reads before it continues as new (its history stays small; where it got to is carried over). */
export const PAGES_BEFORE_CONTINUE = 50;

/** One page of a run: what the platform answered, and, once read, what recording it found. */
export type PageOutcome =
  /** `newestChange`: the latest change time among the page's orders (ISO 8601), null when none had one. */
  | { kind: 'recorded'; result: ReconcileResult; nextCursor: string | null; slowDownMs: number; newestChange: string | null }
  /** 429: wait this long and ask for the same page again. */
  | { kind: 'throttled'; retryAfterMs: number }
  /**
   * 401/403: the credentials were refused; the schedule is paused until they are saved again.
   * `savedAt`: when the refused credentials were saved (credentials saved since are not paused).
   */
  | { kind: 'refused'; reason: string; savedAt: string }
  /** Reconciliation was turned off (or its platform's client is gone) during the run: it ends, the pages left unread. */
  | { kind: 'stopped' };

/**
 * Where a run is: its window's start, the page to read next (null: the first), the counts so far,
 * and the latest change time read so far (absent in runs continued before it was kept).
 */
export interface ReconcileProgress {
  since: string;
  cursor: string | null;
  result: ReconcileResult;
  newestChange?: string | null;
}

/** The later of two change times (ISO 8601), either possibly null. */
export function laterChange(a: string | null, b: string | null): string | null {
  if (a === null) return b;
  if (b === null) return a;
  return Date.parse(b) > Date.parse(a) ? b : a;
}

/** The input of `reconcileIntegration`: what the schedule gives, and, after a continue-as-new, where the run got to. */
export interface ReconcileInput {
  orgId: string;
  platform: Platform;
  progress?: ReconcileProgress;
}
