import { createHash } from 'node:crypto';
import { Transform } from 'node:stream';
import { ObjectTooLargeError, type StoredObject } from './file-storage';

/**
 * A pass-through that counts and hashes what flows through it and fails past `maxBytes`: every
 * driver's `put` streams through one, so nothing is buffered whole to learn a file's size or digest.
 */
export function meteredStream(maxBytes: number): { meter: Transform; result: () => StoredObject } {
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
  return { meter, result: () => ({ size, sha256: hash.digest('hex') }) };
}
