import type { EntityManager } from '@mikro-orm/postgresql';
import { sql, statement, trustedSql, type NoRows } from '../db/sql';

/**
 * The downloads' SQL: the bytes served to each purchase per file, and the report of completed
 * transfers (the served-files ledger is the activity log's `file_download` entries).
 * Owns the table download_coverage.
 */

/** The most separate byte ranges a coverage keeps: a piece that would make more is not added (its bytes still count as sent). */
export const MAX_COVERAGE_RANGES = 16;

/** Coverage untouched for this long belongs to a transfer nobody finished: housekeeping forgets it. */
export const IDLE_COVERAGE_MS = 30 * 24 * 3_600_000;

const bytesReserve = statement<{ purchase_id: string }, { purchaseId: string; fileId: string; bytes: number; now: Date; budget: number | null }>(
  { purchase_id: true },
  (p) => sql`insert into download_coverage (purchase_id, file_id, served, bytes_sent, updated_at)
     select ${p.purchaseId}::uuid, ${p.fileId}::uuid, '{}'::int8multirange, ${p.bytes}::int8, ${p.now}::timestamptz
     where ${p.budget}::int8 is null or ${p.bytes}::int8 <= ${p.budget}::int8
     on conflict (purchase_id, file_id) do update
       set bytes_sent = download_coverage.bytes_sent + excluded.bytes_sent, updated_at = excluded.updated_at
       where ${p.budget}::int8 is null or download_coverage.bytes_sent + excluded.bytes_sent <= ${p.budget}::int8
     returning purchase_id`,
);

/**
 * Counts `bytes` of a file as sent to the purchase unless that takes its bytes sent past `budget`
 * (null: no budget). Whether they were counted.
 */
export async function reserveCoverageBytes(
  em: EntityManager, purchaseId: string, fileId: string, bytes: number, budget: number | null, now: Date,
): Promise<boolean> {
  return (await bytesReserve.rows(em, { purchaseId, fileId, bytes, now, budget })).length > 0;
}

const rangeServed = statement<{ complete: boolean }, { purchaseId: string; fileId: string; start: number; end: number; now: Date; fileSize: number }>(
  { complete: true },
  (p) => sql`insert into download_coverage (purchase_id, file_id, served, updated_at)
       values (${p.purchaseId}, ${p.fileId}, int8multirange(int8range(${p.start}, ${p.end})), ${p.now})
       on conflict (purchase_id, file_id) do update
         set served = case when (select count(*) from unnest(download_coverage.served + excluded.served)) <= ${trustedSql(String(MAX_COVERAGE_RANGES))}
                           then download_coverage.served + excluded.served else download_coverage.served end,
             updated_at = excluded.updated_at
       returning served @> int8range(0, ${p.fileSize}) as complete`,
);

/**
 * Adds bytes `start`..`end` (inclusive) to what the purchase was served of the file
 * (merged; left out when the coverage would keep more than MAX_COVERAGE_RANGES ranges). Whether the
 * coverage now holds the whole file (`fileSize` bytes).
 */
export async function addServedRange(
  em: EntityManager, purchaseId: string, fileId: string, range: { start: number; end: number }, fileSize: number, now: Date,
): Promise<boolean> {
  return (await rangeServed.first(em, { purchaseId, fileId, start: range.start, end: range.end + 1, now, fileSize }))!.complete;
}

const servedClear = statement<NoRows, { purchaseId: string; fileId: string }>(
  {},
  (p) => sql`update download_coverage set served = '{}' where purchase_id = ${p.purchaseId} and file_id = ${p.fileId}`,
);

/** A completed transfer: the next one of the file starts from no bytes served (its bytes sent stay). */
export async function clearServedRanges(em: EntityManager, purchaseId: string, fileId: string): Promise<void> {
  await servedClear.run(em, { purchaseId, fileId });
}

const purchaseCoverageDelete = statement<NoRows, { purchaseId: string }>(
  {},
  (p) => sql`delete from download_coverage where purchase_id = ${p.purchaseId}`,
);

/** Re-arm (decisions §10): the purchase starts from nothing, its bytes sent and any unfinished transfer forgotten. */
export async function forgetPurchaseCoverage(em: EntityManager, purchaseId: string): Promise<void> {
  await purchaseCoverageDelete.run(em, { purchaseId });
}

const idleCoverageClear = statement<NoRows, { before: Date }>(
  {},
  (p) => sql`update download_coverage set served = '{}' where updated_at < ${p.before} and not isempty(served)`,
);

/** Clears idle coverage; the row and its bytes sent stay, so waiting never refills a byte budget. How many rows it cleared. */
export function pruneIdleCoverage(em: EntityManager, now: Date): Promise<number> {
  return idleCoverageClear.run(em, { before: new Date(now.getTime() - IDLE_COVERAGE_MS) });
}
