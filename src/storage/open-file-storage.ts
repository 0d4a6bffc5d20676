import type { Config } from '../config';
import type { FileStorage } from './file-storage';
import { LocalDiskStorage } from './local-disk-storage';

/**
 * The configured storage: S3 when STORAGE_URL is set (its bucket checked now), else local disk.
 * The S3 driver, and with it the AWS SDK (about 30 modules), is loaded only for S3: a process on local
 * disk, and each test file that starts the service, would otherwise load it for nothing.
 */
export async function openFileStorage(config: Pick<Config, 'fileStorageDir' | 'objectStorage'>): Promise<FileStorage> {
  const target = config.objectStorage;
  if (!target) return new LocalDiskStorage(config.fileStorageDir);
  const { S3Storage, s3ClientOf } = await import('./s3-storage');
  const storage = new S3Storage(s3ClientOf(target.s3), target.bucket, target.prefix);
  await storage.check();
  return storage;
}
