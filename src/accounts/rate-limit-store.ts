/**
 * Rate limits shared by every API process. Owns `rate_limit_counter`: fixed-window counters (the
 * limits of /my and sign-in) and spaced slots (paced sending), each one row per key.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql, statement, type NoRows } from '../db/sql';

/** A counter after a hit: its count, and its window's end in epoch milliseconds (bigint text). */
export interface CounterRow {
  count: number;
  reset_ms: string;
}

const hit = statement<CounterRow, { key: string; resetAt: Date; now: Date }>(
  { count: true, reset_ms: true },
  (p) => sql`insert into rate_limit_counter (key, count, reset_at) values (${p.key}, 1, ${p.resetAt})
     on conflict (key) do update set
       count = case when rate_limit_counter.reset_at <= ${p.now} then 1 else rate_limit_counter.count + 1 end,
       reset_at = case when rate_limit_counter.reset_at <= ${p.now} then excluded.reset_at else rate_limit_counter.reset_at end
     returning count, (extract(epoch from reset_at) * 1000)::bigint as reset_ms`,
);

/**
 * Counts one hit against `key`: a new window ending at `resetAt` when there was none or the last
 * one ended by `now`. One atomic statement.
 */
export async function countHit(em: EntityManager, key: string, resetAt: Date, now: Date): Promise<CounterRow> {
  return (await hit.first(em, { key, resetAt, now }))!;
}

/**
 * Many hits in one statement, the hits of one key summed (one row may be updated once per
 * statement), rows taken in key order so that two batches never wait for each other in a cycle.
 * Its commit does not wait for the WAL flush (synchronous_commit off for its own implicit
 * transaction): a crash may forget the last hits of a window, which only lets a few more calls
 * through, where a flush per batch would bound how fast every counted route can answer.
 */
const hits = statement<CounterRow & { key: string }, { keys: string[]; resetAts: Date[]; now: Date }>(
  { key: true, count: true, reset_ms: true },
  (p) => sql`with batch as (
       select h.key, count(*)::int as n, max(h.reset_at) as reset_at
       from unnest(${p.keys}::text[], ${p.resetAts}::timestamptz[]) as h(key, reset_at)
       cross join (select set_config('synchronous_commit', 'off', true)) as unflushed
       group by h.key)
     insert into rate_limit_counter as r (key, count, reset_at)
     select key, n, reset_at from batch order by key
     on conflict (key) do update set
       count = case when r.reset_at <= ${p.now} then excluded.count else r.count + excluded.count end,
       reset_at = case when r.reset_at <= ${p.now} then excluded.reset_at else r.reset_at end
     returning r.key, r.count, (extract(epoch from r.reset_at) * 1000)::bigint as reset_ms`,
);

/**
 * Counts hits against their keys (a key may come more than once), each with the end of the new
 * window it would start, as `countHit` does one by one: one statement. Answers each key's counter
 * after all of its hits.
 */
export async function countHits(em: EntityManager, batch: Array<{ key: string; resetAt: Date }>, now: Date): Promise<Map<string, CounterRow>> {
  const rows = await hits.rows(em, { keys: batch.map((h) => h.key), resetAts: batch.map((h) => h.resetAt), now });
  return new Map(rows.map((row) => [row.key, { count: row.count, reset_ms: row.reset_ms }]));
}

const reserve = statement<{ wait_ms: number }, { key: string; spacingMs: number }>(
  { wait_ms: true },
  (p) => sql`insert into rate_limit_counter as r (key, count, reset_at) values (${p.key}, 1, clock_timestamp() + ${p.spacingMs}::float8 * interval '1 millisecond')
     on conflict (key) do update set count = 1, reset_at = greatest(r.reset_at, clock_timestamp()) + ${p.spacingMs}::float8 * interval '1 millisecond'
     returning (extract(epoch from r.reset_at - clock_timestamp()) * 1000 - ${p.spacingMs}::numeric)::float8 as wait_ms`,
);

/** Reserves `key`'s next slot, slots `spacingMs` apart by the database's clock; the wait for it in ms (negative: none). */
export async function reserveNextSlot(em: EntityManager, key: string, spacingMs: number): Promise<number> {
  return (await reserve.first(em, { key, spacingMs }))!.wait_ms;
}

const clear = statement<NoRows, { key: string }>({}, (p) => sql`delete from rate_limit_counter where key = ${p.key}`);

export async function deleteCounter(em: EntityManager, key: string): Promise<void> {
  await clear.run(em, { key });
}

const prune = statement<NoRows, { now: Date; batch: number }>(
  {},
  (p) => sql`delete from rate_limit_counter where key in (select key from rate_limit_counter where reset_at <= ${p.now} limit ${p.batch})`,
);

/** Deletes up to `batch` counters whose window ended by `now`; how many went. */
export function deleteEndedCounters(em: EntityManager, now: Date, batch: number): Promise<number> {
  return prune.run(em, { now, batch });
}
