/**
 * The outbox table (`workflow_dispatch`): rows are written in the same transaction as the request
 * they serve, claimed by a dispatcher with `for update skip locked` (so two API processes never hold
 * the same row), deleted once Temporal took them, and pushed back when it did not.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';
import type { DispatchKind, DispatchRequest, NewDispatch } from '../domain/dispatch';
import { preparedRows } from '../db/sql';
import { currentTraceParent } from '../telemetry/tracing';

export type ClaimedDispatch = DispatchRequest & { id: string; workflowId: string; attempts: number; traceParent: string | null };

export interface DispatchFailure {
  id: string;
  error: string;
  /** How long until the row may be tried again (from the database's clock). */
  retryInMs: number;
}

/** What waits for the workflow engine: shown on /readyz and in the dashboard. */
export interface OutboxBacklog {
  waiting: number;
  /** Age of the oldest waiting row, in seconds; 0 when none waits. */
  oldestAgeSeconds: number;
}

/**
 * `insert into workflow_dispatch …` from one JSON parameter (`dispatchRows`): a fixed text that
 * stands alone or ends another statement's data-modifying CTEs, so it commits with it. Due at once
 * by the database's clock, the one every dispatcher compares with (an injected business clock plays
 * no part in when work is done).
 */
export const DISPATCH_INSERT_SQL = `insert into workflow_dispatch (id, organisation_id, kind, workflow_id, payload, created_at, due_at, attempts, trace_parent)
  select r.id, r.organisation_id, r.kind, r.workflow_id, r.payload, now(), now(), 0, r.trace_parent
  from jsonb_to_recordset(?::jsonb) as r(id uuid, organisation_id uuid, kind text, workflow_id text, payload jsonb, trace_parent text)`;

/** A row of DISPATCH_INSERT_SQL's parameter. */
export interface DispatchRow {
  id: string;
  organisation_id: string | null;
  kind: DispatchKind;
  workflow_id: string;
  payload: unknown;
  trace_parent: string | null;
}

/** The rows of DISPATCH_INSERT_SQL's parameter; they keep the current trace context (when tracing is on). */
export function dispatchRows(dispatches: NewDispatch[]): DispatchRow[] {
  const traceParent = currentTraceParent();
  return dispatches.map((d) => ({
    id: randomUUID(), organisation_id: d.orgId, kind: d.kind, workflow_id: d.workflowId, payload: d.payload, trace_parent: traceParent,
  }));
}

/** Records dispatches on their own (one statement). */
export async function enqueueDispatches(em: EntityManager, dispatches: NewDispatch[]): Promise<void> {
  if (dispatches.length === 0) return;
  await preparedRows(em, DISPATCH_INSERT_SQL, [JSON.stringify(dispatchRows(dispatches))]);
}

/**
 * Locks up to `limit` due rows, oldest first, for the caller's transaction; rows another
 * transaction holds are skipped, not waited for.
 */
export async function claimDueDispatches(tx: EntityManager, limit: number): Promise<ClaimedDispatch[]> {
  const rows = await preparedRows<{ id: string; kind: DispatchKind; workflow_id: string; payload: unknown; attempts: number; trace_parent: string | null }>(
    tx,
    `select id, kind, workflow_id, payload, attempts, trace_parent from workflow_dispatch
     where due_at <= now() order by due_at limit ? for update skip locked`,
    [limit],
  );
  return rows.map((r) => ({
    id: r.id, kind: r.kind, workflowId: r.workflow_id, payload: r.payload, attempts: r.attempts, traceParent: r.trace_parent,
  }) as ClaimedDispatch);
}

/** Rows Temporal took: gone from the outbox. */
export async function completeDispatches(tx: EntityManager, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await preparedRows(tx, 'delete from workflow_dispatch where id in (select jsonb_array_elements_text(?::jsonb)::uuid)', [JSON.stringify(ids)]);
}

/** Rows Temporal did not take: tried again later, with the reason kept for operators. */
export async function postponeDispatches(tx: EntityManager, failures: DispatchFailure[]): Promise<void> {
  if (failures.length === 0) return;
  await preparedRows(
    tx,
    `update workflow_dispatch d set attempts = d.attempts + 1, last_error = f.error,
       due_at = now() + f.retry_in_ms * interval '1 millisecond'
     from jsonb_to_recordset(?::jsonb) as f(id uuid, retry_in_ms int, error text) where d.id = f.id`,
    [JSON.stringify(failures.map((f) => ({ id: f.id, retry_in_ms: f.retryInMs, error: f.error.slice(0, 1000) })))],
  );
}

/** The outbox's backlog, for one organisation or (null) for all. */
export async function outboxBacklog(em: EntityManager, orgId: string | null): Promise<OutboxBacklog> {
  const [row] = await em.execute<Array<{ waiting: string; oldest_age: string | null }>>(
    `select count(*) as waiting, extract(epoch from now() - min(created_at)) as oldest_age
     from workflow_dispatch ${orgId === null ? '' : 'where organisation_id = ?'}`,
    orgId === null ? [] : [orgId],
  );
  return { waiting: Number(row.waiting), oldestAgeSeconds: Math.max(0, Math.floor(Number(row.oldest_age ?? 0))) };
}
