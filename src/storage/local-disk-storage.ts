import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ObjectTooLargeError, type FileStorage, type ObjectStat, type StoredObject } from './file-storage';

const KEY_RE = /^[a-z0-9][a-z0-9/_-]*$/i;

/** Files on local disk under one root folder. */
export class LocalDiskStorage implements FileStorage {
  constructor(private readonly root: string) {}

  private pathOf(key: string): string {
    // Keys are internal (uuid segments), but refuse anything that could leave the root anyway.
    if (!KEY_RE.test(key) || key.split('/').some((s) => s === '' || s === '..')) {
      throw new Error(`invalid storage key`);
    }
    const full = path.resolve(this.root, key);
    if (!full.startsWith(path.resolve(this.root) + path.sep)) throw new Error('invalid storage key');
    return full;
  }

  async put(key: string, body: Readable, maxBytes: number): Promise<StoredObject> {
    const target = this.pathOf(key);
    await mkdir(path.dirname(target), { recursive: true });
    const partial = `${target}.partial`;
    const hash = createHash('sha256');
    let size = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        size += chunk.length;
        if (size > maxBytes) return callback(new ObjectTooLargeError(`file exceeds ${maxBytes} bytes`));
        hash.update(chunk);
        callback(null, chunk);
      },
    });
    try {
      await pipeline(body, meter, createWriteStream(partial));
      await rename(partial, target);
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
    return { size, sha256: hash.digest('hex') };
  }

  async stat(key: string): Promise<ObjectStat> {
    const info = await stat(this.pathOf(key));
    return { size: info.size, modifiedAt: info.mtime };
  }

  read(key: string, range?: { start: number; end: number }): Readable {
    return createReadStream(this.pathOf(key), range ? { start: range.start, end: range.end } : {});
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }
}
