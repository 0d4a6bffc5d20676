/**
 * The outbox's SQL. Owns `workflow_dispatch`: rows written in the same transaction as the request
 * they serve (alone, or as the last part of another statement), leased by a dispatcher with
 * `for update skip locked` a few per organisation at a time, deleted once Temporal took them,
 * pushed back when it did not, kept as dead letters when it refused them for good, and counted for
 * /readyz, the dashboard and the front door's backlog cap.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { BULK_DISPATCH_KINDS, type DispatchKind } from '../domain/dispatch';
import { sql, statement, trustedSql, type NoRows, type Parameters, type Sql, type SqlValue } from '../db/sql';
import { clearRunsStarted, markRunsStarted, runsInEngine, runsStartedSince } from '../deliveries/engine-runs-store';

/** The key under which rows of no organisation (a buyer's fresh links) are claimed together. */
const NO_ORGANISATION = '00000000-0000-0000-0000-000000000000';

/**
 * A row's organisation as the claim's index holds it: rows of none under the nil uuid, so that each
 * group is found by an equality an index serves (`is not distinct from` walks every live row).
 */
const claimKey = (alias = '') => `coalesce(${alias}organisation_id, '${NO_ORGANISATION}'::uuid)`;

/** A row's lane: 1 for bulk work (BULK_DISPATCH_KINDS), claimed after the organisation's other rows; 0 otherwise. */
const claimLane = (alias = '') => `(case when ${alias}kind in (${BULK_DISPATCH_KINDS.map((k) => `'${k}'`).join(', ')}) then 1 else 0 end)`;

/**
 * The claim's index over live rows: organisation, lane, due time. Each organisation's next rows are
 * the first entries under its key, and the organisations with rows are found by skipping from key to
 * key, so a claim reads a few entries per organisation however deep the outbox (the migration
 * 20261204150000 creates it; the entity declares it from here).
 */
export const CLAIM_INDEX = `create index "workflow_dispatch_claim_index" on "workflow_dispatch" ((${claimKey()}), ${claimLane()}, "due_at") where "dead_at" is null`;

/** The webhook item whose run a row starts (a `fulfil-line` row's), null for other kinds: the item the engine's budget counts. */
const lineItemOf = (alias: string) => trustedSql(`case when ${alias}kind = 'fulfil-line' then (${alias}payload->>'deliveryItemId')::uuid end`);

/** A row of the insert's JSON parameter (see dispatchInsert). */
export interface DispatchRow {
  id: string;
  organisation_id: string | null;
  kind: DispatchKind;
  workflow_id: string;
  payload: unknown;
  trace_parent: string | null;
}

/**
 * `insert into workflow_dispatch …` from one JSON parameter (an array of DispatchRow): it stands
 * alone or ends another statement's data-modifying CTEs, so it commits with it. Due at once by the
 * database's clock, the one every dispatcher compares with (an injected business clock plays no
 * part in when work is done).
 */
export function dispatchInsert(rows: Parameters<{ rows: string }>['rows'] | Sql): Sql {
  return sql`insert into workflow_dispatch (id, organisation_id, kind, workflow_id, payload, created_at, due_at, attempts, trace_parent)
  select r.id, r.organisation_id, r.kind, r.workflow_id, r.payload, now(), now(), 0, r.trace_parent
  from jsonb_to_recordset(${rows}::jsonb) as r(id uuid, organisation_id uuid, kind text, workflow_id text, payload jsonb, trace_parent text)`;
}

const insertDispatches = statement<NoRows, { rows: string }>({}, (p) => dispatchInsert(p.rows));

/** Records dispatches (rows as dispatchRows makes them) on their own: one statement. */
export async function insertDispatchRows(em: EntityManager, rows: DispatchRow[]): Promise<void> {
  await insertDispatches.run(em, { rows: JSON.stringify(rows) });
}

/** A claimed row as stored. */
export interface ClaimedDispatchRow {
  id: string;
  organisation_id: string | null;
  kind: DispatchKind;
  workflow_id: string;
  payload: unknown;
  attempts: number;
  refusals: number;
  trace_parent: string | null;
}

/**
 * The engine's places for webhook fulfilment: runs of one organisation, and of all together
 * (DISPATCH_ORGANISATION_RUNS, DISPATCH_ENGINE_RUNS), the places of all together that one
 * organisation leaves to the others while they have work (DISPATCH_RESERVED_RUNS), and how far back
 * the runs an organisation started are counted at most to give a place that frees
 * (DISPATCH_FAIRNESS_WINDOW).
 */
export interface EngineRunLimits {
  runsPerOrganisation: number;
  engineRuns: number;
  reservedRuns: number;
  fairnessWindowMs: number;
}

const KEY = trustedSql(claimKey('w.'));
const LANE = trustedSql(claimLane('w.'));
const NIL = trustedSql(`'${NO_ORGANISATION}'::uuid`);
/** The due time of key `k`'s first due row in `lane`, read off the index; null when it has none. */
const firstDue = (lane: 0 | 1) => sql`(select w.due_at from workflow_dispatch w
         where ${KEY} = keys.k and ${LANE} = ${trustedSql(String(lane))} and w.dead_at is null and w.due_at <= now() order by w.due_at limit 1)`;

