import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { ActivityLogEntry, DownloadToken } from '../../src/db/entities';
import { sha256Hex } from '../../src/security/secrets';
import { startHarness, type Harness } from '../helpers/harness';
import { seedOrganisation, seedProduct, type SeededProduct } from '../helpers/seed';
import { addVersionFile, issueToken, listen, seedPurchase, sha256 } from '../helpers/download-links';
import { eventually } from '../helpers/webhooks';

/** The service's clock, moved by the tests: links expire without waiting their lifetime (DOWNLOAD_LINK_TTL). */
let offsetMs = 0;
const clock = () => new Date(Date.now() + offsetMs);
const HOUR = 3_600_000;

let h: Harness;
/** How long a link works from issue and from each opening (DOWNLOAD_LINK_TTL, 48 h by default). */
const linkTtl = () => h.config.downloadLinks.ttlMs;
let base: string;
let org: { orgId: string };
let product: SeededProduct;
/** A larger file of random bytes for the Range cases. */
let bigId: string;
const big = randomBytes(256 * 1024 + 123);
const UNICODE_NAME = 'Résumé “final” 2026.pdf';
let unicodeId: string;

beforeAll(async () => {
  h = await startHarness({ clock });
  base = await listen(h);
  org = await seedOrganisation(h, { name: 'Acme Books' });
  product = await seedProduct(h, org.orgId, { name: 'Ebook Pro' });
  bigId = await addVersionFile(h, product.versionId, 'ebook-pro.zip', big);
  unicodeId = await addVersionFile(h, product.versionId, UNICODE_NAME, Buffer.from('pdf'));
});
afterAll(() => h?.close());
afterEach(() => {
  offsetMs = 0;
});

const fileUrl = (token: string, fileId: string) => `${base}/d/${token}/files/${fileId}`;

async function freshToken(): Promise<{ token: string; purchaseId: string }> {
  return seedPurchase(h, org.orgId, product, { now: clock() });
}

async function tokenRow(token: string): Promise<DownloadToken> {
  return h.orm.em.fork().findOneOrFail(DownloadToken, { tokenHash: sha256Hex(token) });
}

async function ledger(kind: 'file_download' | 'download_session', tokenId: string): Promise<ActivityLogEntry[]> {
  return h.orm.em.fork().find(ActivityLogEntry, { kind, token: tokenId }, { orderBy: { createdAt: 'asc' } });
}

