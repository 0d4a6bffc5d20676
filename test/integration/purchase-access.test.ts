/**
 * Decisions §9–§11 from the staff's side, over real HTTP: manual revoke and restore, download limits
 * (product and per purchase) and re-arm, the organisation's support address, and the dispute
 * evidence record as JSON and as a PDF whose text is extracted and read.
 */
import { ActivityLogEntry } from '../../src/db/entities';
import { seedCallers, type ApiCallers } from '../helpers/api-callers';
import { addVersionFile, issueToken, listen, seedPurchase, tokenOfLink } from '../helpers/download-links';
import { startHarness, type Harness } from '../helpers/harness';
import { seedProduct, seedUser, type SeededProduct } from '../helpers/seed';
import { pdfText } from '../helpers/pdf-text';
import { signIn } from '../helpers/dashboard';

let h: Harness;
let base: string;
let callers: ApiCallers;
let product: SeededProduct;

beforeAll(async () => {
  h = await startHarness();
  base = await listen(h);
  callers = await seedCallers(h);
  product = await seedProduct(h, callers.orgId, { name: 'Ebook Pro' });
});
afterAll(() => h?.close());

const fileUrl = (token: string) => `${base}/d/${token}/files/${product.fileId}`;
const pageUrl = (token: string) => `${base}/d/${token}`;

async function api(method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return response;
}

