/**
 * How long each kind of activity may take and how it is retried: one preset per kind, used by
 * every workflow that runs it, so an activity never gets two policies in two places. Plain data
 * (the workflows' sandbox imports it).
 */
import type { ActivityOptions } from '@temporalio/common';

/** A PostgreSQL step: short, retried quickly and for as long as the database is away. */
export const DATABASE_STEP = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
} as const satisfies ActivityOptions;

/** A database lookup someone waits on by email: given up after ten minutes. */
export const DATABASE_LOOKUP = { ...DATABASE_STEP, scheduleToCloseTimeout: '10 minutes' } as const satisfies ActivityOptions;

/**
 * An email: temporary SMTP failures are retried with backoff for the whole window (the activity
 * throws permanent ones, 5xx, non-retryable).
 */
export function emailWithin(windowMs: number | '1 hour'): ActivityOptions {
  return {
    scheduleToCloseTimeout: windowMs,
    startToCloseTimeout: '1 minute',
    retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
  };
}

/**
 * A receipt's first attempt, run as a local activity inside the workflow task: the happy path
 * (record, send, report) is then one workflow task instead of an activity's round trips through the
 * engine. One attempt only; if it fails the receipt goes on as a normal activity with the email's
 * whole retry window (emailWithin), under the same send key, so nothing is sent twice.
 */
export const RECEIPT_FIRST_ATTEMPT = {
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 1 },
} as const satisfies ActivityOptions;

/** The staff's order alert: an email retried for an hour, wherever it is sent from. */
export const ORDER_ALERT = emailWithin('1 hour');

/**
 * A batch of update notices: paced by the organisation's rate, so it takes a while; it heartbeats
 * every 2 s, so a worker that dies is noticed in seconds and the batch resumes elsewhere (notices
 * already sent are skipped). A relay that keeps deferring is retried for about three minutes; then
 * the workflow logs those notices failed and goes on.
 */
export const UPDATE_NOTICES = {
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '15 seconds',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 8 },
} as const satisfies ActivityOptions;

/**
 * One outbound webhook attempt (decisions §13): 15 s for the request itself, plus a wait for one
 * of the endpoint's slots of this worker (at most 30 s, then the attempt answers `busy`). It
 * heartbeats every 2 s, so an attempt on a worker that died is taken up elsewhere within seconds.
 * Temporal retries only what broke before the answer was recorded (PostgreSQL away, a worker
 * gone); an endpoint's failures are answers, and the run's own schedule retries them.
 */
export const OUTBOUND_ATTEMPT = {
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
} as const satisfies ActivityOptions;

/**
 * One page of a platform's order list read and recorded (decisions §15): a platform that answers
 * 5xx or not at all is tried five times over about a minute, then the run ends with an error counted
 * (the next scheduled run starts from the high-water mark). Throttling and refusals are answers, not
 * failures: the run itself waits or pauses.
 */
export const RECONCILE_PAGE = {
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 },
} as const satisfies ActivityOptions;