/** A request that no client library normalises: the path goes out byte for byte. */
function rawGet(path: string): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const url = new URL(base);
    const req = http.request({ host: url.hostname, port: url.port, path, method: 'GET' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the download page', () => {
  test('shows product, version, organisation, files with sizes and the expiry, with strict headers', async () => {
    const { token } = await freshToken();
    const res = await fetch(`${base}/d/${token}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(res.headers.get('cache-control')).toBe('no-store');
    const page = await res.text();
    expect(page).toContain('<h1>Ebook Pro</h1>');
    expect(page).toContain('Version 1.0.0');
    expect(page).toContain('Acme Books');
    expect(page).toContain(`href="/d/${token}/files/${product.fileId}"`);
    expect(page).toContain(`href="/d/${token}/files/${bigId}"`);
    expect(page).toContain('262 KB'); // 262,267 bytes
    expect(page).toContain('1 KB'); // the seeded text file
    expect(page).toContain('Résumé “final” 2026.pdf');
    expect(page).toMatch(/This link works until <time datetime="[^"]+">\w+day \d+ \w+ \d{4}, \d\d:\d\d UTC<\/time>/);
    expect(page).toContain('src="/assets/customer/downloader.js"');
    expect(page).not.toMatch(/<script>|style="/); // CSP-friendly: no inline script or style
  });

  test('opening a valid link moves its expiry to a whole link lifetime from that moment', async () => {
    const { token } = await freshToken();
    const issuedExpiry = (await tokenRow(token)).expiresAt.getTime();

    // An hour before it would expire.
    offsetMs = linkTtl() - HOUR;
    const opened = clock().getTime();
    expect((await fetch(`${base}/d/${token}`)).status).toBe(200);
    const extended = (await tokenRow(token)).expiresAt.getTime();
    expect(extended).toBeGreaterThan(issuedExpiry);
    expect(Math.abs(extended - (opened + linkTtl()))).toBeLessThan(5_000);

    // Long after it would have expired without the opening, an hour before its extended expiry: it still works.
    offsetMs = 2 * linkTtl() - 2 * HOUR;
    expect((await fetch(`${base}/d/${token}`)).status).toBe(200);
  });

  test('an expired link answers 410 with a button that posts to its refresh URL, and its files 410 too', async () => {
    const { token } = await freshToken();
    offsetMs = linkTtl() + 1_000;
    const res = await fetch(`${base}/d/${token}`);
    expect(res.status).toBe(410);
    const page = await res.text();
    expect(page).toContain('This download link has expired');
    expect(page).toContain(`<form method="post" action="/d/${token}/refresh">`);
    expect(page).toContain('Email me a fresh link');
    expect(page).not.toContain('/files/');
    // Opening an expired link does not revive it.
    expect((await tokenRow(token)).expiresAt.getTime()).toBeLessThan(clock().getTime());
    const file = await fetch(fileUrl(token, product.fileId));
    expect(file.status).toBe(410);
  });

  test('a purchase whose version was deleted: the page says so and no file is served', async () => {
    const { token, purchaseId } = await freshToken();
    await h.orm.em.fork().execute('update purchase set version_id = null where id = ?', [purchaseId]);
    const res = await fetch(`${base}/d/${token}`);
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toContain('This version has no files to download any more.');
    expect(page).not.toContain('/files/');
    expect((await fetch(fileUrl(token, bigId))).status).toBe(404);
  });

  test.each([
    ['a well-formed random token', () => randomBytes(32).toString('base64url')],
    ['a short token', () => 'abc'],
    ['a token with odd characters', () => encodeURIComponent('../../etc/passwd')],
  ])('%s is 404', async (_name, token) => {
    const res = await fetch(`${base}/d/${token()}`);
    expect(res.status).toBe(404);
    expect(await res.text()).toContain('We could not find this download link');
  });
});

describe('file downloads', () => {
  test('the whole file: bytes equal the upload, with length, validators and an attachment disposition', async () => {
    const { token } = await freshToken();
    const res = await fetch(fileUrl(token, bigId));
    expect(res.status).toBe(200);
    const body = Buffer.from(await res.arrayBuffer());
    expect(sha256(body)).toBe(sha256(big));
    expect(res.headers.get('content-length')).toBe(String(big.length));
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(res.headers.get('etag')).toBe(`"${sha256(big)}"`);
    expect(new Date(res.headers.get('last-modified')!).getTime()).not.toBeNaN();
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="ebook-pro.zip"; filename*=UTF-8''ebook-pro.zip`);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-security-policy')).toContain('sandbox');

    const small = await fetch(fileUrl(token, product.fileId));
    expect(sha256(Buffer.from(await small.arrayBuffer()))).toBe(sha256(product.fileBytes));
  });

  test('a non-ASCII file name: RFC 6266 filename* plus an ASCII fallback', async () => {
    const { token } = await freshToken();
    const res = await fetch(fileUrl(token, unicodeId));
    expect(res.headers.get('content-disposition')).toBe(
      "attachment; filename=\"Resume _final_ 2026.pdf\"; filename*=UTF-8''R%C3%A9sum%C3%A9%20%E2%80%9Cfinal%E2%80%9D%202026.pdf",
    );
  });

  async function ranged(token: string, range: string, extra: Record<string, string> = {}) {
    const res = await fetch(fileUrl(token, bigId), { headers: { range, ...extra } });
    return { res, body: Buffer.from(await res.arrayBuffer()) };
  }

  test.each([
    ['a closed range', 'bytes=0-99', 0, 99],
    ['an open-ended range', 'bytes=1000-', 1000, big.length - 1],
    ['a suffix range', 'bytes=-500', big.length - 500, big.length - 1],
    ['a suffix longer than the file', `bytes=-${big.length + 10}`, 0, big.length - 1],
    ['a range past the end, clamped', `bytes=10-${big.length * 2}`, 10, big.length - 1],
    ['the last byte alone', `bytes=${big.length - 1}-${big.length - 1}`, big.length - 1, big.length - 1],
  ])('%s → 206 with Content-Range and exactly those bytes', async (_name, range, start, end) => {
    const { token } = await freshToken();
    const { res, body } = await ranged(token, range);
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe(`bytes ${start}-${end}/${big.length}`);
    expect(res.headers.get('content-length')).toBe(String(end - start + 1));
    expect(body.equals(big.subarray(start, end + 1))).toBe(true);
  });

  test.each([
    ['starting at the size', () => `bytes=${big.length}-`],
    ['starting past the size', () => `bytes=${big.length + 5}-${big.length + 10}`],
    ['an empty suffix', () => 'bytes=-0'],
  ])('an unsatisfiable range (%s) → 416 with Content-Range: bytes */size', async (_name, range) => {
    const { token } = await freshToken();
    const { res, body } = await ranged(token, range());
    expect(res.status).toBe(416);
    expect(res.headers.get('content-range')).toBe(`bytes */${big.length}`);
    expect(body.length).toBe(0);
  });

  test.each([
    ['malformed', 'bytes=abc'],
    ['last before first', 'bytes=500-100'],
    ['another unit', 'items=0-10'],
    ['several ranges (served whole, by decision)', 'bytes=0-9,20-29'],
  ])('a Range header that is %s is ignored: 200 with the whole file', async (_name, range) => {
    const { token } = await freshToken();
    const { res, body } = await ranged(token, range);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-range')).toBeNull();
    expect(sha256(body)).toBe(sha256(big));
  });

  test('If-Range with the current ETag resumes; with another validator it sends the whole file', async () => {
    const { token } = await freshToken();
    const etag = `"${sha256(big)}"`;
    const resumed = await ranged(token, 'bytes=100-', { 'if-range': etag });
    expect(resumed.res.status).toBe(206);
    expect(resumed.body.equals(big.subarray(100))).toBe(true);
    const changed = await ranged(token, 'bytes=100-', { 'if-range': '"something-else"' });
    expect(changed.res.status).toBe(200);
    expect(changed.body.length).toBe(big.length);
  });

  /** Waits for the transfer entry written for `userAgent`'s request. */
  async function entryOf(tokenId: string, userAgent: string): Promise<ActivityLogEntry> {
    return eventually(async () => (await ledger('file_download', tokenId)).find((e) => e.userAgent === userAgent));
  }

  test('If-None-Match with the ETag → 304 without a body, and no completed transfer', async () => {
    const { token } = await freshToken();
    const res = await fetch(fileUrl(token, bigId), { headers: { 'if-none-match': `"${sha256(big)}"`, 'user-agent': 'revalidate' } });
    expect(res.status).toBe(304);
    expect((await res.arrayBuffer()).byteLength).toBe(0);
    // A whole GET afterwards: its entry is the only one (the 304's would have been written first).
    await fetch(fileUrl(token, bigId), { headers: { 'user-agent': 'after' } }).then((r) => r.arrayBuffer());
    const row = await tokenRow(token);
    await entryOf(row.id, 'after');
    expect((await ledger('file_download', row.id)).map((e) => e.userAgent)).toEqual(['after']);
  });

  test('HEAD answers the headers of the file without the bytes and records nothing', async () => {
    const { token } = await freshToken();
    const res = await fetch(fileUrl(token, bigId), { method: 'HEAD', headers: { 'user-agent': 'head' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe(String(big.length));
    expect(res.headers.get('etag')).toBe(`"${sha256(big)}"`);
    expect(res.headers.get('content-disposition')).toContain('attachment');
    expect((await res.arrayBuffer()).byteLength).toBe(0);
    await fetch(fileUrl(token, bigId), { headers: { 'user-agent': 'after' } }).then((r) => r.arrayBuffer());
    const row = await tokenRow(token);
    await entryOf(row.id, 'after');
    expect((await ledger('file_download', row.id)).map((e) => e.userAgent)).toEqual(['after']);
  });

  test('a completed transfer is one ledger entry with bytes, IP and user agent', async () => {
    const { token, purchaseId } = await freshToken();
    await fetch(fileUrl(token, bigId), { headers: { 'user-agent': 'LedgerTest/1.0' } }).then((r) => r.arrayBuffer());
    const row = await tokenRow(token);
    const entry = await entryOf(row.id, 'LedgerTest/1.0');
    expect(entry.organisation.id).toBe(org.orgId);
    expect(entry.purchase.id).toBe(purchaseId);
    expect(entry.file?.id).toBe(bigId);
    expect(entry.bytes).toBe(big.length);
    expect(entry.ip).toBe('127.0.0.1');
    expect(entry.userAgent).toBe('LedgerTest/1.0');
  });

  test('a download resumed in three ranges counts once, when its last byte is served', async () => {
    const { token } = await freshToken();
    const parts: Buffer[] = [];
    for (const range of ['bytes=0-99999', 'bytes=100000-199999']) parts.push((await ranged(token, range)).body);
    const row = await tokenRow(token);
    // The responses without the last byte schedule no entry at all.
    expect(await ledger('file_download', row.id)).toHaveLength(0);
    parts.push((await ranged(token, 'bytes=200000-')).body);
    expect(sha256(Buffer.concat(parts))).toBe(sha256(big));
    const entries = await eventually(async () => {
      const found = await ledger('file_download', row.id);
      return found.length > 0 ? found : undefined;
    });
    expect(entries).toHaveLength(1);
    expect(entries[0].bytes).toBe(big.length);
  });
  test('repeating a range (the last byte, ten times) never counts; the bytes that complete the file count once', async () => {
    const { token, purchaseId } = await freshToken();
    const row = await tokenRow(token);
    const last = `bytes=${big.length - 1}-`;
    for (let i = 0; i < 10; i += 1) expect((await ranged(token, last)).res.status).toBe(206);
    // Every piece is on record before the ledger is read: the coverage holds the last byte.
    const served = () => h.orm.em.fork().execute<Array<{ served: string }>>(
      'select served::text as served from download_coverage where purchase_id = ? and file_id = ?', [purchaseId, bigId]);
    await eventually(async () => ((await served())[0]?.served === `{[${big.length - 1},${big.length})}` ? true : undefined));
    expect(await ledger('file_download', row.id)).toHaveLength(0);

    expect((await ranged(token, `bytes=0-${big.length - 2}`)).res.status).toBe(206);
    const entries = await eventually(async () => {
      const found = await ledger('file_download', row.id);
      return found.length > 0 ? found : undefined;
    });
    expect(entries).toHaveLength(1);
    // A new transfer starts from nothing: the repeated last byte alone does not count again.
    expect(await served()).toEqual([{ served: '{}' }]);
    await ranged(token, last);
    await eventually(async () => ((await served())[0]?.served === `{[${big.length - 1},${big.length})}` ? true : undefined));
    expect(await ledger('file_download', row.id)).toHaveLength(1);
  });
});

test('one-byte ranges keep the coverage coarse: a bounded number of ranges, and the whole file still counts once', async () => {
  const { token, purchaseId } = await freshToken();
  const row = await tokenRow(token);
  const ranged = (range: string) => fetch(fileUrl(token, bigId), { headers: { range } }).then((r) => r.arrayBuffer());
  // Every other byte of the first 200: 100 separate ranges if each were kept.
  for (let i = 0; i < 100; i += 1) await ranged(`bytes=${2 * i}-${2 * i}`);
  // Byte 1 joins two ranges into one, so it is kept whatever the bound: once it is on record, so are the pieces before it.
  await ranged('bytes=1-1');
  const coverage = () => h.orm.em.fork().execute<Array<{ ranges: string; has_byte_1: boolean }>>(
    `select (select count(*) from unnest(served)) as ranges, served @> 1::int8 as has_byte_1
     from download_coverage where purchase_id = ? and file_id = ?`, [purchaseId, bigId]);
  const [kept] = await eventually(async () => ((await coverage())[0]?.has_byte_1 ? coverage() : undefined));
  expect(Number(kept.ranges)).toBeLessThanOrEqual(16);

  await ranged('bytes=0-');
  const entries = await eventually(async () => {
    const found = await ledger('file_download', row.id);
    return found.length > 0 ? found : undefined;
  });
  expect(entries).toHaveLength(1);
});

describe('nothing outside the purchase is ever served', () => {
  let token: string;
  let otherProductFile: string;
  let otherOrgFile: string;
  let otherOrgToken: string;

  beforeAll(async () => {
    ({ token } = await freshToken());
    otherProductFile = (await seedProduct(h, org.orgId, { name: 'Another product' })).fileId;
    const other = await seedOrganisation(h);
    const theirs = await seedProduct(h, other.orgId);
    otherOrgFile = theirs.fileId;
    otherOrgToken = (await seedPurchase(h, other.orgId, theirs, { now: clock() })).token;
  });

  test.each([
    ['an encoded traversal', () => `/d/${token}/files/..%2F..%2Fetc%2Fpasswd`],
    ['a double-encoded traversal', () => `/d/${token}/files/%252e%252e%252fpackage.json`],
    ['a raw traversal', () => `/d/${token}/files/../../../../etc/passwd`],
    ['an encoded dot-dot', () => `/d/${token}/files/%2e%2e%2f%2e%2e%2fpackage.json`],
    ['the storage key instead of the id', () => `/d/${token}/files/files%2F${bigId}`],
    ['a file id with a path after it', () => `/d/${token}/files/${bigId}%2F..%2F..%2Fpackage.json`],
    ['a backslash traversal', () => `/d/${token}/files/..%5C..%5Cpackage.json`],
    ['another product\'s file', () => `/d/${token}/files/${otherProductFile}`],
    ['another organisation\'s file', () => `/d/${token}/files/${otherOrgFile}`],
    ['another organisation\'s token with this file', () => `/d/${otherOrgToken}/files/${bigId}`],
    ['a made-up file id', () => `/d/${token}/files/00000000-0000-4000-8000-000000000000`],
  ])('%s → 404 and not a byte of any file', async (_name, path) => {
    const res = await rawGet(path());
    expect(res.status).toBe(404);
    expect(res.body.toString('utf8')).toMatch(/^<!doctype html>|not found/i);
    expect(res.body.includes(big.subarray(0, 64))).toBe(false);
    expect(res.body.toString('latin1')).not.toMatch(/root:|"name": "delivery-service"|contents of product-/);
  });
});

describe('download-complete (POST /webhooks/{orgId}/download-complete)', () => {
  const complete = (orgId: string, body: string, type = 'application/json') =>
    fetch(`${base}/webhooks/${orgId}/download-complete`, { method: 'POST', headers: { 'content-type': type }, body });

  test('marks the token used and writes one session entry; a second call writes nothing new', async () => {
    const { token, purchaseId } = await freshToken();
    const first = await complete(org.orgId, JSON.stringify({ token }));
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ ok: true });
    const row = await tokenRow(token);
    expect(row.usedAt).not.toBeNull();
    const sessions = await ledger('download_session', row.id);
    expect(sessions).toHaveLength(1);
    expect(sessions[0].purchase.id).toBe(purchaseId);

    const second = await complete(org.orgId, JSON.stringify({ token }));
    expect(second.status).toBe(200);
    expect(await second.json()).toEqual({ ok: true });
    expect(await ledger('download_session', row.id)).toHaveLength(1);
    expect((await tokenRow(token)).usedAt?.getTime()).toBe(row.usedAt?.getTime());
  });

  test('concurrent calls for one token write one entry', async () => {
    const { token } = await freshToken();
    const answers = await Promise.all(Array.from({ length: 5 }, () => complete(org.orgId, JSON.stringify({ token }))));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    expect(await ledger('download_session', (await tokenRow(token)).id)).toHaveLength(1);
  });

  test('a used link answers 410 on its page and its files', async () => {
    const { token } = await freshToken();
    await complete(org.orgId, JSON.stringify({ token }));
    const page = await fetch(`${base}/d/${token}`);
    expect(page.status).toBe(410);
    expect(await page.text()).toContain('This download link has been used');
    expect((await fetch(fileUrl(token, bigId))).status).toBe(410);
    expect((await fetch(fileUrl(token, bigId), { headers: { range: 'bytes=0-9' } })).status).toBe(410);
  });

  test('an unknown token, another organisation\'s token, or a bad org id → 404 and nothing is marked', async () => {
    const { token } = await freshToken();
    const other = await seedOrganisation(h);
    const unknown = await complete(org.orgId, JSON.stringify({ token: randomBytes(32).toString('base64url') }));
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: expect.any(String) });
    expect((await complete(other.orgId, JSON.stringify({ token }))).status).toBe(404);
    expect((await complete('not-a-uuid', JSON.stringify({ token }))).status).toBe(404);
    expect((await tokenRow(token)).usedAt).toBeNull();
  });

  test('bad JSON or a missing token → 400 {error}', async () => {
    for (const body of ['{"token":', '{}', '{"token":""}', '[]']) {
      const res = await complete(org.orgId, body);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: expect.any(String) });
    }
  });

});

test('a new token for a used link\'s purchase works again', async () => {
  const { token, purchaseId } = await freshToken();
  await fetch(`${base}/webhooks/${org.orgId}/download-complete`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }),
  });
  const fresh = await issueToken(h, purchaseId, clock());
  expect((await fetch(`${base}/d/${fresh}`)).status).toBe(200);
});
