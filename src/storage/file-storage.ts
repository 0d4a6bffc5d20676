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
 * Where product files live. Keys are made from internal ids only (never from request input), so no
 * caller can name a path of its own.
 */
export interface FileStorage {
  /** Streams `body` to `key`, computing size and SHA-256 on the way; aborts past `maxBytes`. */
  put(key: string, body: Readable, maxBytes: number): Promise<StoredObject>;
  stat(key: string): Promise<ObjectStat>;
  /** Byte range inclusive at both ends, as HTTP Range counts. */
  read(key: string, range?: { start: number; end: number }): Readable;
  delete(key: string): Promise<void>;
}

/** Thrown by `put` when the body exceeds its limit: the HTTP layer answers 413. */
export class ObjectTooLargeError extends Error {
  override name = 'ObjectTooLargeError';
}
