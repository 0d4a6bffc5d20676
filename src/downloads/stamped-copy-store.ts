import type { EntityManager } from '@mikro-orm/postgresql';
import { sql, statement, type NoRows } from '../db/sql';

/**
 * The stamped PDFs' SQL (decisions §16): one copy per (purchase, file), where it is stored and what
 * it holds. Owns the table stamped_copy.
 */

export interface StampedCopyRow {
  storage_key: string;
  size: string | number;
  sha256: string;
  created_at: Date | string;
}

const copyRead = statement<StampedCopyRow, { purchaseId: string; fileId: string }>(
  { storage_key: true, size: true, sha256: true, created_at: true },
  (p) => sql`select storage_key, size, sha256, created_at from stamped_copy where purchase_id = ${p.purchaseId} and file_id = ${p.fileId}`,
);

/** The purchase's stamped copy of the file, if one was made. */
export function stampedCopyOf(em: EntityManager, purchaseId: string, fileId: string): Promise<StampedCopyRow | undefined> {
  return copyRead.first(em, { purchaseId, fileId });
}

const copyLock = statement<{ locked: unknown }, { purchaseId: string; fileId: string }>(
  { locked: true },
  (p) => sql`select pg_advisory_xact_lock(hashtextextended('stamped_copy:' || ${p.purchaseId}::text || '/' || ${p.fileId}::text, 0))::text as locked`,
);

/**
 * Holds, until the transaction ends, the right to make the purchase's copy of the file: two first
 * requests at once (in any process) make one copy, the second finding the first's.
 */
export async function lockStampedCopy(tx: EntityManager, purchaseId: string, fileId: string): Promise<void> {
  await copyLock.run(tx, { purchaseId, fileId });
}

const copyRecord = statement<NoRows, { purchaseId: string; fileId: string; storageKey: string; size: number; sha256: string; now: Date }>(
  {},
  (p) => sql`insert into stamped_copy (purchase_id, file_id, storage_key, size, sha256, created_at)
    values (${p.purchaseId}, ${p.fileId}, ${p.storageKey}, ${p.size}, ${p.sha256}, ${p.now})
    on conflict (purchase_id, file_id) do update
      set storage_key = excluded.storage_key, size = excluded.size, sha256 = excluded.sha256, created_at = excluded.created_at`,
);

/** Records the copy just stored (replacing the record of one whose bytes went missing). */
export async function recordStampedCopy(
  tx: EntityManager, copy: { purchaseId: string; fileId: string; storageKey: string; size: number; sha256: string }, now: Date,
): Promise<void> {
  await copyRecord.run(tx, { ...copy, now });
}
