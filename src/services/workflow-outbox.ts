/**
 * The outbox table (`workflow_dispatch`): rows are written in the same transaction as the request
 * they serve, leased by a dispatcher with `for update skip locked` (so two API processes never hold
 * the same row) a few per organisation at a time, within the engine's budget of runs, deleted once
 * Temporal took them, pushed back when it did not, and kept as dead letters when it refused them for
 * good.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';
import type { DispatchRequest, NewDispatch } from '../domain/dispatch';
import type { FreshLinksAsk } from '../domain/fresh-links';
import { freshLinksWorkflowId } from '../domain/ids';
import {
  backlogCounts, claimDueRows, deleteDispatchRows, insertDispatchRows, postponeDispatchRows, type DispatchRow, type EngineRunLimits,
} from '../outbox/outbox-store';
import { currentTraceParent } from '../telemetry/tracing';

export type { EngineRunLimits };


export type ClaimedDispatch = DispatchRequest & {
  id: string; workflowId: string; orgId: string | null; attempts: number; refusals: number; traceParent: string | null;
};

export interface DispatchFailure {
  id: string;
  error: string;
  /** How long until the row may be tried again (from the database's clock). */
  retryInMs: number;
  /** The engine said no (counted toward the cap), rather than could not be reached. */
  refused: boolean;
}

/** What waits for the workflow engine: shown on /readyz and in the dashboard. */
export interface OutboxBacklog {
  waiting: number;
  /** Age of the oldest waiting row, in seconds; 0 when none waits. */
  oldestAgeSeconds: number;
  /** Rows the engine refused for good or too often (dead letters): they wait for nobody. */
  deadLetters: number;
}

/** The rows of `dispatchInsert`'s parameter; they keep the current trace context (when tracing is on). */
export function dispatchRows(dispatches: NewDispatch[]): DispatchRow[] {
  const traceParent = currentTraceParent();
  return dispatches.map((d) => ({
    id: randomUUID(), organisation_id: d.orgId, kind: d.kind, workflow_id: d.workflowId, payload: d.payload, trace_parent: traceParent,
  }));
}

/**
 * The outbox row of a freshLinks run for one request (a new request id each time): from /my, an
 * expired link's button, or staff (`via`); `orgId` is the purchase's organisation when the request names one.
 */
export function freshLinksDispatch(target: FreshLinksAsk['target'], orgId: string | null, via?: FreshLinksAsk['via']): NewDispatch {
  const request: FreshLinksAsk = { requestId: randomUUID(), target, ...(via ? { via } : {}) };
  return { kind: 'fresh-links', workflowId: freshLinksWorkflowId(request), orgId, payload: request };
}

/** Records dispatches on their own (one statement). */
export async function enqueueDispatches(em: EntityManager, dispatches: NewDispatch[]): Promise<void> {
  if (dispatches.length === 0) return;
  await insertDispatchRows(em, dispatchRows(dispatches));
}

/** A claim: the rows leased, and the organisations whose sales wait for a place to free. */
export interface DispatchClaim {
  rows: ClaimedDispatch[];
  heldOrganisations: string[];
}

/** Leases up to `limit` due rows for `leaseMs`, within the engine's budget of runs (see claimDueRows). */
export async function claimDueDispatches(em: EntityManager, limit: number, runs: EngineRunLimits, leaseMs: number): Promise<DispatchClaim> {
  const claim = await claimDueRows(em, limit, runs, leaseMs);
  return {
    rows: claim.rows.map((r) => ({
      id: r.id, orgId: r.organisation_id, kind: r.kind, workflowId: r.workflow_id, payload: r.payload,
      attempts: r.attempts, refusals: r.refusals, traceParent: r.trace_parent,
    }) as ClaimedDispatch),
    heldOrganisations: claim.held_organisations,
  };
}

/** Rows Temporal took: gone from the outbox. */
export async function completeDispatches(em: EntityManager, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await deleteDispatchRows(em, ids);
}

/** Longest error text kept on a row or an item. */
export const ERROR_TEXT_LIMIT = 1000;

/** Rows Temporal did not take: tried again later, with the reason kept for operators. */
export async function postponeDispatches(em: EntityManager, failures: DispatchFailure[]): Promise<void> {
  if (failures.length === 0) return;
  await postponeDispatchRows(em, failures.map((f) => ({ id: f.id, retry_in_ms: f.retryInMs, error: f.error.slice(0, ERROR_TEXT_LIMIT), refused: f.refused })));
}

/** The outbox's backlog (dead letters apart), for one organisation or (null) for all. */
export async function outboxBacklog(em: EntityManager, orgId: string | null): Promise<OutboxBacklog> {
  const row = await backlogCounts(em, orgId);
  return {
    waiting: Number(row.waiting),
    oldestAgeSeconds: Math.max(0, Math.floor(Number(row.oldest_age ?? 0))),
    deadLetters: Number(row.dead),
  };
}
