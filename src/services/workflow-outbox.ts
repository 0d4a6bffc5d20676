/**
 * The outbox table (`workflow_dispatch`): rows are written in the same transaction as the request
 * they serve, claimed by a dispatcher with `for update skip locked` (so two API processes never hold
 * the same row) a few per organisation at a time, deleted once Temporal took them, pushed back when
 * it did not, and kept as dead letters when it refused them for good.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';
import type { DispatchKind, DispatchRequest, NewDispatch } from '../domain/dispatch';
import { preparedRows } from '../db/legacy-sql';
import { sql, statement, type NoRows, type Parameters as SqlParameters, type Sql } from '../db/sql';
import { currentTraceParent } from '../telemetry/tracing';

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

/**
 * `insert into workflow_dispatch …` from one JSON parameter (`dispatchRows`): a fragment that
 * stands alone or ends another statement's data-modifying CTEs, so it commits with it. Due at once
 * by the database's clock, the one every dispatcher compares with (an injected business clock plays
 * no part in when work is done).
 */
export const dispatchInsert = (rows: SqlParameters<{ rows: string }>['rows']): Sql => sql`insert into workflow_dispatch (id, organisation_id, kind, workflow_id, payload, created_at, due_at, attempts, trace_parent)
  select r.id, r.organisation_id, r.kind, r.workflow_id, r.payload, now(), now(), 0, r.trace_parent
  from jsonb_to_recordset(${rows}::jsonb) as r(id uuid, organisation_id uuid, kind text, workflow_id text, payload jsonb, trace_parent text)`;

const insertDispatches = statement<NoRows, { rows: string }>({}, (p) => dispatchInsert(p.rows));

/** A row of `dispatchInsert`'s parameter. */
export interface DispatchRow {
  id: string;
  organisation_id: string | null;
  kind: DispatchKind;
  workflow_id: string;
  payload: unknown;
  trace_parent: string | null;
}

/** The rows of `dispatchInsert`'s parameter; they keep the current trace context (when tracing is on). */
export function dispatchRows(dispatches: NewDispatch[]): DispatchRow[] {
  const traceParent = currentTraceParent();
  return dispatches.map((d) => ({
    id: randomUUID(), organisation_id: d.orgId, kind: d.kind, workflow_id: d.workflowId, payload: d.payload, trace_parent: traceParent,
  }));
}

/** Records dispatches on their own (one statement). */
export async function enqueueDispatches(em: EntityManager, dispatches: NewDispatch[]): Promise<void> {
  if (dispatches.length === 0) return;
  await insertDispatches.run(em, { rows: JSON.stringify(dispatchRows(dispatches)) });
}

/**
 * An organisation's fulfilment runs in the engine: its webhook items waiting for an outcome, less
 * those whose start still waits in the outbox (one `fulfil-line` row per item; a dead letter's item
 * has its outcome). Read from Pending entries only (a partial index), never the whole log.
 */
const RUNS_IN_ENGINE = `greatest(0,
  (select count(*) from webhook_delivery wd join webhook_delivery_item wi on wi.delivery_id = wd.id
   where wd.organisation_id = due.organisation_id and wd.status = 'Pending' and wi.outcome is null and wi.workflow_id is not null)
  - (select count(*) from workflow_dispatch wq
     where wq.organisation_id = due.organisation_id and wq.kind = 'fulfil-line' and wq.dead_at is null))`;

/**
 * Locks up to `limit` due rows for the caller's transaction, an equal share of them per
 * organisation with due rows (rows without one count as one more organisation), so one
 * organisation's backlog delays only itself; alone, an organisation gets the whole batch. An
 * organisation with `runsPerOrganisation` fulfilment runs in the engine gets none until some finish:
 * what it has in the engine's queues is all that another organisation's run can find ahead of it
 * there. Organisations come in the order of their oldest due row and each gives its oldest rows;
 * rows another transaction holds are skipped, not waited for. Each share is locked as the outer
 * limit reads it, so no row is locked that is not returned.
 */
