/**
 * Version uploads on both storage drivers: local disk, and S3 on the run's SeaweedFS (a bucket of
 * this file's own): checksums of the bytes sent, and every refused upload leaving nothing behind.
 */
import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { Product, ProductVersion, VersionFile } from '../../src/db/entities';
import { AUTH_FAILURES, seedCallers, type ApiCallers } from '../helpers/api-callers';
import { startHarness, type Harness } from '../helpers/harness';
import { bucketContents, createTestBucket, s3StorageEnv } from '../helpers/s3';
import { seedProduct } from '../helpers/seed';

/** Small, so that the 413 paths are cheap to reach. */
const MAX_UPLOAD_BYTES = 64 * 1024;
const MAX_UPLOAD_REQUEST_BYTES = 100 * 1024;
const MAX_UPLOAD_FILES = 4;
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

describe.each(['local disk', 'S3'] as const)('files on %s', (storageKind) => {
  let h: Harness;
  let c: ApiCallers;

  beforeAll(async () => {
    h = await startHarness({
      worker: false,
      env: {
        MAX_UPLOAD_BYTES: String(MAX_UPLOAD_BYTES), MAX_UPLOAD_REQUEST_BYTES: String(MAX_UPLOAD_REQUEST_BYTES), MAX_UPLOAD_FILES: String(MAX_UPLOAD_FILES),
        ...(storageKind === 'S3' ? s3StorageEnv(await createTestBucket()) : {}),
      },
    });
    c = await seedCallers(h);
  });
  afterAll(() => h?.close());

  type Part = { name: string; value: string } | { name: string; filename: string; bytes: Buffer; type?: string };

  const BOUNDARY = '----delivery-test-boundary';

  function multipart(parts: Part[]): Buffer {
    const chunks: Buffer[] = [];
    for (const part of parts) {
      if ('value' in part) {
        chunks.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`));
      } else {
        chunks.push(Buffer.from(
          `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${part.filename}"\r\n` +
          `Content-Type: ${part.type ?? 'application/octet-stream'}\r\n\r\n`,
        ), part.bytes, Buffer.from('\r\n'));
      }
    }
    chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
    return Buffer.concat(chunks);
  }

  function upload(productId: string, parts: Part[], headers: Record<string, string> = c.owner) {
    return h.app.inject({
      method: 'POST',
      url: `/api/products/${productId}/versions`,
      headers: { ...headers, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
      payload: multipart(parts),
    });
  }

  const list = (productId: string, headers: Record<string, string> = c.owner) =>
    h.app.inject({ method: 'GET', url: `/api/products/${productId}/versions`, headers });

  const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
  const bytesOf = (size: number, seed: number) => Buffer.from(Array.from({ length: size }, (_, i) => (i * 31 + seed) % 256));

  /** Every file the storage holds: on disk under FILE_STORAGE_DIR, or every object and unfinished upload in the bucket. */
  async function storedFiles(): Promise<string[]> {
    const target = h.config.objectStorage;
    if (target) return bucketContents(target.s3, target.bucket);
    const root = h.config.fileStorageDir;
    const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
    return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name)).sort();
  }

  async function readBack(storageKey: string): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of await h.storage.read(storageKey)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  async function rowCounts() {
    const em = h.orm.em.fork();
    return { versions: await em.count(ProductVersion, {}), files: await em.count(VersionFile, {}) };
  }

  async function draftProduct(orgId = c.orgId) {
    return (await seedProduct(h, orgId, { status: 'draft', withVersion: false })).productId;
  }

  describe('POST /api/products/{productId}/versions', () => {
    test('two files: 201, stored with checksums of the bytes sent, names stripped of any folder', async () => {
      const productId = await draftProduct();
      const a = bytesOf(40_000, 1);
      const b = bytesOf(1234, 2);
      const res = await upload(productId, [
        { name: 'version', value: '1.2.0' },
        { name: 'file', filename: '../../etc/manual.pdf', bytes: a, type: 'application/pdf' },
        { name: 'file', filename: 'C:\\Users\\me\\app.zip', bytes: b },
      ]);
      expect(res.statusCode).toBe(201);
      const body = res.json();
      expect(Object.keys(body).sort()).toEqual(['createdAt', 'files', 'id', 'productId', 'status', 'version']);
      expect(body).toMatchObject({ productId, version: '1.2.0', status: 'ready' });
      expect(new Date(body.createdAt).toISOString()).toBe(body.createdAt);
      expect(body.files).toEqual([
        { id: expect.any(String), name: 'app.zip', size: b.length, sha256: sha256(b) },
        { id: expect.any(String), name: 'manual.pdf', size: a.length, sha256: sha256(a) },
      ]);

      const em = h.orm.em.fork();
      for (const [file, bytes] of [[body.files[0], b], [body.files[1], a]] as const) {
        const row = await em.findOneOrFail(VersionFile, file.id, { populate: ['version'] });
        expect(row.version.id).toBe(body.id);
        expect(row.storageKey).toBe(`files/${file.id}`);
        expect(await readBack(row.storageKey)).toEqual(bytes);
        expect(sha256(await readBack(row.storageKey))).toBe(file.sha256);
      }
      expect((await em.findOneOrFail(VersionFile, body.files[1].id)).contentType).toBe('application/pdf');
      // Not activated unless asked.
      expect((await em.findOneOrFail(Product, productId)).activeVersion).toBeNull();
    });

    test('the version field may come after the files; activate=true makes it the active version', async () => {
      const productId = await draftProduct();
      const bytes = bytesOf(5000, 3);
      const res = await upload(productId, [
        { name: 'file', filename: 'late.bin', bytes },
        { name: 'version', value: ' 2.0 ' },
        { name: 'activate', value: 'true' },
      ]);
      expect(res.statusCode).toBe(201);
      expect(res.json()).toMatchObject({ version: '2.0', files: [{ name: 'late.bin', size: 5000, sha256: sha256(bytes) }] });
      const got = await h.app.inject({ method: 'GET', url: `/api/products/${productId}`, headers: c.owner });
      expect(got.json().activeVersion).toEqual({ id: res.json().id, productId, version: '2.0', status: 'ready' });
    });

    test('a member can upload', async () => {
      const productId = await draftProduct();
      const res = await upload(productId, [{ name: 'version', value: '1' }, { name: 'file', filename: 'm.txt', bytes: Buffer.from('m') }], c.member);
      expect(res.statusCode).toBe(201);
    });

    test('a file of exactly the limit is accepted', async () => {
      const productId = await draftProduct();
      const bytes = bytesOf(MAX_UPLOAD_BYTES, 4);
      const res = await upload(productId, [{ name: 'version', value: 'max' }, { name: 'file', filename: 'max.bin', bytes }]);
      expect(res.statusCode).toBe(201);
      expect(res.json().files[0]).toMatchObject({ size: MAX_UPLOAD_BYTES, sha256: sha256(bytes) });
    });

    describe('failures leave no file on disk and no rows', () => {
      let productId: string;
      let before: { files: string[]; rows: Awaited<ReturnType<typeof rowCounts>> };
      beforeEach(async () => {
        productId = await draftProduct();
        expect((await upload(productId, [{ name: 'version', value: 'taken' }, { name: 'file', filename: 't.txt', bytes: Buffer.from('t') }])).statusCode).toBe(201);
        before = { files: await storedFiles(), rows: await rowCounts() };
      });
      async function expectNothingLeft() {
        expect(await storedFiles()).toEqual(before.files);
        expect(await rowCounts()).toEqual(before.rows);
      }
      const small = (name: string) => ({ name: 'file', filename: name, bytes: bytesOf(2000, 5) });

      test('a file past MAX_UPLOAD_BYTES → 413 {error}', async () => {
        const res = await upload(productId, [{ name: 'version', value: 'big' }, { name: 'file', filename: 'big.bin', bytes: bytesOf(MAX_UPLOAD_BYTES + 1, 6) }]);
        expect(res.statusCode).toBe(413);
        expect(res.json()).toEqual({ error: `a file exceeds the upload limit of ${MAX_UPLOAD_BYTES} bytes` });
        await expectNothingLeft();
      });

      test('files each within MAX_UPLOAD_BYTES but past MAX_UPLOAD_REQUEST_BYTES together → 413, nothing kept', async () => {
        const res = await upload(productId, [
          { name: 'version', value: 'together' },
          { name: 'file', filename: 'a.bin', bytes: bytesOf(60 * 1024, 1) },
          { name: 'file', filename: 'b.bin', bytes: bytesOf(60 * 1024, 2) },
        ]);
        expect(res.statusCode).toBe(413);
        expect(res.json()).toEqual({ error: `the files of one upload exceed the limit of ${MAX_UPLOAD_REQUEST_BYTES} bytes together` });
        await expectNothingLeft();
      });

      test('more than MAX_UPLOAD_FILES files → 413, nothing kept', async () => {
        const res = await upload(productId, [
          { name: 'version', value: 'many' },
          ...Array.from({ length: MAX_UPLOAD_FILES + 1 }, (_, i) => small(`f${i}.bin`)),
        ]);
        expect(res.statusCode).toBe(413);
        await expectNothingLeft();
      });

      test('a second file past the limit → 413, the first one stored is deleted', async () => {
        const res = await upload(productId, [
          { name: 'version', value: 'big2' }, small('ok.bin'), { name: 'file', filename: 'big.bin', bytes: bytesOf(3 * MAX_UPLOAD_BYTES, 7) },
        ]);
        expect(res.statusCode).toBe(413);
        await expectNothingLeft();
      });

      test('over real HTTP, a 2 MB file streamed in chunks → 413, nothing kept', async () => {
        // Listens for the rest of the file; the harness closes the app.
        const base = await h.app.listen({ host: '127.0.0.1', port: 0 });
        const body = multipart([{ name: 'version', value: 'streamed' }, { name: 'file', filename: 'huge.bin', bytes: bytesOf(2 * 1024 * 1024, 8) }]);
        const chunks = Array.from({ length: Math.ceil(body.length / 65536) }, (_, i) => body.subarray(i * 65536, (i + 1) * 65536));
        const res = await fetch(`${base}/api/products/${productId}/versions`, {
          method: 'POST',
          headers: { ...c.owner, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
          body: new ReadableStream({ pull(controller) { const next = chunks.shift(); if (next) controller.enqueue(next); else controller.close(); } }),
          duplex: 'half',
        } as RequestInit);
        expect(res.status).toBe(413);
        expect(await res.json()).toEqual({ error: `a file exceeds the upload limit of ${MAX_UPLOAD_BYTES} bytes` });
        await expectNothingLeft();
      });

      test.each([
        ['a body cut off inside a file', () => multipart([{ name: 'version', value: 'cut' }, small('cut.bin')]).subarray(0, 1500), `multipart/form-data; boundary=${BOUNDARY}`],
        ['no boundary parameter', () => multipart([{ name: 'version', value: 'nb' }, small('nb.bin')]), 'multipart/form-data'],
        ['a boundary that never occurs', () => multipart([{ name: 'version', value: 'wb' }, small('wb.bin')]), 'multipart/form-data; boundary=elsewhere'],
        ['garbage', () => Buffer.from('\u0000\u0001 not multipart at all'), `multipart/form-data; boundary=${BOUNDARY}`],
      ])('a malformed body (%s) → 400 {error}', async (_case, payload, type) => {
        const res = await h.app.inject({
          method: 'POST', url: `/api/products/${productId}/versions`, headers: { ...c.owner, 'content-type': type }, payload: payload(),
        });
        expect(res.statusCode).toBe(400);
        expect(typeof res.json().error).toBe('string');
        await expectNothingLeft();
      });

      test('a duplicate version label sent first → 409 before any file is stored', async () => {
        const res = await upload(productId, [{ name: 'version', value: 'taken' }, small('dup.bin')]);
        expect(res.statusCode).toBe(409);
        expect(res.json().error).toContain('taken');
        await expectNothingLeft();
      });

      test('a duplicate version label sent after the files → 409, the files are deleted', async () => {
        const res = await upload(productId, [small('a.bin'), small('b.bin'), { name: 'version', value: 'taken' }]);
        expect(res.statusCode).toBe(409);
        await expectNothingLeft();
      });

      test('concurrent uploads of one new label: one 201, one 409, the loser\'s files deleted', async () => {
        const parts = [small('x.bin'), { name: 'version', value: 'raced' }];
        const results = await Promise.all([upload(productId, parts), upload(productId, parts)]);
        expect(results.map((r) => r.statusCode).sort()).toEqual([201, 409]);
        expect(await storedFiles()).toHaveLength(before.files.length + 1);
        expect(await rowCounts()).toEqual({ versions: before.rows.versions + 1, files: before.rows.files + 1 });
      });

      test.each([
        ['no files', 'at least one file is required (multipart parts named "file")', [{ name: 'version', value: '9' }]],
        ['no version', 'version is required', [small('a.bin')]],
        ['a blank version', 'version is required', [small('a.bin'), { name: 'version', value: '  ' }]],
        ['a version with a NUL character', 'version contains a NUL character', [small('a.bin'), { name: 'version', value: '1.0\u0000' }]],
        ['activate not a boolean', 'activate must be "true" or "false"', [{ name: 'version', value: '9' }, { name: 'activate', value: 'yes' }, small('a.bin')]],
        ['a file in another field', 'unexpected file field "upload" (files go in "file" parts)', [{ name: 'version', value: '9' }, small('a.bin'), { name: 'upload', filename: 'u.bin', bytes: Buffer.from('u') }]],
        ['a file without a name', 'each file part needs a file name', [{ name: 'version', value: '9' }, small('a.bin'), { name: 'file', filename: '', bytes: Buffer.from('') }]],
      ] as Array<[string, string, Part[]]>)('%s → 400 %j', async (_case, message, parts) => {
        const res = await upload(productId, parts);
        expect(res.statusCode).toBe(400);
        expect(res.json()).toEqual({ error: message });
        await expectNothingLeft();
      });
    });

    test('a JSON body → 415 {error}', async () => {
      const productId = await draftProduct();
      const res = await h.app.inject({
        method: 'POST', url: `/api/products/${productId}/versions`,
        headers: { ...c.owner, 'content-type': 'application/json' }, payload: JSON.stringify({ version: '1' }),
      });
      expect(res.statusCode).toBe(415);
      expect(typeof res.json().error).toBe('string');
    });

    test.each([
      ['an unknown product', async () => UNKNOWN_ID],
      ['a malformed id', async () => 'not-a-uuid'],
      ['another organisation\'s product', async () => draftProduct(c.otherOrgId)],
    ])('%s → 404, nothing stored', async (_case, productId) => {
      const id = await productId();
      const files = await storedFiles();
      const rows = await rowCounts();
      const res = await upload(id, [{ name: 'version', value: '1' }, { name: 'file', filename: 'x', bytes: Buffer.from('x') }]);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'product not found' });
      expect(await storedFiles()).toEqual(files);
      expect(await rowCounts()).toEqual(rows);
    });

    test.each(AUTH_FAILURES)('%s → %i', async (_case, status, headers) => {
      const productId = await draftProduct();
      const res = await upload(productId, [{ name: 'version', value: '1' }, { name: 'file', filename: 'x', bytes: Buffer.from('x') }], headers(c));
      expect(res.statusCode).toBe(status);
      expect(typeof res.json().error).toBe('string');
    });
  });

  describe('GET /api/products/{productId}/versions', () => {
    test('the same objects as the uploads answered, newest first', async () => {
      const productId = await draftProduct();
      const first = (await upload(productId, [{ name: 'version', value: '1.0' }, { name: 'file', filename: 'one.txt', bytes: Buffer.from('one') }])).json();
      const second = (await upload(productId, [
        { name: 'version', value: '1.1' },
        { name: 'file', filename: 'b.txt', bytes: Buffer.from('bee') },
        { name: 'file', filename: 'a.txt', bytes: Buffer.from('ay') },
      ])).json();
      const res = await list(productId);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual([second, first]);
    });

    test('a product without versions → []', async () => {
      const res = await list(await draftProduct());
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual([]);
    });

    test.each([
      ['an unknown product', async () => UNKNOWN_ID],
      ['a malformed id', async () => '..%2F..%2Fetc'],
      ['another organisation\'s product', async () => (await seedProduct(h, c.otherOrgId)).productId],
    ])('%s → 404', async (_case, productId) => {
      const res = await list(await productId());
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'product not found' });
    });

    test('a member can list', async () => {
      expect((await list(await draftProduct(), c.member)).statusCode).toBe(200);
    });

    test.each(AUTH_FAILURES)('%s → %i', async (_case, status, headers) => {
      const res = await list(await draftProduct(), headers(c));
      expect(res.statusCode).toBe(status);
      expect(typeof res.json().error).toBe('string');
    });
  });

  test('/openapi.json documents both version routes and the multipart body', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const route = doc.paths['/api/products/{productId}/versions'];
    expect(Object.keys(route).sort()).toEqual(['get', 'post']);
    // OpenAPI 3.1 writes the nullish body (streamed, not parsed) as anyOf its object and null.
    const schema = route.post.requestBody.content['multipart/form-data'].schema as { anyOf?: Array<{ type: string; properties?: object }>; properties?: object };
    const body = schema.anyOf?.find((s) => s.type === 'object') ?? schema;
    expect(Object.keys(body.properties!).sort()).toEqual(['activate', 'file', 'version']);
    expect(route.post.responses['201'].content['application/json'].schema.properties).toHaveProperty('files');
    expect(route.post.responses['413'].content['application/json'].schema.properties).toHaveProperty('error');
  });
});
