import type { EntityManager } from '@mikro-orm/postgresql';
import { sql, statement, trustedSql, type NoRows, type Parameters } from '../db/sql';
import { COUNTED_TRANSFERS } from '../purchases/link-store';

/**
 * The downloads' SQL: the bytes served to each purchase per file, and the report of completed
 * transfers (the served-files ledger is the activity log's `file_download` entries).
 * Owns the table download_coverage.
 */

/** The most separate byte ranges a coverage keeps: a piece that would make more is not added (its bytes still count as sent). */
export const MAX_COVERAGE_RANGES = 16;

/** Coverage untouched for this long belongs to a transfer nobody finished: housekeeping forgets it. */
export const IDLE_COVERAGE_MS = 30 * 24 * 3_600_000;

const purchaseTransfersLock = statement<{ id: string }, { purchaseId: string }>(
  { id: true }, (p) => sql`select id from purchase where id = ${p.purchaseId} for no key update`,
);

/**
 * The purchase's transfers that hold a place under its limit besides this file's: those completed
 * since the purchase or its last re-arm, and those of its other files started and not finished.
 */
const PLACES_TAKEN = (p: Parameters<{ purchaseId: string; fileId: string }>) => sql`(
  (select ${COUNTED_TRANSFERS} from purchase p where p.id = ${p.purchaseId}::uuid)
  + (select count(*) from download_coverage o where o.purchase_id = ${p.purchaseId}::uuid and o.file_id <> ${p.fileId}::uuid and o.transfer_open))`;

interface Reservation { purchaseId: string; fileId: string; bytes: number; now: Date; budget: number | null; places: number | null }

const bytesReserve = statement<{ purchase_id: string }, Reservation>(
  { purchase_id: true },
  (p) => sql`insert into download_coverage (purchase_id, file_id, served, bytes_sent, transfer_open, updated_at)
     select ${p.purchaseId}::uuid, ${p.fileId}::uuid, '{}'::int8multirange, ${p.bytes}::int8, true, ${p.now}::timestamptz
     where (${p.budget}::int8 is null or ${p.bytes}::int8 <= ${p.budget}::int8)
       and (${p.places}::int8 is null or ${PLACES_TAKEN(p)} < ${p.places}::int8)
     on conflict (purchase_id, file_id) do update
       set bytes_sent = download_coverage.bytes_sent + excluded.bytes_sent, transfer_open = true, updated_at = excluded.updated_at
       where (${p.budget}::int8 is null or download_coverage.bytes_sent + excluded.bytes_sent <= ${p.budget}::int8)
         and (${p.places}::int8 is null or ${PLACES_TAKEN(p)} < ${p.places}::int8)
     returning purchase_id`,
);

/**
 * Counts `bytes` of a file as sent to the purchase, and its transfer of the file as under way,
 * unless that takes its bytes sent past `limit.budget` or the purchase's transfers past
 * `limit.transfers`: those completed, and those of its other files started and not finished (each
 * holds its place until it finishes, so transfers of different files at once cannot all pass a
 * count none of them has added to yet). Null: no limit. Whether they were counted. A limited
 * purchase's reservations take turns on its row, so each counts the one before.
 */
export async function reserveCoverageBytes(
  em: EntityManager, purchaseId: string, fileId: string, bytes: number,
  limit: { transfers: number; budget: number } | null, now: Date,
): Promise<boolean> {
  const reservation = { purchaseId, fileId, bytes, now, budget: limit?.budget ?? null, places: limit?.transfers ?? null };
  if (limit === null) return (await bytesReserve.rows(em, reservation)).length > 0;
  return em.transactional(async (tx) => {
    await purchaseTransfersLock.run(tx, { purchaseId });
    return (await bytesReserve.rows(tx, reservation)).length > 0;
  });
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
  (p) => sql`update download_coverage set served = '{}', transfer_open = false where purchase_id = ${p.purchaseId} and file_id = ${p.fileId}`,
);

/** A completed transfer: the next one of the file starts from no bytes served (its bytes sent stay) and holds no place. */
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
  (p) => sql`update download_coverage set served = '{}', transfer_open = false
    where updated_at < ${p.before} and (not isempty(served) or transfer_open)`,
);

/**
 * Clears idle coverage: its unfinished transfer no longer holds a place under the limit; the row
 * and its bytes sent stay, so waiting never refills a byte budget. How many rows it cleared.
 */
export function pruneIdleCoverage(em: EntityManager, now: Date): Promise<number> {
  return idleCoverageClear.run(em, { before: new Date(now.getTime() - IDLE_COVERAGE_MS) });
}