/** A claim's answer as stored: the rows it leased, and the organisations the budget held back (see claimDueRows). */
export interface ClaimedDispatchRows {
  rows: ClaimedDispatchRow[];
  held_organisations: string[];
}

const claimDue = statement<ClaimedDispatchRows, EngineRunLimits & { limit: number; leaseMs: number }>(
  { rows: true, held_organisations: true },
  (p) => sql`with recursive keys as (
       (select ${trustedSql(claimKey())} as k from workflow_dispatch where dead_at is null order by 1 limit 1)
       union all
       select (select ${KEY} from workflow_dispatch w where w.dead_at is null and ${KEY} > keys.k order by 1 limit 1) from keys where keys.k is not null),
     due as (select nullif(k, ${NIL}) as organisation_id, k, oldest
             from (select k, least(${firstDue(0)}, ${firstDue(1)}) as oldest from keys where k is not null) firsts where oldest is not null),
     busy as (select due.organisation_id, due.k, due.oldest, ${runsInEngine(sql`due.organisation_id`)} as runs,
                     ${runsStartedSince(p, sql`due.organisation_id`, sql`due.oldest`)} as starts from due),
     -- Null when nothing is due (the outer limit then reads no share at all).
     share as (select ceil(${p.limit}::numeric / nullif(count(*), 0))::int as rows from due),
     -- Rows of no organisation (a buyer's fresh links) take no place of the engine's budget.
     unowned as (select coalesce(least(count(*), (select rows from share)), 0) as rows from workflow_dispatch w
                  where ${KEY} = ${NIL} and w.dead_at is null and w.due_at <= now()),
     total as (select ${runsInEngine('everyone')} as runs),
     -- While another organisation has runs in the engine or rows due, one organisation's places stop
     -- short of the budget by the reserve (never below one).
     capped as (select busy.*, case when (select count(*) filter (where organisation_id is not null) from due) > 1 or (select runs from total) > busy.runs
                  then least(${p.runsPerOrganisation}, greatest(1, ${p.engineRuns}::int - ${p.reservedRuns}::int)) else ${p.runsPerOrganisation} end as cap from busy),
     picked as (select d.id, d.organisation_id, d.kind, d.workflow_id, d.payload, d.attempts, d.refusals, d.trace_parent
       from (select k, runs, cap from capped where runs < cap
             order by organisation_id is not null, starts, runs, oldest) o
       cross join lateral (
         select w.* from workflow_dispatch w
         where ${KEY} = o.k and w.dead_at is null and w.due_at <= now()
         order by ${LANE}, w.due_at limit least(o.cap - o.runs, (select rows from share)) for update skip locked) d
       limit least(${p.limit}, (select rows from unowned) + greatest(0, ${p.engineRuns} - (select runs from total)))),
     leased as (update workflow_dispatch w set due_at = now() + ${p.leaseMs}::int * interval '1 millisecond' from picked where w.id = picked.id),
     marked as (${markRunsStarted(sql`select ${lineItemOf('')} from picked`)}),
     taken as (select organisation_id, count(*) as rows from picked where organisation_id is not null group by organisation_id)
     select (select coalesce(json_agg(picked), '[]'::json) from picked) as rows,
       array(select c.organisation_id::text from capped c left join taken t using (organisation_id)
             where c.organisation_id is not null
               and (c.runs + coalesce(t.rows, 0) >= c.cap
                    or (select runs from total) + (select coalesce(sum(rows), 0) from taken) >= ${p.engineRuns})) as held_organisations`,
);

/**
 * Locks up to `limit` due rows for the caller's transaction, at most an equal share of them per
 * organisation with due rows (rows of no organisation count as one more), each organisation's bulk
 * rows after its others (an integrator's events or a version's notices wait while its sales do).
 * The engine's places for webhook fulfilment are a budget: `engineRuns` runs of all organisations together, at most
 * `runsPerOrganisation` of one. A place that frees goes first to the organisation that started the
 * fewest runs while its oldest due row waited (counted at most `fairnessWindowMs` back), then to the
 * one with the fewest runs in the engine, then to the one waiting longest. A tenant whose sales start
 * as they come has started none since its sale came in, so it gets the next place whatever another
 * tenant's backlog, however slow that backlog makes every run; two tenants that both wait share the
 * places by the runs each was given meanwhile. (Counted by runs in the engine alone, a small tenant
 * whose runs the flood slowed held as many places as the flooding one and fell behind; counted by
 * starts over a fixed window, it lost to a newly flooding tenant for a window after its own busy
 * spell.) The engine's queue, which every run waits in, stays as short as the budget; alone, an
 * organisation has the whole budget. While another organisation has runs in the engine or rows due,
 * one organisation holds at most `engineRuns - reservedRuns` places (never fewer than one): a flood's
 * runs start and end in waves, so with every place the flood's, another tenant's sale waited for the
 * next wave to end (up to a second and a half beside the two-tenant benchmark's flood); with places
 * left over, it finds one free.
 *
 * The claim is a lease, committed at once: its rows fall due again `leaseMs` later (so a process that
 * dies with rows in hand only delays them), and their webhook items count as runs in the engine from
 * the claim on (so every later claim, of any process, sees the places taken). Nobody holds a
 * transaction open while the engine answers. Rows another claim is leasing are skipped, not waited
 * for. Each share is locked as the outer limit reads it, so no row is leased that is not returned.
 *
 * Beside its rows, a claim names the organisations with rows due whose places are all taken once
 * its own rows start (their own cap, or the engine's whole budget): until a place frees, a new sale
 * of theirs would find nothing, so the dispatcher need not claim again for it.
 */
