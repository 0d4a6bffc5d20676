import type { Config } from '../config';
import type { FileStorage } from './file-storage';
import { LocalDiskStorage } from './local-disk-storage';
import { S3Storage, s3ClientOf } from './s3-storage';

/** The configured storage: S3 when STORAGE_URL is set (its bucket checked now), else local disk. */
export async function openFileStorage(config: Pick<Config, 'fileStorageDir' | 'objectStorage'>): Promise<FileStorage> {
  const target = config.objectStorage;
  if (!target) return new LocalDiskStorage(config.fileStorageDir);
  const storage = new S3Storage(s3ClientOf(target.s3), target.bucket, target.prefix);
  await storage.check();
  return storage;
}
