/**
 * "Notify buyers" of a new version end to end over real HTTP (decisions §12, issue 15): a new version
 * uploaded and activated through the API, every eligible buyer emailed once by the notification
 * workflow with a fresh link to it and a one-click unsubscribe (page and RFC 8058 headers), progress
 * from the API, a second notify that sends nothing, and the organisation's rate bound. At moderate
 * scale (tens of buyers), so CI stays fast; the continue-as-new every 2000 recipients is not reached.
 */
import { randomBytes } from 'node:crypto';
import type { DevMail } from '../../src/dev/dev-mailbox';
import { noticeKeyPrefix, type NotificationProgress } from '../../src/services/version-notifications';
import { startHarness, type Harness } from '../helpers/harness';
import { insertPurchases } from '../helpers/bulk-purchases';
import { seedOrganisation, seedProduct, seedUser, type SeededProduct } from '../helpers/seed';
import { listen, seedPurchase, tokenOfLink } from '../helpers/download-links';
import { eventually } from '../helpers/webhooks';

const REJECTED = 'bounces@example.com';

/** One test world: a harness listening on a port, with its own notice rate. */
interface World {
  h: Harness;
  base: string;
}

async function startWorld(rate: number): Promise<World> {
  const h = await startHarness({
    env: { UPDATE_NOTICE_RATE: String(rate) },
    // The mail server refuses one buyer for good (550): that notice is counted failed, the rest go on.
    mailbox: { reject: { match: (address) => address === REJECTED, code: 550, message: 'No such user' } },
  });
  return { h, base: await listen(h) };
}

interface Org {
  orgId: string;
  name: string;
  owner: Record<string, string>;
}

async function freshOrg(w: World): Promise<Org> {
  const name = `Notices org ${randomBytes(4).toString('hex')}`;
  const org = await seedOrganisation(w.h, { name });
  return { orgId: org.orgId, name, owner: { authorization: `Bearer ${org.apiKey}` } };
}

