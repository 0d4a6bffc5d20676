import { createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { assertStorageKey, ObjectNotFoundError, type FileStorage, type ObjectStat, type StoredObject } from './file-storage';
import { meteredStream } from './metered';

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT';
}

/** Files on local disk under one root folder: the embedded default, for one API host. */
export class LocalDiskStorage implements FileStorage {
  readonly description: string;

  constructor(private readonly root: string) {
    this.description = `local disk ${root}`;
  }

  private pathOf(key: string): string {
    assertStorageKey(key);
    const full = path.resolve(this.root, key);
    if (!full.startsWith(path.resolve(this.root) + path.sep)) throw new Error('invalid storage key');
    return full;
  }

  async put(key: string, body: Readable, maxBytes: number): Promise<StoredObject> {
    const target = this.pathOf(key);
    await mkdir(path.dirname(target), { recursive: true });
    const partial = `${target}.partial`;
    const { meter, result } = meteredStream(maxBytes);
    try {
      await pipeline(body, meter, createWriteStream(partial));
      await rename(partial, target);
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
    return result();
  }

  async stat(key: string): Promise<ObjectStat> {
    try {
      const info = await stat(this.pathOf(key));
      return { size: info.size, modifiedAt: info.mtime };
    } catch (error) {
      throw isMissing(error) ? new ObjectNotFoundError(key) : error;
    }
  }

  async read(key: string, range?: { start: number; end: number }): Promise<Readable> {
    try {
      const handle = await open(this.pathOf(key), 'r');
      return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
    } catch (error) {
      throw isMissing(error) ? new ObjectNotFoundError(key) : error;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }
}
