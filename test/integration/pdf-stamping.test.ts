/**
 * PDF stamping (decisions §16), black box through the API and the download routes, on both storage
 * drivers (local disk, and S3 on the run's SeaweedFS): each buyer's PDF carries their email and order
 * on every page and their purchase in its metadata; the copy is made once per (purchase, file) and
 * served like any file (Range, If-Range, its own ETag, the ledger, limits, revocation); PDFs that
 * could not be stamped are refused at upload.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { degrees, PDFDocument, PDFName, PDFNumber, StandardFonts } from 'pdf-lib';
import { Purchase, StampedCopy, VersionFile } from '../../src/db/entities';
import { recordStampedCopy, stampedCopyOf } from '../../src/downloads/stamped-copy-store';
import { seedCallers, type ApiCallers } from '../helpers/api-callers';
import { issueToken, listen, seedPurchase, sha256 } from '../helpers/download-links';
import { startHarness, type Harness } from '../helpers/harness';
import { parsePdf, squash } from '../helpers/pdf-text';
import { createTestBucket, s3StorageEnv } from '../helpers/s3';

const ENCRYPTED = readFileSync(path.join(__dirname, '../fixtures/pdf/encrypted.pdf'));

/** A small book: three pages, the second shown turned (/Rotate 90), each with a line of its own. */
async function book(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const n of [1, 2, 3]) {
    const page = doc.addPage([420, 595]);
    if (n === 2) page.setRotation(degrees(90));
    page.drawText(`Chapter ${n}`, { x: 60, y: 500, font, size: 18 });
  }
  doc.setTitle('The Book');
  return Buffer.from(await doc.save());
}

/** A book of `pages` pages, a line on each. */
async function longBook(pages: number): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let n = 1; n <= pages; n++) doc.addPage([300, 400]).drawText(`Page ${n}`, { x: 20, y: 200, font, size: 12 });
  return Buffer.from(await doc.save());
}

/** A PDF that pdf-lib reads but cannot stamp. */
async function malformed(fault: 'no page tree' | 'no media box'): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([200, 200]);
  if (fault === 'no page tree') doc.catalog.set(PDFName.of('Pages'), PDFNumber.of(7));
  else page.node.delete(PDFName.of('MediaBox'));
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}