async function api<T>(w: World, method: 'GET' | 'POST', path: string, headers: Record<string, string>): Promise<{ status: number; body: T }> {
  const res = await fetch(`${w.base}${path}`, { method, headers });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

interface Version {
  id: string;
  fileId: string;
  bytes: Buffer;
}

/** Uploads a version through the API, made active at once (`activate=true`). */
async function uploadVersion(w: World, org: Org, productId: string, label: string, activate = true): Promise<Version> {
  const bytes = Buffer.from(`${label} of the product, ${randomBytes(8).toString('hex')}\n`);
  const form = new FormData();
  form.append('version', label);
  form.append('activate', String(activate));
  form.append('file', new Blob([new Uint8Array(bytes)]), `ebook-${label}.txt`);
  const res = await fetch(`${w.base}/api/products/${productId}/versions`, { method: 'POST', headers: org.owner, body: form });
  expect(res.status).toBe(201);
  const version = (await res.json()) as { id: string; files: Array<{ id: string }> };
  return { id: version.id, fileId: version.files[0].id, bytes };
}

const notify = (w: World, org: Org, productId: string, versionId: string, headers = org.owner) =>
  api<NotificationProgress & { error?: string }>(w, 'POST', `/api/products/${productId}/versions/${versionId}/notify`, headers);

const notifications = (w: World, org: Org, productId: string, headers = org.owner) =>
  api<{ wouldEmail: number; notifications: NotificationProgress[] }>(w, 'GET', `/api/products/${productId}/notifications`, headers);

/** The notification's progress once it is done (the workflow finished). */
async function done(w: World, org: Org, productId: string, notificationId: string, timeoutMs = 60_000): Promise<NotificationProgress> {
  const progress = await eventually(async () => {
    const res = await notifications(w, org, productId);
    const found = res.body.notifications.find((n) => n.notificationId === notificationId);
    return found?.status === 'done' ? found : undefined;
  }, timeoutMs, `notification ${notificationId} to be done`);
  // Nothing of the run is still in flight.
  await w.h.temporal.workflow.getHandle(progress.workflowId).result();
  return progress;
}

const noticesOf = (w: World, productName: string, label: string): DevMail[] =>
  w.h.mailbox.messages().filter((m) => m.subject === `New version of ${productName}: ${label}`);

async function outboxRows(w: World, org: Org): Promise<number> {
  const [{ n }] = await w.h.orm.em.fork().execute<Array<{ n: string }>>('select count(*) as n from workflow_dispatch where organisation_id = ?', [org.orgId]);
  return Number(n);
}

interface Buyers {
  product: SeededProduct;
  productName: string;
  /** Email → purchase id, of every purchase of the product. */
  purchases: Map<string, string>;
  revoked: string;
  test: string;
  unsubscribed: string;
}

/**
 * `count` purchases of one product by as many customers (bulk SQL), then one revoked, one a test
 * purchase, one customer who turned update notices off earlier, and (if asked) the address the
 * mail server refuses. Another product's buyers are there too, and must hear nothing.
 */
async function seedBuyers(w: World, org: Org, count: number, options: { withRejected?: boolean } = {}): Promise<Buyers> {
  const productName = `Notified Ebook ${randomBytes(3).toString('hex')}`;
  const product = await seedProduct(w.h, org.orgId, { name: productName });
  const em = w.h.orm.em.fork();
  const tag = randomBytes(4).toString('hex');
  await insertPurchases(em, { orgId: org.orgId, productId: product.productId, versionId: product.versionId, count, customers: count, tag });
  if (options.withRejected) await seedPurchase(w.h, org.orgId, product, { email: REJECTED });
  const other = await seedProduct(w.h, org.orgId, { name: 'Some Other Product' });
  await insertPurchases(em, { orgId: org.orgId, productId: other.productId, versionId: other.versionId, count: 3, customers: 3, tag: `${tag}-other` });

  const rows = await em.execute<Array<{ email: string; id: string }>>(
    `select c.email, p.id from purchase p join customer c on c.id = p.customer_id where p.product_id = ? order by c.email`,
    [product.productId],
  );
  const purchases = new Map(rows.map((r) => [r.email, r.id]));
  const [revoked, test, unsubscribed] = rows.filter((r) => r.email.startsWith('bulk-')).map((r) => r.email);
  await em.execute(`update purchase set revoked_at = now(), revoke_reason = 'refund' where id = ?`, [purchases.get(revoked)]);
  await em.execute('update purchase set test = true where id = ?', [purchases.get(test)]);
  await em.execute('update customer set update_notices_off_at = now() where organisation_id = ? and email = ?', [org.orgId, unsubscribed]);
  return { product, productName, purchases, revoked, test, unsubscribed };
}

async function customerOf(w: World, org: Org, email: string): Promise<{ update_notices_off_at: Date | null; notice_token: string | null }> {
  const [row] = await w.h.orm.em.fork().execute<Array<{ update_notices_off_at: Date | null; notice_token: string | null }>>(
    'select update_notices_off_at, notice_token from customer where organisation_id = ? and email = ?', [org.orgId, email],
  );
  return row;
}

/** The download link of a notice, on the test's listening app (the email names SITE_URL). */
function linkOf(mail: DevMail): string {
  const match = /http:\/\/delivery\.test\/d\/[A-Za-z0-9_-]{20,}/.exec(mail.text);
  expect(match).not.toBeNull();
  expect(mail.html).toContain(`href="${match![0]}"`);
  return match![0];
}

describe('notify buyers of a new version', () => {
  let w: World;
  beforeAll(async () => {
    w = await startWorld(200);
  });
  afterAll(() => w?.h.close());

  test('each eligible buyer gets one notice with a fresh link to the new version; progress; once per version; unsubscribe honoured later', async () => {
    const org = await freshOrg(w);
    const buyers = await seedBuyers(w, org, 40, { withRejected: true });
    const { productId } = buyers.product;
    const excluded = [buyers.revoked, buyers.test, buyers.unsubscribed];
    const eligible = [...buyers.purchases.keys()].filter((email) => !excluded.includes(email));
    expect(eligible).toHaveLength(38); // 37 bulk buyers and the refused address

    const before = await notifications(w, org, productId);
    expect(before.status).toBe(200);
    expect(before.body).toEqual({ wouldEmail: 38, notifications: [] });

    const v2 = await uploadVersion(w, org, productId, '2.0.0');
    const started = await notify(w, org, productId, v2.id);
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ productId, versionId: v2.id, version: '2.0.0', total: 38 });
    expect(started.body.sent + started.body.failed + started.body.left).toBe(38);

    const progress = await done(w, org, productId, started.body.notificationId);
    expect(progress).toMatchObject({ notificationId: started.body.notificationId, status: 'done', total: 38, sent: 37, failed: 1, left: 0 });
    expect(progress.completedAt).not.toBeNull();

    // One notice per eligible buyer, each with its own Message-ID; none for the excluded or other buyers.
    const notices = noticesOf(w, buyers.productName, '2.0.0');
    expect(notices.map((m) => m.to).every((to) => to.length === 1)).toBe(true);
    expect(notices.map((m) => m.to[0]).sort()).toEqual(eligible.filter((e) => e !== REJECTED).sort());
    expect(new Set(notices.map((m) => m.messageId)).size).toBe(notices.length);
    for (const mail of notices) {
      expect(mail.messageId).toBe(`<update.${v2.id}.${buyers.purchases.get(mail.to[0])}@delivery.test>`);
      expect(mail.text).toContain(org.name);
    }
    const everyone = w.h.mailbox.messages().flatMap((m) => m.to);
    for (const email of excluded) expect(everyone).not.toContain(email);
    expect(everyone.some((to) => to.includes('-other-'))).toBe(false);
    expect(w.h.mailbox.rejections().filter((r) => r.address === REJECTED)).toHaveLength(1);

    // RFC 8058 headers, and the same link in the body.
    const mail = notices[0];
    const unsubscribe = /^<(http:\/\/delivery\.test\/unsubscribe\/([A-Za-z0-9_-]+))>$/.exec(mail.headers['list-unsubscribe']);
    expect(unsubscribe).not.toBeNull();
    expect(mail.headers['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');
    expect(mail.text).toContain(unsubscribe![1]);
    expect(mail.html).toContain(`href="${unsubscribe![1]}"`);
    for (const m of notices) expect(m.headers['list-unsubscribe']).toMatch(/^<http:\/\/delivery\.test\/unsubscribe\/[A-Za-z0-9_-]{16,}>$/);
    expect(new Set(notices.map((m) => m.headers['list-unsubscribe'])).size).toBe(notices.length);

    // The link downloads the NEW version's file.
    const token = tokenOfLink(linkOf(mail));
    const page = await fetch(`${w.base}/d/${token}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('Version 2.0.0');
    expect(html).toContain(`/d/${token}/files/${v2.fileId}`);
    expect(html).not.toContain(`/files/${buyers.product.fileId}`);
    const file = await fetch(`${w.base}/d/${token}/files/${v2.fileId}`);
    expect(file.status).toBe(200);
    expect(Buffer.from(await file.arrayBuffer()).equals(v2.bytes)).toBe(true);
    // The notified purchases are now of the new version; the excluded ones kept theirs.
    const versions = await w.h.orm.em.fork().execute<Array<{ id: string; version_id: string }>>(
      'select id, version_id from purchase where product_id = ?', [productId],
    );
    const versionOf = new Map(versions.map((r) => [r.id, r.version_id]));
    for (const email of eligible) expect(versionOf.get(buyers.purchases.get(email)!)).toBe(v2.id);
    for (const email of excluded) expect(versionOf.get(buyers.purchases.get(email)!)).toBe(buyers.product.versionId);

    // A second notify for the same version: the same notification, nothing new sent.
    const mails = w.h.mailbox.messages().length;
    const again = await notify(w, org, productId, v2.id);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ notificationId: started.body.notificationId, status: 'done', sent: 37, failed: 1, left: 0 });
    expect(await outboxRows(w, org)).toBe(0);
    expect(w.h.mailbox.messages().length).toBe(mails);

    // Unsubscribe: the page (GET) changes nothing; the one-click POST turns notices off, idempotently.
    const reader = mail.to[0];
    const path = new URL(unsubscribe![1]).pathname;
    const shown = await fetch(`${w.base}${path}`);
    expect(shown.status).toBe(200);
    const shownHtml = await shown.text();
    expect(shownHtml).toContain(org.name);
    expect(shownHtml).toContain(`<form method="post" action="${path}">`);
    expect((await customerOf(w, org, reader)).update_notices_off_at).toBeNull();
    const oneClick = () => fetch(`${w.base}${path}`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click',
    });
    const clicked = await oneClick();
    expect(clicked.status).toBe(200);
    expect(await clicked.text()).toContain('You will not get update emails any more');
    const off = (await customerOf(w, org, reader)).update_notices_off_at;
    expect(off).not.toBeNull();
    expect((await oneClick()).status).toBe(200);
    expect((await customerOf(w, org, reader)).update_notices_off_at).toEqual(off);
    expect(await (await fetch(`${w.base}${path}`)).text()).toContain('You will not get update emails any more');

    // Some mail clients post the one-click as multipart/form-data (RFC 8058 allows both).
    const second = notices.find((m) => m.to[0] !== reader)!;
    const secondPath = new URL(/^<(.+)>$/.exec(second.headers['list-unsubscribe'])![1]).pathname;
    const form = new FormData();
    form.append('List-Unsubscribe', 'One-Click');
    const multipart = await fetch(`${w.base}${secondPath}`, { method: 'POST', body: form });
    expect(multipart.status).toBe(200);
    expect((await customerOf(w, org, second.to[0])).update_notices_off_at).not.toBeNull();

    // An unknown token: 404 page, nothing changed.
    expect((await fetch(`${w.base}/unsubscribe/${'x'.repeat(32)}`)).status).toBe(404);
    expect((await fetch(`${w.base}/unsubscribe/${'x'.repeat(32)}`, { method: 'POST', body: 'List-Unsubscribe=One-Click' })).status).toBe(404);

    // A later version: those two are skipped now, everyone else hears once more.
    expect((await notifications(w, org, productId)).body.wouldEmail).toBe(36);
    const v3 = await uploadVersion(w, org, productId, '3.0.0');
    const [first, concurrent] = await Promise.all([notify(w, org, productId, v3.id), notify(w, org, productId, v3.id)]);
    expect([first.status, concurrent.status].sort()).toEqual([200, 202]);
    expect(concurrent.body.notificationId).toBe(first.body.notificationId);
    const later = await done(w, org, productId, first.body.notificationId);
    expect(later).toMatchObject({ total: 36, sent: 35, failed: 1, left: 0, version: '3.0.0' });
    const laterNotices = noticesOf(w, buyers.productName, '3.0.0');
    expect(laterNotices.map((m) => m.to[0]).sort()).toEqual(eligible.filter((e) => ![REJECTED, reader, second.to[0]].includes(e)).sort());

    const list = (await notifications(w, org, productId)).body.notifications;
    expect(list.map((n) => [n.version, n.status, n.sent, n.failed, n.left])).toEqual([['3.0.0', 'done', 35, 1, 0], ['2.0.0', 'done', 37, 1, 0]]);
  });

  test('only the active version can be announced (409), an unknown one is 404, and members may watch but not notify (403)', async () => {
    const org = await freshOrg(w);
    const buyers = await seedBuyers(w, org, 5);
    const { productId, versionId: v1 } = buyers.product;
    const v2 = await uploadVersion(w, org, productId, '2.0.0', false);

    // v1 is active: v2 (uploaded, not activated) cannot be announced.
    const inactive = await notify(w, org, productId, v2.id);
    expect(inactive.status).toBe(409);
    const other = await seedProduct(w.h, org.orgId);
    expect((await notify(w, org, other.productId, v2.id)).status).toBe(404);
    expect((await notify(w, org, productId, '00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await notify(w, org, productId, 'not-a-uuid')).status).toBe(404);
    const stranger = await freshOrg(w);
    expect((await notify(w, stranger, productId, v1)).status).toBe(404);

    const member = await seedUser(w.h, org.orgId, 'member');
    const auth = { authorization: `Bearer ${member.apiKey}` };
    expect((await notify(w, org, productId, v1, auth)).status).toBe(403);
    const watched = await notifications(w, org, productId, auth);
    expect(watched.status).toBe(200);
    expect(watched.body).toEqual({ wouldEmail: 2, notifications: [] });
    expect(await outboxRows(w, org)).toBe(0);
    const [{ n }] = await w.h.orm.em.fork().execute<Array<{ n: string }>>('select count(*) as n from version_notification where organisation_id = ?', [org.orgId]);
    expect(Number(n)).toBe(0);
    expect(noticesOf(w, buyers.productName, '2.0.0')).toHaveLength(0);
    expect(noticesOf(w, buyers.productName, '1.0.0')).toHaveLength(0);
  });
});

/**
 * When each notice's send began, by the service's own record: the database's clock when the send
 * claimed its sent-email row, right after its slot came. Arrival at the mail server is not the
 * measure: a message's time on the wire varies, the more so on a loaded machine, and messages in
 * flight through a stall all arrive at once however their sends were spaced.
 */
async function sendStarts(w: World, versionId: string): Promise<number[]> {
  const rows = await w.h.orm.em.fork().execute<Array<{ at: Date }>>(
    'select created_at as at from sent_email where business_key like ? order by created_at',
    [`${noticeKeyPrefix(versionId)}%`],
  );
  return rows.map((row) => new Date(row.at).getTime());
}

/**
 * The most sends begun in any 1-second window: the bound the service enforces, not a speed target.
 * At 5/s the sends begin 200 ms apart (a few senders side by side, each waiting for its slot);
 * a claim recorded late may land beside the next one, hence 5 plus 2. Unpaced, the five senders
 * would begin all 15 within a second.
 */
function busiestSecond(starts: number[]): number {
  return Math.max(...starts.map((start) => starts.filter((t) => t >= start && t < start + 1000).length));
}

describe('the rate bound (UPDATE_NOTICE_RATE=5)', () => {
  let w: World;
  beforeAll(async () => {
    w = await startWorld(5);
  });
  afterAll(() => w?.h.close());

  /**
   * 15 eligible buyers of a new product notified of its version 2.0.0, each emailed once;
   * `whileSending` runs once the first notice is in. Returns when each send began.
   */
  async function notifyFifteen(whileSending: () => void = () => undefined): Promise<number[]> {
    const org = await freshOrg(w);
    const buyers = await seedBuyers(w, org, 18); // 15 eligible
    const v2 = await uploadVersion(w, org, buyers.product.productId, '2.0.0');
    const started = await notify(w, org, buyers.product.productId, v2.id);
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ total: 15, status: 'running', sent: 0, failed: 0, left: 15 });
    await w.h.mailbox.waitFor((m) => m.subject === `New version of ${buyers.productName}: 2.0.0`, 30_000);
    whileSending();
    const progress = await done(w, org, buyers.product.productId, started.body.notificationId);
    expect(progress).toMatchObject({ sent: 15, failed: 0, left: 0 });
    expect(noticesOf(w, buyers.productName, '2.0.0')).toHaveLength(15);
    const starts = await sendStarts(w, v2.id);
    expect(starts).toHaveLength(15);
    return starts;
  }

  test('no more than 5 notices (plus 2) begin within any second', async () => {
    const starts = await notifyFifteen();
    expect(busiestSecond(starts)).toBeLessThanOrEqual(7);
    // Over the whole run too: the 15th begins 14 spacings (2.8 s) after the 1st.
    expect(starts[starts.length - 1] - starts[0]).toBeGreaterThanOrEqual(2_300);
  });

  test('a newer version made active stops the notices of the one before: nobody is moved back to it', async () => {
    const org = await freshOrg(w);
    const buyers = await seedBuyers(w, org, 33); // 30 eligible: 6 s of notices at 5 a second
    const v2 = await uploadVersion(w, org, buyers.product.productId, '2.0.0');
    const started = await notify(w, org, buyers.product.productId, v2.id);
    expect(started.status).toBe(202);
    await w.h.mailbox.waitFor((m) => m.subject === `New version of ${buyers.productName}: 2.0.0`, 30_000);
    const v3 = await uploadVersion(w, org, buyers.product.productId, '3.0.0');
    const progress = await done(w, org, buyers.product.productId, started.body.notificationId);
    const announced = noticesOf(w, buyers.productName, '2.0.0').length;
    expect(announced).toBeLessThan(20);
    expect(progress.sent).toBe(announced);
    const [{ n }] = await w.h.orm.em.fork().execute<Array<{ n: string }>>('select count(*) as n from purchase where version_id = ?', [v2.id]);
    expect(Number(n)).toBe(announced);
    // A sale after the newer version is on it, and stays there.
    const late = await seedPurchase(w.h, org.orgId, { productId: buyers.product.productId, versionId: v3.id });
    const [{ version_id: version }] = await w.h.orm.em.fork().execute<Array<{ version_id: string }>>('select version_id from purchase where id = ?', [late.purchaseId]);
    expect(version).toBe(v3.id);
  });

  test('a stall of the sending process (a long GC pause, a starved CPU) does not let the waiting notices out at once', async () => {
    // The worker runs in this process: blocking it for 1.5 s while four senders wait for their slots
    // makes every one of those slots pass. Sent the moment they wake, they would begin together.
    const starts = await notifyFifteen(() => {
      const until = Date.now() + 1_500;
      while (Date.now() < until) {
        // the whole process stands still, the worker's senders included
      }
    });
    expect(busiestSecond(starts)).toBeLessThanOrEqual(7);
  });
});
