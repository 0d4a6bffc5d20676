/**
 * `npm run cli -- storage migrate --to s3://…`: copies every product file the database knows from
 * one storage to another, so an installation can move from local disk to object storage. Safe to
 * run again and to stop half-way: a file already in the target with its recorded size and SHA-256
 * is left as it is; anything else is copied, then read back and checked against the recorded
 * SHA-256. The source is never changed.
 */
import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { storedFilesAfter, type StoredFileRow } from '../catalogue/catalogue-store';
import { ObjectNotFoundError, type FileStorage } from '../storage/file-storage';
import { readInBatches } from './keyset-batches';

export interface StorageMigrationResult {
  from: string;
  to: string;
  files: number;
  copied: number;
  alreadyThere: number;
  bytesCopied: number;
  /** Files that could not be copied or did not verify, with why; the command exits 1 when any. */
  failed: Array<{ fileId: string; storageKey: string; error: string }>;
}

async function sha256Of(storage: FileStorage, key: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of await storage.read(key)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Whether `key` in `storage` already holds exactly the recorded bytes. */
async function holds(storage: FileStorage, key: string, size: number, sha256: string): Promise<boolean> {
  try {
    if ((await storage.stat(key)).size !== size) return false;
  } catch (error) {
    if (error instanceof ObjectNotFoundError) return false;
    throw error;
  }
  return size === 0 || (await sha256Of(storage, key)) === sha256;
}

export async function migrateStorage(
  em: EntityManager,
  from: FileStorage,
  to: FileStorage,
  progress: (message: string) => void,
): Promise<StorageMigrationResult> {
  const result: StorageMigrationResult = { from: from.description, to: to.description, files: 0, copied: 0, alreadyThere: 0, bytesCopied: 0, failed: [] };
  const batches = await readInBatches<StoredFileRow>((after, size) => storedFilesAfter(em, after, size));
  for await (const batch of batches) {
    for (const file of batch) {
      result.files += 1;
      const size = Number(file.size);
      try {
        if (await holds(to, file.storage_key, size, file.sha256)) {
          result.alreadyThere += 1;
          continue;
        }
        const copied = await to.put(file.storage_key, await from.read(file.storage_key), size);
        if (copied.size !== size || copied.sha256 !== file.sha256) {
          await to.delete(file.storage_key);
          throw new Error(`the source's bytes differ from the record (size ${copied.size}, SHA-256 ${copied.sha256})`);
        }
        if (!(await holds(to, file.storage_key, size, file.sha256))) throw new Error('the copy read back differs from the record');
        result.copied += 1;
        result.bytesCopied += size;
      } catch (error) {
        result.failed.push({ fileId: file.id, storageKey: file.storage_key, error: (error as Error).message });
      }
      if (result.files % 100 === 0) progress(`storage migrate: ${result.files} files looked at, ${result.copied} copied`);
    }
  }
  return result;
}
