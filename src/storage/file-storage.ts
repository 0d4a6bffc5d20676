import type { Readable } from 'node:stream';

export interface StoredObject {
  size: number;
  sha256: string;
}

export interface ObjectStat {
  size: number;
  modifiedAt: Date;
}

/**
 * Where product files live: local disk (the embedded default) or S3-compatible object storage
 * (STORAGE_URL). Keys are made from internal ids only (never from request input), so no caller can
 * name a path of its own.
 */
export interface FileStorage {
  /**
   * Streams `body` to `key`, computing size and SHA-256 on the way; aborts past `maxBytes`. A put
   * that fails or is refused leaves nothing under `key`.
   */
  put(key: string, body: Readable, maxBytes: number): Promise<StoredObject>;
  /** Throws ObjectNotFoundError when nothing is stored under `key`. */
  stat(key: string): Promise<ObjectStat>;
  /** Byte range inclusive at both ends, as HTTP Range counts; ObjectNotFoundError when missing. */
  read(key: string, range?: { start: number; end: number }): Promise<Readable>;
  /** Deleting a key that holds nothing is not an error. */
  delete(key: string): Promise<void>;
  /** Where the files are, for logs and the CLI (`local disk /var/files`, `s3://bucket/prefix`). */
  readonly description: string;
}

/** Thrown by `put` when the body exceeds its limit: the HTTP layer answers 413. */
export class ObjectTooLargeError extends Error {
  override name = 'ObjectTooLargeError';
}

export class ObjectNotFoundError extends Error {
  override name = 'ObjectNotFoundError';
  constructor(key: string) {
    super(`no stored object under ${key}`);
  }
}

/** The key shape every driver accepts: uuid-like segments, nothing that could climb out of a root. */
export function assertStorageKey(key: string): void {
  if (!/^[a-z0-9][a-z0-9/_-]*$/i.test(key) || key.split('/').some((s) => s === '' || s === '..')) {
    throw new Error('invalid storage key');
  }
}