/** The record once `done` holds of it (what a workflow adds comes a moment later). */
async function eventuallyRecord<T>(read: () => Promise<T>, done: (record: T) => boolean): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const record = await read();
    if (done(record)) return record;
    if (Date.now() > deadline) throw new Error(`the record never got there: ${JSON.stringify(record).slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Downloads the whole file, as a completed transfer; returns the status. */
async function download(token: string, userAgent = 'jest-downloader/1.0'): Promise<number> {
  const response = await fetch(fileUrl(token), { headers: { 'user-agent': userAgent } });
  await response.arrayBuffer();
  return response.status;
}

/** The ledger entry of a completed transfer is written once the response finished: wait for it. */
async function transfersOf(purchaseId: string, count: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const n = await h.orm.em.fork().count(ActivityLogEntry, { purchase: purchaseId, kind: 'file_download' });
    if (n >= count) return;
    if (Date.now() > deadline) throw new Error(`expected ${count} completed transfers, saw ${n}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('manual revoke and restore', () => {
  test('revoke answers 410 "withdrawn" on the page and the files; restore gives access back; both logged', async () => {
    const { purchaseId, token } = await seedPurchase(h, callers.orgId, product);
    expect((await fetch(pageUrl(token))).status).toBe(200);

    const revoked = await api('POST', `/api/purchases/${purchaseId}/revoke`, callers.owner);
    expect(revoked.status).toBe(200);
    const state = await revoked.json();
    expect(state).toEqual({ purchaseId, revokedAt: expect.any(String), revokeReason: 'manual' });

    const page = await fetch(pageUrl(token));
    expect(page.status).toBe(410);
    const text = await page.text();
    expect(text).toContain('withdrawn');
    expect(text).not.toContain('Email me a fresh link');
    expect(await download(token)).toBe(410);

    // Idempotent: the second revoke changes nothing and logs nothing.
    const again = await (await api('POST', `/api/purchases/${purchaseId}/revoke`, callers.owner)).json();
    expect(again.revokedAt).toBe(state.revokedAt);

    const listed = await (await api('GET', '/api/purchases', callers.owner)).json() as Array<{ id: string; revokedAt: string | null; revokeReason: string | null }>;
    expect(listed.find((p) => p.id === purchaseId)).toMatchObject({ revokedAt: state.revokedAt, revokeReason: 'manual' });

    const restored = await api('POST', `/api/purchases/${purchaseId}/restore`, callers.owner);
    expect(await restored.json()).toEqual({ purchaseId, revokedAt: null, revokeReason: null });
    expect((await fetch(pageUrl(token))).status).toBe(200);
    expect(await download(token)).toBe(200);

    const actions = await h.orm.em.fork().find(ActivityLogEntry, { purchase: purchaseId, kind: { $in: ['revoke', 'restore'] } }, { orderBy: { createdAt: 'asc' } });
    expect(actions.map((a) => a.kind)).toEqual(['revoke', 'restore']);
    expect(actions[0].actor).toMatch(/@.*\(API key\)$/);
  });

  test('members may not revoke, restore, re-arm or read evidence; another organisation sees 404', async () => {
    const { purchaseId } = await seedPurchase(h, callers.orgId, product);
    for (const [method, path] of [
      ['POST', `/api/purchases/${purchaseId}/revoke`], ['POST', `/api/purchases/${purchaseId}/restore`],
      ['POST', `/api/purchases/${purchaseId}/rearm`], ['GET', `/api/purchases/${purchaseId}/evidence`],
    ]) {
      expect((await api(method, path, callers.member)).status).toBe(403);
      const other = await api(method, path, callers.other);
      expect(other.status).toBe(404);
      expect(await other.json()).toEqual({ error: 'purchase not found' });
    }
    expect((await api('POST', '/api/purchases/not-a-uuid/revoke', callers.owner)).status).toBe(404);
  });
});

describe('download limits and re-arm', () => {
  test('the product\'s limit: the (limit+1)th transfer is 410 naming the support address; the page still opens and says so', async () => {
    const limited = await seedProduct(h, callers.orgId, { name: 'Limited Course' });
    const put = await api('PUT', `/api/products/${limited.productId}`, callers.owner, { downloadLimit: 2 });
    expect(put.status).toBe(200);
    expect((await put.json()).downloadLimit).toBe(2);
    expect((await (await api('PUT', '/api/settings/organisation', callers.owner, { supportEmail: 'Help@Example.com' })).json()).supportEmail)
      .toBe('help@example.com');

    const { purchaseId, token } = await seedPurchase(h, callers.orgId, limited);
    const url = `${base}/d/${token}/files/${limited.fileId}`;
    expect((await fetch(url)).status).toBe(200);
    await transfersOf(purchaseId, 1);
    expect((await fetch(url)).status).toBe(200);
    await transfersOf(purchaseId, 2);

    const refused = await fetch(url);
    expect(refused.status).toBe(410);
    const text = await refused.text();
    expect(text).toContain('limit');
    expect(text).toContain('help@example.com');

    const page = await fetch(pageUrl(token));
    expect(page.status).toBe(200);
    const pageText = await page.text();
    expect(pageText).toContain('limit has been reached');
    expect(pageText).toContain('help@example.com');
  });

  test('a purchase\'s own limit overrides the product\'s; null goes back to it; bad values are 400', async () => {
    const limited = await seedProduct(h, callers.orgId, { name: 'Override Course' });
    await api('PUT', `/api/products/${limited.productId}`, callers.owner, { downloadLimit: 1 });
    const { purchaseId, token } = await seedPurchase(h, callers.orgId, limited);
    const url = `${base}/d/${token}/files/${limited.fileId}`;

    const set = await api('PUT', `/api/purchases/${purchaseId}/download-limit`, callers.owner, { downloadLimit: 3 });
    expect(await set.json()).toEqual({ purchaseId, downloadLimit: 3 });
    for (let i = 1; i <= 3; i += 1) {
      expect((await fetch(url)).status).toBe(200);
      await transfersOf(purchaseId, i);
    }
    expect((await fetch(url)).status).toBe(410);

    expect((await api('PUT', `/api/purchases/${purchaseId}/download-limit`, callers.owner, { downloadLimit: null })).status).toBe(200);
    expect((await fetch(url)).status).toBe(410);
    for (const bad of [0, -1, 2.5, 'many']) {
      const response = await api('PUT', `/api/purchases/${purchaseId}/download-limit`, callers.owner, { downloadLimit: bad });
      expect(response.status).toBe(400);
      expect((await response.json()).error).toMatch(/downloadLimit/);
    }
    expect((await api('PUT', '/api/settings/organisation', callers.owner, { supportEmail: 'not an address' })).status).toBe(400);
  });

  test('re-arm resets the count, closes every open link and emails a fresh one that downloads', async () => {
    const limited = await seedProduct(h, callers.orgId, { name: 'Rearm Course' });
    await api('PUT', `/api/products/${limited.productId}`, callers.owner, { downloadLimit: 1 });
    const email = `rearm-${Date.now()}@example.com`;
    const { purchaseId, token } = await seedPurchase(h, callers.orgId, limited, { email });
    const other = await issueToken(h, purchaseId);
    const url = (t: string) => `${base}/d/${t}/files/${limited.fileId}`;
    expect((await fetch(url(token))).status).toBe(200);
    await transfersOf(purchaseId, 1);
    expect((await fetch(url(token))).status).toBe(410);

    const rearmed = await api('POST', `/api/purchases/${purchaseId}/rearm`, callers.owner);
    expect(rearmed.status).toBe(200);
    expect(await rearmed.json()).toEqual({ purchaseId, linkSentTo: email });

    // Every link that was open is closed: the expired page, which offers a fresh one.
    for (const old of [token, other]) {
      const page = await fetch(pageUrl(old));
      expect(page.status).toBe(410);
      expect(await page.text()).toContain('expired');
    }
    const mail = await h.mailbox.waitFor((m) => m.to.includes(email), 30_000);
    const link = /https?:\/\/\S+\/d\/[A-Za-z0-9_-]+/.exec(mail.text)?.[0];
    expect(link).toBeDefined();
    const fresh = tokenOfLink(link!);
    expect((await fetch(url(fresh))).status).toBe(200);
    await transfersOf(purchaseId, 2);
    expect((await fetch(url(fresh))).status).toBe(410);

    const rearms = await h.orm.em.fork().find(ActivityLogEntry, { purchase: purchaseId, kind: 'rearm' });
    expect(rearms).toHaveLength(1);
    expect(rearms[0].detail).toContain(email);
  });

  /** Fetches one range of a file through a link; answers the status once the body is read. */
  async function ranged(url: string, range: string): Promise<number> {
    const response = await fetch(url, { headers: { range } });
    await response.arrayBuffer();
    return response.status;
  }

  test('the limit is the purchase\'s across its links: a file pieced together from two links counts, then every link is closed', async () => {
    const limited = await seedProduct(h, callers.orgId, { name: 'Split Course' });
    await api('PUT', `/api/products/${limited.productId}`, callers.owner, { downloadLimit: 1 });
    const { purchaseId, token } = await seedPurchase(h, callers.orgId, limited);
    const second = await issueToken(h, purchaseId);
    const url = (t: string) => `${base}/d/${t}/files/${limited.fileId}`;
    const size = limited.fileBytes.length;

    // All but the last byte from one link, the last byte from the other: the whole file, one completed transfer.
    expect(await ranged(url(token), `bytes=0-${size - 2}`)).toBe(206);
    expect(await ranged(url(second), `bytes=${size - 1}-`)).toBe(206);
    await transfersOf(purchaseId, 1);
    for (const t of [token, second]) expect(await ranged(url(t), `bytes=0-${size - 2}`)).toBe(410);
  });

  test('bytes that never complete a file count too: a purchase is sent at most limit × size bytes of a file', async () => {
    const limited = await seedProduct(h, callers.orgId, { name: 'Budget Course' });
    await api('PUT', `/api/products/${limited.productId}`, callers.owner, { downloadLimit: 2 });
    const { purchaseId, token } = await seedPurchase(h, callers.orgId, limited);
    const second = await issueToken(h, purchaseId);
    const url = (t: string) => `${base}/d/${t}/files/${limited.fileId}`;
    const size = limited.fileBytes.length;

    // Everything but the last byte, again and again from either link: never a completed transfer,
    // but after two nearly whole copies the third would go past 2 × size bytes.
    const statuses: number[] = [];
    for (const t of [token, second, token, second]) statuses.push(await ranged(url(t), `bytes=0-${size - 2}`));
    expect(statuses).toEqual([206, 206, 410, 410]);
    const page = await fetch(url(second), { headers: { range: 'bytes=0-9' } });
    expect(page.status).toBe(410);
    expect(await page.text()).toContain('limit');
  });

  test('the limit counts transfers of different files started at once: as many go out as it allows', async () => {
    const limited = await seedProduct(h, callers.orgId, { name: 'Bundle Course' });
    await api('PUT', `/api/products/${limited.productId}`, callers.owner, { downloadLimit: 2 });
    const fileIds = [limited.fileId];
    for (const part of ['two', 'three', 'four', 'five']) {
      fileIds.push(await addVersionFile(h, limited.versionId, `part-${part}.txt`, Buffer.from(`part ${part} ${'y'.repeat(4000)}`)));
    }
    const { purchaseId, token } = await seedPurchase(h, callers.orgId, limited);
    const statuses = await Promise.all(fileIds.map(async (fileId) => {
      const response = await fetch(`${base}/d/${token}/files/${fileId}`);
      await response.arrayBuffer();
      return response.status;
    }));
    expect(statuses.filter((s) => s === 200)).toHaveLength(2);
    expect(statuses.filter((s) => s === 410)).toHaveLength(3);
    await transfersOf(purchaseId, 2);
    await new Promise((r) => setTimeout(r, 300));
    expect(await h.orm.em.fork().count(ActivityLogEntry, { purchase: purchaseId, kind: 'file_download' })).toBe(2);
  });

  test('a transfer started and not finished holds its place under the limit until it finishes', async () => {
    const limited = await seedProduct(h, callers.orgId, { name: 'Two Part Course' });
    await api('PUT', `/api/products/${limited.productId}`, callers.owner, { downloadLimit: 1 });
    const other = await addVersionFile(h, limited.versionId, 'part-two.txt', Buffer.from('the second part'));
    const { purchaseId, token } = await seedPurchase(h, callers.orgId, limited);
    const url = (fileId: string) => `${base}/d/${token}/files/${fileId}`;

    // The first file's first ten bytes: its transfer is under way, and takes the one place.
    expect(await ranged(url(limited.fileId), 'bytes=0-9')).toBe(206);
    const refused = await fetch(url(other));
    expect(refused.status).toBe(410);
    expect(await refused.text()).toContain('limit');
    // The started transfer may finish; then the limit is reached for every file.
    expect(await ranged(url(limited.fileId), 'bytes=10-')).toBe(206);
    await transfersOf(purchaseId, 1);
    expect((await fetch(url(other))).status).toBe(410);
  });

  test('re-arming a revoked purchase is 409 and sends nothing', async () => {
    const { purchaseId } = await seedPurchase(h, callers.orgId, product);
    await api('POST', `/api/purchases/${purchaseId}/revoke`, callers.owner);
    const response = await api('POST', `/api/purchases/${purchaseId}/rearm`, callers.owner);
    expect(response.status).toBe(409);
    expect((await response.json()).error).toMatch(/restore/);
  });
});

describe('dispute evidence', () => {
  test('every section is present for a purchase with downloads; the PDF\'s text has the order id and the download times', async () => {
    const { purchaseId, token } = await seedPurchase(h, callers.orgId, product, { email: 'evidence@example.com' });
    await h.orm.em.fork().execute(`update purchase set external_order_id = 'ORDER-EVIDENCE-77' where id = ?`, [purchaseId]);
    expect((await fetch(pageUrl(token), { headers: { 'user-agent': 'EvidenceBrowser/2.0' } })).status).toBe(200);
    expect(await download(token, 'EvidenceBrowser/2.0')).toBe(200);
    await transfersOf(purchaseId, 1);
    await api('POST', `/api/purchases/${purchaseId}/revoke`, callers.owner);

    const json = await api('GET', `/api/purchases/${purchaseId}/evidence`, callers.owner);
    expect(json.status).toBe(200);
    const record = await json.json();
    expect(Object.keys(record).sort()).toEqual(
      ['accesses', 'accessesNotListed', 'customer', 'generatedAt', 'license', 'links', 'linksNotListed', 'order', 'purchase', 'receipts', 'reminder', 'seller', 'staffActions'],
    );
    expect(record.order).toMatchObject({ source: 'api', externalOrderId: 'ORDER-EVIDENCE-77', amount: '10.00', currency: 'USD' });
    expect(record.customer.email).toBe('evidence@example.com');
    expect(record.reminder).toBeNull();
    expect(record.links).toEqual([expect.objectContaining({ via: 'receipt', issuedAt: expect.any(String) })]);
    const kinds = record.accesses.map((a: { kind: string }) => a.kind);
    expect(kinds).toEqual(['page open', 'file transfer']);
    const transfer = record.accesses[1];
    expect(transfer).toMatchObject({ userAgent: 'EvidenceBrowser/2.0', file: expect.stringMatching(/\.txt$/), bytes: product.fileBytes.length });
    expect(transfer.ip).toMatch(/127\.0\.0\.1/);
    expect(record.staffActions).toEqual([expect.objectContaining({ action: 'revoke', detail: 'manual' })]);
    expect(record.purchase.revokeReason).toBe('manual');

    const pdf = await api('GET', `/api/purchases/${purchaseId}/evidence?format=pdf`, callers.owner);
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    const bytes = Buffer.from(await pdf.arrayBuffer());
    expect(bytes.subarray(0, 5).toString()).toBe('%PDF-');
    const text = await pdfText(bytes);
    expect(text).toContain('ORDER-EVIDENCE-77');
    expect(text).toContain('evidence@example.com');
    for (const access of record.accesses as Array<{ at: string }>) {
      // The PDF writes times as "YYYY-MM-DD HH:MM:SS UTC".
      expect(text).toContain(`${access.at.slice(0, 10)} ${access.at.slice(11, 19)} UTC`);
    }
    expect((await api('GET', `/api/purchases/${purchaseId}/evidence?format=docx`, callers.owner)).status).toBe(400);
  });

  test('links that staff showed or resent are told apart from the buyer\'s own: a sale\'s link, a resend with who sent it', async () => {
    const sale = await fetch(`${base}/api/purchases`, {
      method: 'POST', headers: { ...callers.owner, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        customerId: 'new', 'newCustomer.email': `staff-links-${Date.now()}@example.com`, productId: product.productId,
        amount: '5', currency: 'usd', paymentMethod: 'custom', sendEmail: 'false',
      }).toString(),
    });
    expect(sale.status).toBe(201);
    const purchaseId = /data-purchase-id="([^"]+)"/.exec(await sale.text())![1];
    const evidence = async () => (await api('GET', `/api/purchases/${purchaseId}/evidence`, callers.owner)).json();
    // No receipt went: the link shown in the sale's answer is not a receipt's.
    expect(await evidence()).toMatchObject({ receipts: [], links: [expect.objectContaining({ via: 'sale' })] });

    const member = await seedUser(h, callers.orgId, 'member');
    const { cookie, csrf } = await signIn(h.app, member.email);
    const resend = await h.app.inject({
      method: 'POST', url: `/purchases/${purchaseId}/resend`,
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ _csrf: csrf }).toString(),
    });
    expect(resend.statusCode).toBe(200);
    const record = await eventuallyRecord(evidence, (r) => r.links.length === 2);
    expect(record.links.map((l: { via: string }) => l.via)).toEqual(['sale', 'staff-resend']);
    expect(record.staffActions).toEqual([expect.objectContaining({ action: 'resend', by: member.email, detail: expect.stringContaining('fresh link sent to') })]);
  });

  test('opening a link again and again within a minute is one page-open entry with a count', async () => {
    const { purchaseId, token } = await seedPurchase(h, callers.orgId, product);
    // Ten at once (the token's lock orders them), then ten more one by one.
    const opens = await Promise.all(Array.from({ length: 10 }, () => fetch(pageUrl(token)).then((r) => r.status)));
    for (let i = 0; i < 10; i += 1) opens.push((await fetch(pageUrl(token))).status);
    expect(opens).toEqual(Array(20).fill(200));
    const rows = await h.orm.em.fork().find(ActivityLogEntry, { purchase: purchaseId, kind: 'page_open' });
    expect(rows).toHaveLength(1);
    const record = await (await api('GET', `/api/purchases/${purchaseId}/evidence`, callers.owner)).json();
    expect(record.accesses).toEqual([expect.objectContaining({ kind: 'page open', count: 20 })]);
  });

  test('a purchase with thousands of entries: the record lists the newest 200 and counts the rest, in JSON and in the PDF', async () => {
    const { purchaseId, token } = await seedPurchase(h, callers.orgId, product);
    // 3,000 page opens a day apart, older than anything the requests below write.
    await h.orm.em.fork().execute(
      `insert into activity_log_entry (id, organisation_id, kind, purchase_id, ip, user_agent, created_at)
       select gen_random_uuid(), p.organisation_id, 'page_open', p.id, '198.51.100.7', 'Flood/' || i, now() - make_interval(days => 3001 - i)
       from purchase p, generate_series(1, 3000) i where p.id = ?`,
      [purchaseId],
    );
    expect(await download(token, 'NewestBrowser/1.0')).toBe(200);
    await transfersOf(purchaseId, 1);

    const record = await (await api('GET', `/api/purchases/${purchaseId}/evidence`, callers.owner)).json();
    expect(record.accesses).toHaveLength(200);
    expect(record.accessesNotListed).toBe(2801);
    // The newest, in time order: the transfer last, the oldest flood entries left out.
    expect(record.accesses[199]).toMatchObject({ kind: 'file transfer', userAgent: 'NewestBrowser/1.0' });
    expect(record.accesses[0].userAgent).toBe('Flood/2802');

    const pdf = await api('GET', `/api/purchases/${purchaseId}/evidence?format=pdf`, callers.owner);
    expect(pdf.status).toBe(200);
    const text = await pdfText(Buffer.from(await pdf.arrayBuffer()));
    expect(text).toContain('2,801 older entries are not listed');
    expect(text).toContain('Flood/3000');
    expect(text).not.toContain('Flood/2801');
  });
});
