/**
 * The storage contract, one test file for both drivers: local disk (the embedded default) and S3 on
 * a real S3-compatible server (SeaweedFS, started by global setup). Upload with size and SHA-256,
 * ranged reads, missing objects, refused and failed uploads leaving nothing, deletion, and a
 * 256 MiB file streamed both ways.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { ObjectNotFoundError, ObjectTooLargeError, type FileStorage } from '../../src/storage/file-storage';
import { LocalDiskStorage } from '../../src/storage/local-disk-storage';
import { S3Storage, s3ClientOf } from '../../src/storage/s3-storage';
import { bucketContents, createTestBucket, testS3Settings } from '../helpers/s3';

const MiB = 1024 * 1024;

interface Driver {
  storage: FileStorage;
  /** Every object key and unfinished upload left in the driver's place, besides the files. */
  leftovers(): Promise<string[]>;
  close(): Promise<void>;
}

const drivers: Array<[string, () => Promise<Driver>]> = [
  ['local disk', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'storage-contract-'));
    return {
      storage: new LocalDiskStorage(root),
      leftovers: async () => (await readdir(root, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => e.name),
      close: () => rm(root, { recursive: true, force: true }),
    };
  }],
  ['S3 (SeaweedFS)', async () => {
    const bucket = await createTestBucket();
    const client = s3ClientOf(testS3Settings());
    return {
      storage: new S3Storage(client, bucket, 'contract/'),
      leftovers: () => bucketContents(testS3Settings(), bucket),
      close: async () => client.destroy(),
    };
  }],
];

function bytes(size: number, seed = 1): Buffer {
  return Buffer.from(Array.from({ length: size }, (_, i) => (i * 31 + seed) % 251));
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** `mib` MiB made chunk by chunk (never whole in memory), with its SHA-256 once it has been read. */
function generated(mib: number): { stream: Readable; digest: () => string } {
  const block = randomBytes(MiB);
  const hash = createHash('sha256');
  let index = 0;
  const stream = new Readable({
    read() {
      if (index === mib) return this.push(null);
      const chunk = Buffer.from(block);
      chunk.writeUInt32BE(index, 0);
      index += 1;
      hash.update(chunk);
      this.push(chunk);
    },
  });
  return { stream, digest: () => hash.digest('hex') };
}

describe.each(drivers)('%s', (_name, open) => {
  let driver: Driver;
  let storage: FileStorage;
  beforeAll(async () => {
    driver = await open();
    storage = driver.storage;
  });
  afterAll(() => driver?.close());

  test('put streams the body and returns its size and SHA-256; stat and a whole read give it back', async () => {
    const data = bytes(300_000);
    expect(await storage.put('files/a', Readable.from([data.subarray(0, 1000), data.subarray(1000)]), 1 * MiB)).toEqual({ size: data.length, sha256: sha256(data) });
    expect((await storage.stat('files/a')).size).toBe(data.length);
    expect((await readAll(await storage.read('files/a'))).equals(data)).toBe(true);
  });

  test('ranged reads are inclusive at both ends: first byte, middle, last byte, whole', async () => {
    const data = bytes(10_000, 7);
    await storage.put('files/ranged', Readable.from([data]), MiB);
    for (const [start, end] of [[0, 0], [1234, 5678], [9_999, 9_999], [0, 9_999]]) {
      expect((await readAll(await storage.read('files/ranged', { start, end }))).equals(data.subarray(start, end + 1))).toBe(true);
    }
  });

  test('an empty file is a file', async () => {
    expect(await storage.put('files/empty', Readable.from([]), MiB)).toEqual({ size: 0, sha256: sha256(Buffer.alloc(0)) });
    expect((await storage.stat('files/empty')).size).toBe(0);
  });

  test('a missing object: stat and read say ObjectNotFoundError; deleting it is no error', async () => {
    await expect(storage.stat('files/never-stored')).rejects.toBeInstanceOf(ObjectNotFoundError);
    await expect(storage.read('files/never-stored')).rejects.toBeInstanceOf(ObjectNotFoundError);
    await expect(storage.delete('files/never-stored')).resolves.toBeUndefined();
  });

  test('refused past its limit (in one part, and after several parts went up) or failed mid-way: put rejects and leaves nothing', async () => {
    const before = await driver.leftovers();
    await expect(storage.put('files/too-big', Readable.from([bytes(2_000)]), 1_000)).rejects.toBeInstanceOf(ObjectTooLargeError);
    // 20 MiB against a 18 MiB limit: two 8 MiB parts are uploaded before the limit is hit.
    await expect(storage.put('files/too-big-multipart', generated(20).stream, 18 * MiB)).rejects.toBeInstanceOf(ObjectTooLargeError);
    // Fails once the driver is reading it (a timer could fire before the driver listens for errors).
    let reads = 0;
    const failing = new Readable({
      read() {
        reads += 1;
        if (reads === 1) this.push(bytes(64 * 1024));
        else setImmediate(() => this.destroy(new Error('client went away')));
      },
    });
    await expect(storage.put('files/broken', failing, 64 * MiB)).rejects.toThrow('client went away');
    for (const key of ['files/too-big', 'files/too-big-multipart', 'files/broken']) {
      await expect(storage.stat(key)).rejects.toBeInstanceOf(ObjectNotFoundError);
    }
    expect(await driver.leftovers()).toEqual(before);
  });

  test("deleting a version's files removes every one of them and nothing else", async () => {
    const keys = ['files/v1-a', 'files/v1-b', 'files/v1-c'];
    for (const key of keys) await storage.put(key, Readable.from([bytes(100)]), MiB);
    await storage.put('files/other', Readable.from([bytes(100)]), MiB);
    await Promise.all(keys.map((key) => storage.delete(key)));
    for (const key of keys) await expect(storage.stat(key)).rejects.toBeInstanceOf(ObjectNotFoundError);
    expect((await storage.stat('files/other')).size).toBe(100);
  });

  test('keys are internal: anything that could leave the root or bucket prefix is refused', async () => {
    for (const key of ['../escape', 'files/../../x', '/abs', 'files//double', 'files/a b']) {
      await expect(storage.put(key, Readable.from([bytes(1)]), MiB)).rejects.toThrow('invalid storage key');
    }
  });

  test('256 MiB streamed in and out: sizes and SHA-256 agree, read back in 1 MiB-bounded chunks', async () => {
    const source = generated(256);
    const put = await storage.put('files/large', source.stream, 300 * MiB);
    expect(put).toEqual({ size: 256 * MiB, sha256: source.digest() });
    const hash = createHash('sha256');
    let size = 0;
    let largestChunk = 0;
    for await (const chunk of await storage.read('files/large')) {
      hash.update(chunk as Buffer);
      size += (chunk as Buffer).length;
      largestChunk = Math.max(largestChunk, (chunk as Buffer).length);
    }
    expect({ size, sha256: hash.digest('hex') }).toEqual(put);
    expect(largestChunk).toBeLessThanOrEqual(MiB);
    const tail = await readAll(await storage.read('files/large', { start: 256 * MiB - 10, end: 256 * MiB - 1 }));
    expect(tail).toHaveLength(10);
  }, 180_000);
});
