import type { EntityManager } from '@mikro-orm/postgresql';
import { sql, statement } from '../db/sql';

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

const copyRecord = statement<StampedCopyRow, { purchaseId: string; fileId: string; storageKey: string; size: number; sha256: string; now: Date; replacing: string | null }>(
  { storage_key: true, size: true, sha256: true, created_at: true },
  (p) => sql`insert into stamped_copy (purchase_id, file_id, storage_key, size, sha256, created_at)
    values (${p.purchaseId}, ${p.fileId}, ${p.storageKey}, ${p.size}, ${p.sha256}, ${p.now})
    on conflict (purchase_id, file_id) do update
      set storage_key = excluded.storage_key, size = excluded.size, sha256 = excluded.sha256, created_at = excluded.created_at
      where stamped_copy.storage_key = ${p.replacing}
    returning storage_key, size, sha256, created_at`,
);

/**
 * Records the copy just stored, when no other is recorded, or in place of `replacing` (the key of a
 * copy whose bytes went missing) when that is still the one recorded. Undefined when another copy
 * was recorded first (made at the same moment elsewhere): that one is the purchase's.
 */
export function recordStampedCopy(
  em: EntityManager, copy: { purchaseId: string; fileId: string; storageKey: string; size: number; sha256: string }, replacing: string | null, now: Date,
): Promise<StampedCopyRow | undefined> {
  return copyRecord.first(em, { ...copy, replacing, now });
}