export async function claimDueDispatches(tx: EntityManager, limit: number, runsPerOrganisation: number): Promise<ClaimedDispatch[]> {
  const rows = await preparedRows<{
    id: string; organisation_id: string | null; kind: DispatchKind; workflow_id: string; payload: unknown; attempts: number; refusals: number; trace_parent: string | null;
  }>(
    tx,
    `with due as (select organisation_id, min(due_at) as oldest from workflow_dispatch
                  where dead_at is null and due_at <= now() group by organisation_id),
     room as (select due.organisation_id, due.oldest, ? - ${RUNS_IN_ENGINE} as room from due)
     select d.id, d.organisation_id, d.kind, d.workflow_id, d.payload, d.attempts, d.refusals, d.trace_parent
     from (select organisation_id, room from room where room > 0 order by oldest) o
     cross join lateral (
       select w.* from workflow_dispatch w
       where w.organisation_id is not distinct from o.organisation_id and w.dead_at is null and w.due_at <= now()
       order by w.due_at limit least(o.room, (select ceil(?::numeric / count(*))::int from due)) for update skip locked) d
     limit ?`,
    [runsPerOrganisation, limit, limit],
  );
  return rows.map((r) => ({
    id: r.id, orgId: r.organisation_id, kind: r.kind, workflowId: r.workflow_id, payload: r.payload,
    attempts: r.attempts, refusals: r.refusals, traceParent: r.trace_parent,
  }) as ClaimedDispatch);
}

/** Rows Temporal took: gone from the outbox. */
export async function completeDispatches(tx: EntityManager, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await preparedRows(tx, 'delete from workflow_dispatch where id in (select jsonb_array_elements_text(?::jsonb)::uuid)', [JSON.stringify(ids)]);
}

/** Longest error text kept on a row or an item. */
export const ERROR_TEXT_LIMIT = 1000;

/** Rows Temporal did not take: tried again later, with the reason kept for operators. */
export async function postponeDispatches(tx: EntityManager, failures: DispatchFailure[]): Promise<void> {
  if (failures.length === 0) return;
  await preparedRows(
    tx,
    `update workflow_dispatch d set attempts = d.attempts + 1, refusals = d.refusals + f.refused::int, last_error = f.error,
       due_at = now() + f.retry_in_ms * interval '1 millisecond'
     from jsonb_to_recordset(?::jsonb) as f(id uuid, retry_in_ms int, error text, refused boolean) where d.id = f.id`,
    [JSON.stringify(failures.map((f) => ({ id: f.id, retry_in_ms: f.retryInMs, error: f.error.slice(0, ERROR_TEXT_LIMIT), refused: f.refused })))],
  );
}

/** The outbox's backlog (dead letters apart), for one organisation or (null) for all. */
export async function outboxBacklog(em: EntityManager, orgId: string | null): Promise<OutboxBacklog> {
  const [row] = await em.execute<Array<{ waiting: string; oldest_age: string | null; dead: string }>>(
    `select count(*) filter (where dead_at is null) as waiting, count(*) filter (where dead_at is not null) as dead,
       extract(epoch from now() - min(created_at) filter (where dead_at is null)) as oldest_age
     from workflow_dispatch ${orgId === null ? '' : 'where organisation_id = ?'}`,
    orgId === null ? [] : [orgId],
  );
  return {
    waiting: Number(row.waiting),
    oldestAgeSeconds: Math.max(0, Math.floor(Number(row.oldest_age ?? 0))),
    deadLetters: Number(row.dead),
  };
}

/**
 * Whether an organisation has at least `cap` rows waiting: its next delivery is answered 503 and
 * retried by its platform, so its flood waits on its side, not in front of other organisations.
 * Reads at most `cap` index entries.
 */
export async function organisationBacklogFull(em: EntityManager, orgId: string, cap: number): Promise<boolean> {
  const rows = await preparedRows<{ full: number }>(
    em,
    'select 1 as full from workflow_dispatch where organisation_id = ? and dead_at is null offset ? limit 1',
    [orgId, cap - 1],
  );
  return rows.length > 0;
}
