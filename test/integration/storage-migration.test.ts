/**
 * `npm run cli -- storage migrate --to s3://…`: every file the database knows copied from local disk
 * to a bucket on the run's S3 server, each read back and checked against its SHA-256; a second run
 * copies nothing; a damaged copy is copied again; a source that differs from its record is reported
 * and fails the command.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { migrateStorage } from '../../src/services/storage-migration';
import { S3Storage, s3ClientOf } from '../../src/storage/s3-storage';
import { addVersionFile } from '../helpers/download-links';
import { startHarness, type Harness } from '../helpers/harness';
import { createTestBucket, s3StorageEnv, testS3Settings } from '../helpers/s3';
import { seedOrganisation, seedProduct } from '../helpers/seed';

const ROOT = path.resolve(__dirname, '../..');
const run = promisify(execFile);

let h: Harness;
let target: S3Storage;
let bucket: string;
let keys: string[];
/** The keys of files with bytes in them (the empty file cannot be damaged). */
let nonEmptyKeys: string[];

beforeAll(async () => {
  h = await startHarness({ worker: false });
  bucket = await createTestBucket();
  target = new S3Storage(s3ClientOf(testS3Settings()), bucket, 'moved');
  const org = await seedOrganisation(h);
  const products = [await seedProduct(h, org.orgId), await seedProduct(h, org.orgId)];
  await addVersionFile(h, products[0].versionId, 'big.bin', Buffer.alloc(9 * 1024 * 1024, 7));
  await addVersionFile(h, products[1].versionId, 'empty.txt', Buffer.alloc(0));
  const rows = await h.orm.em.fork().execute<Array<{ storage_key: string; size: string }>>('select storage_key, size from version_file order by id');
  keys = rows.map((r) => r.storage_key);
  nonEmptyKeys = rows.filter((r) => Number(r.size) > 0).map((r) => r.storage_key);
});
afterAll(() => h?.close());

const progress = () => undefined;

test('copies every file, verified; a second run finds them all there and copies nothing', async () => {
  const first = await migrateStorage(h.orm.em.fork(), h.storage, target, progress);
  expect(first).toEqual(expect.objectContaining({ files: 4, copied: 4, alreadyThere: 0, failed: [] }));
  expect(first.bytesCopied).toBeGreaterThan(9 * 1024 * 1024);
  for (const key of keys) expect((await target.stat(key)).size).toBe((await h.storage.stat(key)).size);

  const again = await migrateStorage(h.orm.em.fork(), h.storage, target, progress);
  expect(again).toEqual(expect.objectContaining({ files: 4, copied: 0, alreadyThere: 4, bytesCopied: 0, failed: [] }));
});

test('a damaged copy (same size, other bytes) is copied again; a source that differs from its record is reported, not copied', async () => {
  const [damaged, corruptSource] = nonEmptyKeys;
  const size = (await h.storage.stat(damaged)).size;
  await target.put(damaged, Readable.from([Buffer.alloc(size, 0x21)]), size);
  const original = Buffer.concat(await (await h.storage.read(corruptSource)).toArray());
  await h.storage.put(corruptSource, Readable.from([Buffer.alloc(original.length, 0x42)]), original.length);
  await target.delete(corruptSource);

  const result = await migrateStorage(h.orm.em.fork(), h.storage, target, progress);
  expect(result).toEqual(expect.objectContaining({ files: 4, copied: 1, alreadyThere: 2 }));
  expect(result.failed).toEqual([expect.objectContaining({ storageKey: corruptSource, error: expect.stringMatching(/differ from the record/) })]);
  await expect(target.stat(corruptSource)).rejects.toThrow(/no stored object/);
  await h.storage.put(corruptSource, Readable.from([original]), original.length);
});

test('the CLI command: one JSON line, exit 0 when everything is there, the target named by --to', async () => {
  // The target's S3 settings; the storage in use stays the harness's local disk.
  const s3 = s3StorageEnv(bucket);
  delete s3.STORAGE_URL;
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: h.config.databaseUrl, DATA_DIR: h.config.dataDir, ...s3 };
  const cli = await run(process.execPath, ['dist/src/cli/main.js', 'storage', 'migrate', '--to', `s3://${bucket}/moved`], { cwd: ROOT, env });
  const lines = cli.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(JSON.parse(lines[0])).toEqual(expect.objectContaining({ to: `s3://${bucket}/moved`, files: 4, copied: 1, alreadyThere: 3, failed: [] }));

  const refused = await run(process.execPath, ['dist/src/cli/main.js', 'storage', 'migrate', '--to', 'not-a-url'], { cwd: ROOT, env }).catch((e: { code: number; stderr: string }) => e);
  expect(refused).toEqual(expect.objectContaining({ code: 1, stderr: expect.stringContaining('STORAGE_URL: "not-a-url" is not s3://bucket') }));
}, 120_000);