describe.each(['local disk', 'S3'] as const)('stamped PDFs on %s', (storageKind) => {
  let h: Harness;
  let c: ApiCallers;
  let base: string;
  let bookBytes: Buffer;
  let productId: string;
  let versionId: string;
  let pdfId: string;
  let textId: string;
  const TEXT = Buffer.from('notes that are not a PDF\n');

  const api = async <T>(method: string, url: string, body?: unknown): Promise<{ status: number; body: T }> => {
    const res = await fetch(`${base}${url}`, {
      method, headers: { ...c.owner, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as T };
  };

  interface Uploaded {
    id: string;
    files: Array<{ id: string; name: string }>;
    error?: string;
  }

  async function upload(product: string, label: string, files: Array<[string, Buffer, string]>): Promise<{ status: number; body: Uploaded }> {
    const form = new FormData();
    form.append('version', label);
    form.append('activate', 'true');
    for (const [name, bytes, type] of files) form.append('file', new Blob([new Uint8Array(bytes)], { type }), name);
    const res = await fetch(`${base}/api/products/${product}/versions`, { method: 'POST', headers: c.owner, body: form });
    return { status: res.status, body: (await res.json()) as Uploaded };
  }

  const fileUrl = (token: string, fileId: string) => `${base}/d/${token}/files/${fileId}`;

  async function download(token: string, fileId: string, headers: Record<string, string> = {}) {
    const res = await fetch(fileUrl(token, fileId), { headers });
    return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
  }

  async function buyer(email: string, orderId: string | null = null) {
    const seeded = await seedPurchase(h, c.orgId, { productId, versionId }, { email });
    if (orderId !== null) await h.orm.em.fork().nativeUpdate(Purchase, { id: seeded.purchaseId }, { externalOrderId: orderId });
    return seeded;
  }

  const copies = (purchaseId: string) => h.orm.em.fork().count(StampedCopy, { purchase: purchaseId });

  /** How many stamped copies the service has made (its /metrics counter). */
  async function copiesMade(): Promise<number> {
    const text = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
    return Number(/^delivery_pdf_copies_stamped_total (\d+)/m.exec(text)?.[1] ?? 0);
  }

  beforeAll(async () => {
    h = await startHarness({ worker: false, env: storageKind === 'S3' ? s3StorageEnv(await createTestBucket()) : {} });
    base = await listen(h);
    c = await seedCallers(h);
    bookBytes = await book();
    const created = await api<{ id: string; stampPdfs: boolean }>('POST', '/api/products', { name: 'The Book', slug: 'the-book', stampPdfs: true });
    expect(created).toMatchObject({ status: 201, body: { stampPdfs: true } });
    productId = created.body.id;
    const version = await upload(productId, '1.0.0', [['the-book.pdf', bookBytes, 'application/pdf'], ['notes.txt', TEXT, 'text/plain']]);
    expect(version.status).toBe(201);
    versionId = version.body.id;
    pdfId = version.body.files.find((f) => f.name === 'the-book.pdf')!.id;
    textId = version.body.files.find((f) => f.name === 'notes.txt')!.id;
  });
  afterAll(() => h?.close());

  test('every page of the served PDF names the buyer and the order; its metadata names the purchase', async () => {
    const { token, purchaseId } = await buyer('ann@example.com', 'ORD-1001');
    const res = await download(token, pdfId);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    const parsed = await parsePdf(res.body);
    expect(parsed.numpages).toBe(3);
    parsed.pages.forEach((page, index) => {
      expect(squash(page)).toContain(`Chapter ${index + 1}`);
      expect(squash(page)).toContain('Licensed to ann@example.com · Order ORD-1001');
    });
    expect(parsed.info.Subject).toContain(`Purchase ${purchaseId}`);
    expect(parsed.info.Keywords).toContain(`purchase:${purchaseId}`);
    // The seller's own metadata stays.
    expect(parsed.info.Title).toBe('The Book');
    // Its own validators: the copy's SHA-256, not the uploaded file's.
    expect(res.headers.get('etag')).toBe(`"${sha256(res.body)}"`);
    expect(res.headers.get('etag')).not.toBe(`"${sha256(bookBytes)}"`);
    expect(Number(res.headers.get('content-length'))).toBe(res.body.length);
  });

  test('a sale entered without an order id shows the purchase id', async () => {
    const { token, purchaseId } = await buyer('no-order@example.com');
    const parsed = await parsePdf((await download(token, pdfId)).body);
    for (const page of parsed.pages) expect(squash(page)).toContain(`Licensed to no-order@example.com · Order ${purchaseId}`);
  });

  test('a 2-part Range download of the stamped copy is byte-identical to a whole one', async () => {
    const { token } = await buyer('ranges@example.com', 'ORD-R');
    const whole = await download(token, pdfId);
    const etag = whole.headers.get('etag')!;
    const cut = Math.floor(whole.body.length / 3);
    const first = await download(token, pdfId, { range: `bytes=0-${cut - 1}` });
    expect(first.status).toBe(206);
    expect(first.headers.get('content-range')).toBe(`bytes 0-${cut - 1}/${whole.body.length}`);
    const rest = await download(token, pdfId, { range: `bytes=${cut}-`, 'if-range': etag });
    expect(rest.status).toBe(206);
    expect(Buffer.concat([first.body, rest.body]).equals(whole.body)).toBe(true);
    // A resume against another copy's validator gets the whole of this one.
    const stale = await download(token, pdfId, { range: `bytes=${cut}-`, 'if-range': `"${sha256(bookBytes)}"` });
    expect(stale.status).toBe(200);
    expect(stale.body.equals(whole.body)).toBe(true);
    expect((await download(token, pdfId, { 'if-none-match': etag })).status).toBe(304);
  });

  test('two buyers get different copies; other files are served unchanged', async () => {
    const one = await buyer('one@example.com', 'ORD-A');
    const two = await buyer('two@example.com', 'ORD-B');
    const [a, b] = [await download(one.token, pdfId), await download(two.token, pdfId)];
    expect(a.body.equals(b.body)).toBe(false);
    expect(a.headers.get('etag')).not.toBe(b.headers.get('etag'));
    expect(squash((await parsePdf(b.body)).text)).not.toContain('one@example.com');
    const notes = await download(one.token, textId);
    expect(notes.body.equals(TEXT)).toBe(true);
    expect(notes.headers.get('etag')).toBe(`"${sha256(TEXT)}"`);
    expect(await copies(one.purchaseId)).toBe(1);
  });

  test('two first requests at once make one copy, served to both', async () => {
    const { token, purchaseId } = await buyer('twice@example.com', 'ORD-T');
    const before = await copiesMade();
    const [a, b, c3] = await Promise.all([download(token, pdfId), download(token, pdfId), download(token, pdfId)]);
    expect([a.status, b.status, c3.status]).toEqual([200, 200, 200]);
    expect(a.body.equals(b.body) && a.body.equals(c3.body)).toBe(true);
    expect(await copies(purchaseId)).toBe(1);
    expect(await copiesMade()).toBe(before + 1);
    // Another process's copy of the same moment, recorded after this one (or in place of a copy
    // that is no longer the one recorded), is not recorded: the first stays the purchase's.
    const recorded = await stampedCopyOf(h.orm.em.fork(), purchaseId, pdfId);
    const late = { purchaseId, fileId: pdfId, storageKey: `stamped/${purchaseId}/${pdfId}-late`, size: 1, sha256: '0'.repeat(64) };
    expect(await recordStampedCopy(h.orm.em.fork(), late, null, new Date())).toBeUndefined();
    expect(await recordStampedCopy(h.orm.em.fork(), late, 'stamped/a-copy-replaced-meanwhile', new Date())).toBeUndefined();
    expect(await stampedCopyOf(h.orm.em.fork(), purchaseId, pdfId)).toEqual(recorded);
  });

  test('first requests of many buyers at once hold no database connection while their copies are made', async () => {
    // 24 buyers of a 1,000-page book at once: each stamp takes a while, longer side by side, while the
    // pool has 20 connections and a request waits at most a second for one.
    const long = await api<{ id: string }>('POST', '/api/products', { name: 'Long Book', slug: 'long-book', stampPdfs: true });
    const version = await upload(long.body.id, '1.0.0', [['long.pdf', await longBook(1_000), 'application/pdf']]);
    expect(version.status).toBe(201);
    const buyers = await Promise.all(Array.from({ length: 24 }, (_, i) => seedPurchase(
      h, c.orgId, { productId: long.body.id, versionId: version.body.id }, { email: `reader-${i}@example.com` })));
    // Watched from a connection of its own: sessions left in a transaction for a second or more.
    const watcher = new PgClient({ connectionString: h.config.databaseUrl });
    await watcher.connect();
    let held = 0;
    let done = false;
    const watching = (async () => {
      while (!done) {
        const { rows } = await watcher.query<{ held: number }>(`select count(*)::int as held from pg_stat_activity
          where datname = current_database() and state = 'idle in transaction' and state_change < now() - interval '1 second'`);
        held = Math.max(held, rows[0].held);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    try {
      const answers = await Promise.all(buyers.map((b) => download(b.token, version.body.files[0].id)));
      expect(answers.map((a) => a.status)).toEqual(Array(24).fill(200));
      expect(new Set(answers.map((a) => a.headers.get('etag'))).size).toBe(24);
    } finally {
      done = true;
      await watching;
      await watcher.end();
    }
    expect(held).toBe(0);
  }, 120_000);

  test('a copy whose bytes went missing from the storage is made again', async () => {
    const { token, purchaseId } = await buyer('lost@example.com', 'ORD-L');
    const first = await download(token, pdfId);
    const copy = await h.orm.em.fork().findOneOrFail(StampedCopy, { purchase: purchaseId });
    await h.storage.delete(copy.storageKey);
    const again = await download(token, pdfId);
    expect(again.status).toBe(200);
    expect(squash((await parsePdf(again.body)).text)).toContain('Licensed to lost@example.com · Order ORD-L');
    expect(again.body.length).toBe(first.body.length);
  });

  test('limits and revocation apply as to any file; a revoked purchase gets no copy made', async () => {
    const limited = await buyer('limited@example.com', 'ORD-LIM');
    await h.orm.em.fork().nativeUpdate(Purchase, { id: limited.purchaseId }, { downloadLimit: 1 });
    expect((await download(limited.token, pdfId)).status).toBe(200);
    // The whole copy went out once: the transfer counted, and the limit of one is reached.
    expect((await download(limited.token, pdfId)).status).toBe(410);

    const revoked = await buyer('revoked@example.com', 'ORD-REV');
    await h.orm.em.fork().nativeUpdate(Purchase, { id: revoked.purchaseId }, { revokedAt: new Date(), revokeReason: 'refund' });
    expect((await download(revoked.token, pdfId)).status).toBe(410);
    expect(await copies(revoked.purchaseId)).toBe(0);
  });

  test('an encrypted or unreadable PDF is refused at upload with the reason, and nothing is kept', async () => {
    const filesBefore = await h.orm.em.fork().count(VersionFile, {});
    const encrypted = await upload(productId, '2.0.0', [['good.pdf', bookBytes, 'application/pdf'], ['locked.pdf', ENCRYPTED, 'application/pdf']]);
    expect(encrypted.status).toBe(422);
    expect(encrypted.body.error).toMatch(/locked\.pdf cannot be stamped for buyers: the PDF is encrypted/);
    // A PDF by its name, whatever type the browser gave it.
    const unreadable = await upload(productId, '2.0.0', [['broken.pdf', Buffer.from('not a PDF at all'), 'application/octet-stream']]);
    expect(unreadable.status).toBe(422);
    expect(unreadable.body.error).toMatch(/broken\.pdf cannot be stamped for buyers: the PDF cannot be read/);
    // Readable, but not drawable on: a catalog whose /Pages is no page tree, a page without a /MediaBox.
    for (const [name, bytes] of [['no-page-tree.pdf', await malformed('no page tree')], ['no-media-box.pdf', await malformed('no media box')]] as const) {
      const refused = await upload(productId, '2.0.0', [[name, bytes, 'application/pdf']]);
      expect([refused.status, refused.body.error]).toEqual([422, expect.stringContaining(`${name} cannot be stamped for buyers: the PDF`)]);
    }
    expect(await h.orm.em.fork().count(VersionFile, {})).toBe(filesBefore);
  });

  test('a new active version gets copies of its own: a buyer moved to it is served the new edition, stamped, beside the old copy', async () => {
    const edition = await api<{ id: string }>('POST', '/api/products', { name: 'Editions', slug: 'editions', stampPdfs: true });
    const first = await upload(edition.body.id, '1.0.0', [['editions.pdf', bookBytes, 'application/pdf']]);
    const seeded = await seedPurchase(h, c.orgId, { productId: edition.body.id, versionId: first.body.id }, { email: 'reader@example.com' });
    await h.orm.em.fork().nativeUpdate(Purchase, { id: seeded.purchaseId }, { externalOrderId: 'ORD-ED' });
    const old = await download(seeded.token, first.body.files[0].id);
    expect(old.status).toBe(200);

    const second = await PDFDocument.load(bookBytes);
    second.addPage([420, 595]).drawText('Second edition', { x: 60, y: 500, font: await second.embedFont(StandardFonts.Helvetica), size: 18 });
    const next = await upload(edition.body.id, '2.0.0', [['editions.pdf', Buffer.from(await second.save()), 'application/pdf']]);
    expect(next.status).toBe(201);
    // As an update notice does: the purchase moves to the new version, and a fresh link goes out.
    await h.orm.em.fork().nativeUpdate(Purchase, { id: seeded.purchaseId }, { version: next.body.id });
    const fresh = await download(await issueToken(h, seeded.purchaseId), next.body.files[0].id);
    expect(fresh.status).toBe(200);
    const parsed = await parsePdf(fresh.body);
    expect(parsed.numpages).toBe(4);
    expect(squash(parsed.text)).toContain('Second edition');
    for (const page of parsed.pages) expect(squash(page)).toContain('Licensed to reader@example.com · Order ORD-ED');
    expect(await copies(seeded.purchaseId)).toBe(2);
  });

  test('turning stamping on checks the PDFs the product already has', async () => {
    const plain = await api<{ id: string; stampPdfs: boolean }>('POST', '/api/products', { name: 'Plain', slug: 'plain' });
    expect(plain.body.stampPdfs).toBe(false);
    expect((await upload(plain.body.id, '1.0.0', [['locked.pdf', ENCRYPTED, 'application/pdf']])).status).toBe(201);
    const refused = await api<{ error: string }>('PUT', `/api/products/${plain.body.id}`, { stampPdfs: true });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatch(/locked\.pdf cannot be stamped for buyers: the PDF is encrypted/);
    expect((await api<{ product: { stampPdfs: boolean } }>('GET', `/api/products/${plain.body.id}`)).body.product.stampPdfs).toBe(false);
    expect((await api<{ error: string }>('PUT', `/api/products/${plain.body.id}`, { stampPdfs: 'yes' })).body.error).toMatch(/stampPdfs must be true or false/);
  });
});