export async function claimDueRows(em: EntityManager, limit: number, runs: EngineRunLimits, leaseMs: number): Promise<ClaimedDispatchRows> {
  const [claim] = await claimDue.rows(em, {
    runsPerOrganisation: runs.runsPerOrganisation, engineRuns: runs.engineRuns, reservedRuns: runs.reservedRuns, fairnessWindowMs: runs.fairnessWindowMs,
    limit, leaseMs,
  });
  return claim;
}

const deleteDispatches = statement<NoRows, { ids: string }>(
  {},
  (p) => sql`delete from workflow_dispatch where id in (select jsonb_array_elements_text(${p.ids}::jsonb)::uuid)`,
);

/** Rows Temporal took: gone from the outbox (their webhook items were marked as in the engine by the claim). */
export async function deleteDispatchRows(tx: EntityManager, ids: string[]): Promise<void> {
  await deleteDispatches.run(tx, { ids: JSON.stringify(ids) });
}

const postpone = statement<NoRows, { failures: string }>(
  {},
  (p) => sql`with later as (update workflow_dispatch d set attempts = d.attempts + 1, refusals = d.refusals + f.refused::int, last_error = f.error,
       due_at = now() + f.retry_in_ms * interval '1 millisecond'
     from jsonb_to_recordset(${p.failures}::jsonb) as f(id uuid, retry_in_ms int, error text, refused boolean) where d.id = f.id
     returning ${lineItemOf('d.')} as item_id)
    ${clearRunsStarted(sql`select item_id from later`)}`,
);

/**
 * Rows to try again later: each with its delay, its (already shortened) error and whether the engine
 * refused it. Their webhook items no longer count as runs in the engine: their places go to others.
 */
export async function postponeDispatchRows(
  tx: EntityManager,
  failures: Array<{ id: string; retry_in_ms: number; error: string; refused: boolean }>,
): Promise<void> {
  await postpone.run(tx, { failures: JSON.stringify(failures) });
}

const deadLetter = statement<NoRows, { rows: string }>(
  {},
  (p) => sql`update workflow_dispatch d set attempts = d.attempts + 1, refusals = d.refusals + 1, last_error = f.error, dead_at = now()
     from jsonb_to_recordset(${p.rows}::jsonb) as f(id uuid, error text) where d.id = f.id`,
);

/** Rows refused for good: kept with their (already shortened) reason, never claimed again. */
export async function deadLetterDispatchRows(tx: EntityManager, rows: Array<{ id: string; error: string }>): Promise<void> {
  await deadLetter.run(tx, { rows: JSON.stringify(rows) });
}

/** The backlog's counts as read (count(*) comes as text, the age as a numeric text or null). */
export interface BacklogRow {
  waiting: string;
  dead: string;
  oldest_age: string | null;
}

const BACKLOG_COLUMNS = sql`select count(*) filter (where dead_at is null) as waiting, count(*) filter (where dead_at is not null) as dead,
       extract(epoch from now() - min(created_at) filter (where dead_at is null)) as oldest_age
     from workflow_dispatch`;
const backlogOfAll = statement<BacklogRow>({ waiting: true, dead: true, oldest_age: true }, () => BACKLOG_COLUMNS);
const backlogOfOrganisation = statement<BacklogRow, { orgId: string }>(
  { waiting: true, dead: true, oldest_age: true },
  (p) => sql`${BACKLOG_COLUMNS} where organisation_id = ${p.orgId}`,
);

/** The outbox's counts, for one organisation or (null) for all. */
export async function backlogCounts(em: EntityManager, orgId: string | null): Promise<BacklogRow> {
  const row = orgId === null ? await backlogOfAll.first(em, {}) : await backlogOfOrganisation.first(em, { orgId });
  return row!;
}

/**
 * How many live outbox rows organisation `o` of an enclosing read has outside the bulk lane, counting
 * no further than `cap` (so reading no more index entries than that), or null for the organisations
 * in `skip` (their count is known; each a parameter or a column): the front door's backlog cap, in its candidate read. Bulk rows
 * (its integrators' events waiting behind its sales) are not the front door's to refuse for.
 */
export function backlogWaitingOf(p: { cap: SqlValue; skip: SqlValue }): Sql {
  return sql`case when o.id = any(${p.skip}::uuid[]) then null else (select count(*)::int from
    (select 1 from workflow_dispatch wd where ${trustedSql(claimKey('wd.'))} = o.id and ${trustedSql(claimLane('wd.'))} = 0
       and wd.dead_at is null limit ${p.cap}) w) end`;
}
